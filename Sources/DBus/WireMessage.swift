import CDBus

/// A reply or signal this module wrote in the wire format itself, kept as its bytes: written
/// to the bus socket as they are (``GatheredWrite``), never read back by libdbus unless
/// something asks for the libdbus message (``Message/raw``).
///
/// Reading bytes back (`dbus_message_demarshal`) makes libdbus validate the whole message, and
/// sending through libdbus takes its connection's lock, its queue and a copy of the message
/// (`dbus_message_marshal`): together more than writing the bytes cost for a small reply. The
/// bytes need no validation of libdbus's when nothing in them can be invalid, which
/// ``trusts(_:)`` decides before a message is made this way:
/// - the header holds what was checked before it was written: a path, interface and member
///   validated by ``Message``'s makers, a destination that is the caller's unique name as the
///   bus gave it, the reply serial, and the signature the writer derives from the values;
/// - the body holds only values that cannot be invalid once written: numbers, booleans, bytes,
///   strings (Swift's are valid UTF-8; one holding a NUL is refused by ``WireWriter``) and
///   arrays of strings. No object path, signature or variant (their text could be malformed), no
///   descriptor, no container whose element signature is given as text.
///
/// The bytes are in little-endian order, with serial 1: ``GatheredWrite`` writes the serial of
/// each message as it sends it.
struct WireMessage: Sendable {
    let bytes: [UInt8]

    /// The message's type (`DBUS_MESSAGE_TYPE_*`).
    var type: Int32 { Int32(bytes[1]) }

    /// Whether `arguments` make a valid body whatever their contents (see above).
    static func trusts(_ arguments: [DBusValue]) -> Bool {
        arguments.allSatisfy { value in
            switch value {
            case .byte, .boolean, .int16, .uint16, .int32, .uint32, .int64, .uint64, .double, .string, .bytes:
                true
            case .array(let element, let elements):
                element == "s" && elements.allSatisfy { if case .string = $0 { true } else { false } }
            default:
                false
            }
        }
    }

    /// The bytes read back by libdbus, as a message with no serial (the connection gives one
    /// as it sends it); nil if libdbus refuses them.
    func readBack() -> OpaquePointer? {
        var error = CDBus.DBusError()
        dbus_error_init(&error)
        defer { dbus_error_free(&error) }
        let read = bytes.withUnsafeBufferPointer { buffer in
            buffer.withMemoryRebound(to: CChar.self) { dbus_message_demarshal($0.baseAddress, Int32($0.count), &error) }
        }
        guard let read else { return nil }
        dbus_message_set_serial(read, 0)
        return read
    }

    /// Whether libdbus accepts the bytes: checked as each is made in debug builds, so that the
    /// tests, which make every kind the server sends, catch a writer that goes wrong.
    var isValid: Bool {
        guard let read = readBack() else { return false }
        dbus_message_unref(read)
        return true
    }
}
