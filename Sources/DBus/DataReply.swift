import CDBus

#if canImport(Glibc)
import Glibc
#endif

/// A reply of a number and bytes (`tay`, as `ReadData` answers), written into one exactly
/// sized buffer and sent as it is (``WireMessage``).
///
/// Appending through libdbus's iterators rewrites the header's signature after every
/// top-level argument: 3 µs for a `tay` reply of 100 bytes, against 1.3 µs for an `ay` alone.
/// The general writer of ``WireMarshalling`` avoids that, but spends about as much again in
/// Swift building the header's strings, the signature and a growing array. Here the layout is
/// fixed: the header holds the reply serial, the destination (the caller's unique name) and
/// the signature; the body the number, then the bytes, which cannot make the message invalid.
enum DataReply {
    /// The largest `ay` written this way; a larger reply goes through the general paths.
    static let maximumBytes = WireMarshalling.maximumBodySize

    /// The reply to `call` carrying `count` and `bytes`; nil for bytes over ``maximumBytes`` (the
    /// caller then builds it the general way).
    static func message(replyingTo call: OpaquePointer, count: UInt64, bytes: [UInt8]) -> Message? {
        guard bytes.count <= maximumBytes else { return nil }
        let sender = dbus_message_get_sender(call)
        let senderLength = sender.map { strlen($0) } ?? 0
        let signature: StaticString = "tay"

        // The header: 16 fixed bytes, then the fields (each aligned to 8) in the order
        // `dbus_message_new_method_return` writes them: destination, reply serial, signature.
        var fieldsLength = 0
        if sender != nil { fieldsLength = align8(4 + 4 + senderLength + 1) }   // code, "s", length, text, NUL
        fieldsLength += 8                                                       // code, "u", the serial
        fieldsLength += 4 + 1 + signature.utf8CodeUnitCount + 1                 // code, "g", length, text, NUL
        let bodyStart = align8(16 + fieldsLength)
        let bodyLength = 8 + 4 + bytes.count
        let total = bodyStart + bodyLength

        let wire = [UInt8](unsafeUninitializedCapacity: total) { buffer, initialized in
            let base = UnsafeMutableRawPointer(buffer.baseAddress!)
            memset(base, 0, bodyStart)
            base.storeBytes(of: UInt8(ascii: "l"), toByteOffset: 0, as: UInt8.self)
            base.storeBytes(of: UInt8(DBUS_MESSAGE_TYPE_METHOD_RETURN), toByteOffset: 1, as: UInt8.self)
            base.storeBytes(of: UInt8(DBUS_HEADER_FLAG_NO_REPLY_EXPECTED), toByteOffset: 2, as: UInt8.self)
            base.storeBytes(of: UInt8(1), toByteOffset: 3, as: UInt8.self)
            base.storeBytes(of: UInt32(bodyLength).littleEndian, toByteOffset: 4, as: UInt32.self)
            // Serial 1, as every WireMessage has: the connection writes the real one as it sends.
            base.storeBytes(of: UInt32(1).littleEndian, toByteOffset: 8, as: UInt32.self)
            base.storeBytes(of: UInt32(fieldsLength).littleEndian, toByteOffset: 12, as: UInt32.self)

            var offset = 16
            func fieldCode(_ code: Int32, _ type: UInt8) {
                offset = align8(offset)
                base.storeBytes(of: UInt8(code), toByteOffset: offset, as: UInt8.self)
                base.storeBytes(of: UInt8(1), toByteOffset: offset + 1, as: UInt8.self)
                base.storeBytes(of: type, toByteOffset: offset + 2, as: UInt8.self)
                offset += 4
            }
            if let sender {
                fieldCode(DBUS_HEADER_FIELD_DESTINATION, UInt8(ascii: "s"))
                base.storeBytes(of: UInt32(senderLength).littleEndian, toByteOffset: offset, as: UInt32.self)
                memcpy(base + offset + 4, sender, senderLength)
                offset += 4 + senderLength + 1
            }
            fieldCode(DBUS_HEADER_FIELD_REPLY_SERIAL, UInt8(ascii: "u"))
            base.storeBytes(of: dbus_message_get_serial(call).littleEndian, toByteOffset: offset, as: UInt32.self)
            offset += 4
            fieldCode(DBUS_HEADER_FIELD_SIGNATURE, UInt8(ascii: "g"))
            base.storeBytes(of: UInt8(signature.utf8CodeUnitCount), toByteOffset: offset, as: UInt8.self)
            memcpy(base + offset + 1, signature.utf8Start, signature.utf8CodeUnitCount)

            base.storeBytes(of: count.littleEndian, toByteOffset: bodyStart, as: UInt64.self)
            base.storeBytes(of: UInt32(bytes.count).littleEndian, toByteOffset: bodyStart + 8, as: UInt32.self)
            bytes.withUnsafeBytes { source in
                if let start = source.baseAddress { memcpy(base + bodyStart + 12, start, source.count) }
            }

            initialized = total
        }
        return Message(wire: WireMessage(bytes: wire))
    }

    private static func align8(_ offset: Int) -> Int {
        (offset + 7) & ~7
    }
}
