import CDBus

/// Makes a message of several arguments by writing its bytes here, instead of appending the
/// arguments one by one through libdbus; a message of values that cannot be invalid is then
/// sent as these bytes (``WireMessage``), anything else handed to libdbus once
/// (`dbus_message_demarshal`).
///
/// libdbus rewrites the header's signature field after every top-level argument appended
/// through its iterators, by its general code for replacing a field of any size: 2–4 µs for
/// each argument after the first. Built that way, a `WriteItems` call (three arguments, two of
/// them containers) took 9.3 µs and a `ReadData` call (four) 10 µs, against 1.2 µs for a call
/// without arguments (best of 20 rounds of 10,000 on this project's 2-core machine). Written
/// here and read back by libdbus, which validates the whole message as it does every message
/// it receives, they take 5.3 and 4.5 µs; a `t, ay` reply 2.7 µs instead of 3.3.
///
/// Tried for messages of two or more arguments, and for messages whose bytes are kept: a
/// single argument appended costs libdbus little. ``message(_:arguments:)`` refuses, before
/// copying it, a body over ``maximumBodySize`` (a large body mostly costs copying, which this
/// path does twice) and any descriptor (descriptors travel beside the bytes). Whatever this
/// path refuses, or libdbus rejects, is built through the iterators instead, whose errors say
/// what was wrong.
enum WireMarshalling {
    /// The largest body, in bytes, for which this path is used.
    static let maximumBodySize = 16 * 1024
    /// Room for the header's names and signature; a header with a longer object path goes
    /// through the iterators.
    static let maximumHeaderSize = 2 * 1024

    /// The header of a message: what libdbus's `dbus_message_new_*` would put there.
    struct Header {
        var type: Int32
        var path: String?
        var interface: String?
        var member: String?
        var destination: String?
        /// For a reply: the serial of the call it answers.
        var replySerial: UInt32?
        /// The flag `NO_REPLY_EXPECTED` (`dbus_message_set_no_reply`).
        var noReply = false
        /// The flag `NO_AUTO_START` (`dbus_message_set_auto_start(false)`).
        var noAutoStart = false

        /// The header `dbus_message_new_method_call` makes, with the flags given.
        static func methodCall(destination: String?, path: String, interface: String?, member: String, noReply: Bool = false, autoStart: Bool = true) -> Header {
            Header(type: DBUS_MESSAGE_TYPE_METHOD_CALL, path: path, interface: interface, member: member, destination: destination,
                   noReply: noReply, noAutoStart: !autoStart)
        }

        /// The header's flags byte.
        var flags: UInt8 {
            (noReply ? 0x1 : 0) | (noAutoStart ? 0x2 : 0)
        }

        /// The header `dbus_message_new_signal` makes.
        static func signal(path: String, interface: String, member: String) -> Header {
            Header(type: DBUS_MESSAGE_TYPE_SIGNAL, path: path, interface: interface, member: member, noReply: true)
        }

        /// The header `dbus_message_new_method_return` makes for `call`.
        static func reply(to call: OpaquePointer) -> Header {
            Header(type: DBUS_MESSAGE_TYPE_METHOD_RETURN, destination: dbus_message_get_sender(call).map { String(cString: $0) },
                   replySerial: dbus_message_get_serial(call), noReply: true)
        }
    }

    /// A new message with `header` and `arguments`, with no serial (the connection gives one
    /// as it sends it): kept as its bytes when they cannot be invalid (``WireMessage``), else
    /// read back by libdbus. Nil when the arguments are not for this path (a single argument
    /// that is not kept as its bytes costs libdbus little through its iterators), or libdbus
    /// rejects the bytes.
    static func message(_ header: Header, arguments: [DBusValue]) -> Message? {
        let signature = arguments.reduce(into: "") { $0 += $1.signature }
        let keepsBytes = WireMessage.trusts(arguments, signature: signature)
        guard keepsBytes || arguments.count >= 2 else { return nil }
        var writer = WireWriter(limit: maximumHeaderSize + maximumBodySize)
        guard writeHeader(header, signature: signature, into: &writer) else { return nil }
        let bodyStart = writer.bytes.count
        for argument in arguments {
            guard writer.put(argument), writer.bytes.count - bodyStart <= maximumBodySize else { return nil }
        }
        writer.patch(UInt32(writer.bytes.count - bodyStart), at: 4)
        let wire = WireMessage(bytes: writer.bytes, callDestination: header.type == DBUS_MESSAGE_TYPE_METHOD_CALL ? header.destination : nil)
        if keepsBytes { return Message(wire: wire) }
        return wire.readBack().map { Message(taking: $0) }
    }

    /// The fixed part, then the fields, padded to 8 for the body that follows; the body's
    /// length is patched in once it is written.
    private static func writeHeader(_ header: Header, signature: String, into writer: inout WireWriter) -> Bool {
        writer.append(contentsOf: [UInt8(ascii: "l"), UInt8(truncatingIfNeeded: header.type), header.flags, 1])
        writer.put(UInt32(0))  // the body's length
        writer.put(UInt32(1))  // the serial, cleared once read back
        writer.put(UInt32(0))  // the fields' length, patched below
        writer.align(8)
        let start = writer.bytes.count
        // The fields in the order libdbus writes them.
        func field(_ code: UInt8, _ value: String?) -> Bool {
            guard let value else { return true }
            writer.align(8)
            writer.append(contentsOf: [code, 1, code == 1 ? UInt8(ascii: "o") : UInt8(ascii: "s"), 0])
            return writer.putString(value)
        }
        guard field(1, header.path), field(6, header.destination), field(2, header.interface), field(3, header.member) else { return false }
        if let replySerial = header.replySerial {
            writer.align(8)
            writer.append(contentsOf: [5, 1, UInt8(ascii: "u"), 0])
            writer.put(replySerial)
        }
        if !signature.isEmpty {
            writer.align(8)
            writer.append(contentsOf: [8, 1, UInt8(ascii: "g"), 0])
            guard writer.putSignature(signature) else { return false }
        }
        writer.patch(UInt32(writer.bytes.count - start), at: 12)
        writer.align(8)
        return true
    }
}
