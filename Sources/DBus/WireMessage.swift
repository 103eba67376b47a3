import CDBus

/// A message this module wrote in the wire format itself, kept as its bytes: written to the
/// bus socket as they are (``GatheredWrite``), never read back by libdbus unless something
/// asks for the libdbus message (``Message/raw``).
///
/// Reading bytes back (`dbus_message_demarshal`) makes libdbus validate the whole message, and
/// sending through libdbus takes its connection's lock, its queue and a copy of the message
/// (`dbus_message_marshal`): together more than writing the bytes cost for a small message.
/// The bytes need no validation of libdbus's when nothing in them can be invalid, which
/// ``trusts(_:signature:)`` decides before a message is made this way:
/// - the header holds what was checked before it was written: a path, interface, member and
///   destination validated by ``Message``'s makers (a reply's destination is the caller's
///   unique name as the bus gave it), the reply serial, and the signature the writer derives
///   from the values;
/// - the body holds only values that cannot be invalid once written: numbers, booleans, bytes,
///   strings (Swift's are valid UTF-8; one holding a NUL is refused by ``WireWriter``), valid
///   object paths, and containers of them whose signature libdbus accepts (a short one, so
///   that no nesting comes near the format's limits, every array's element signature one
///   complete type), with variants only of plain values or bytes. No signature value, no
///   descriptor.
///
/// The bytes are in little-endian order, with serial 1, and stay so: ``GatheredWrite`` numbers
/// the copy it writes. A method call kept this way is numbered there too, and its
/// reply matched by that serial (``ConnectionState``).
struct WireMessage: Sendable {
    let bytes: [UInt8]
    /// The destination a method call was made for, kept beside its bytes: a call's destination
    /// is asked for as it starts, which must not make libdbus read the message back. Nil for
    /// the replies and signals written elsewhere (``DataReply``, ``CountedMessage``), whose
    /// destination nothing asks for before they leave.
    let callDestination: String?

    init(bytes: [UInt8], callDestination: String? = nil) {
        self.bytes = bytes
        self.callDestination = callDestination
    }

    /// The message's type (`DBUS_MESSAGE_TYPE_*`).
    var type: Int32 { Int32(bytes[1]) }

    /// The longest body signature of containers or variants kept as written: the format allows
    /// 32 nested arrays, 32 nested structures and 64 containers in all, variants' contents
    /// included, which a signature this short (and variants of plain values) cannot come near.
    static let maximumNestedSignature = 32

    /// Whether `arguments`, whose body signature is `signature`, make a valid body whatever
    /// their contents (see above).
    static func trusts(_ arguments: [DBusValue], signature: String) -> Bool {
        var containers = false, checked = false
        for code in signature.utf8 {
            switch code {
            case UInt8(ascii: "a"), UInt8(ascii: "("), UInt8(ascii: "{"): containers = true
            case UInt8(ascii: "o"), UInt8(ascii: "v"), UInt8(ascii: "g"), UInt8(ascii: "h"): checked = true
            default: break
            }
        }
        // Plain values alone make a valid signature, as long as the header can hold it.
        guard containers || checked else { return signature.utf8.count <= 255 }
        guard signature.utf8.count <= maximumNestedSignature, !signature.utf8.contains(0), arguments.allSatisfy(isSafe) else { return false }
        return dbus_signature_validate(signature, nil) != 0
    }

    /// Whether a value is one a kept message may carry (see ``trusts(_:signature:)``).
    private static func isSafe(_ value: DBusValue) -> Bool {
        switch value {
        case .unixFD, .signature: false
        case .objectPath(let path): ObjectPath.isValid(path)
        case .variant(let inner):
            switch inner {
            case .array, .dictEntry, .structure, .variant, .unixFD, .signature: false
            default: isSafe(inner)
            }
        case .array(let element, let elements):
            // The element's signature must be one complete type: the writer checks every
            // element against it, but an empty array's would go unchecked (`sx` would leave
            // the body a value short). Elements of a one-letter type need no more, but for
            // object paths and variants, looked at one by one; containers are looked at one by
            // one too, since the writer matches a nested array's element signature only as
            // part of its own (`a(aii)` holding an array of `ii`).
            Signature.isValidArrayElement(element) && (element.utf8.count == 1 && !"ovgh".utf8.contains(element.utf8.first!) || elements.allSatisfy(isSafe))
        case .dictEntry(let key, let entryValue): isSafe(key) && isSafe(entryValue)
        case .structure(let fields): !fields.isEmpty && fields.allSatisfy(isSafe)
        default: true
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
