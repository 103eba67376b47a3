import CDBus

#if canImport(Glibc)
import Glibc
#endif

/// Messages that leave together, written to the bus socket in one `send`.
///
/// libdbus writes every message with a system call of its own. A change's reply and the
/// `Changed` after it then cost the server two writes, each waking the bus, and the bus two
/// reads and two rounds of its loop; a batch of sixteen answers, sixteen of each. Written
/// together, they cost one of each (the bus reads what has come, up to its buffer, at once).
/// A message kept as its bytes (``WireMessage``) is written here alone too: it then skips
/// libdbus's lock, queue and copy of it, and is never read back.
///
/// Only where nothing can come out of order or half-written (``EventLoop`` checks the
/// connection's side: on its thread, authenticated, nothing held for `Hello`, nothing queued
/// in libdbus, so that no byte of libdbus's can be between ours or after them unsent):
/// - no method call libdbus made (one kept as its bytes is numbered here, and its reply
///   awaited under that serial: ``EventLoop/writeAlone(_:)``), no message numbered already,
///   and none carrying descriptors (they travel beside the bytes);
/// - at most ``maximumBytes`` in all, and less than half the socket's send buffer, which the
///   kernel then takes into one buffer: a unix stream socket sends one buffer whole or not at
///   all (refused for want of room, the write leaves nothing behind, and libdbus sends them).
///
/// What is not written here (``write(_:to:serial:)`` says how many it wrote) libdbus sends one
/// by one.
///
/// The serials come from the connection's one sequence (``ConnectionState/nextSerial()``), as
/// those of the messages libdbus writes do: they rise in the order messages leave, whichever
/// way they take.
struct GatheredWrite {
    /// The most bytes written at once: one buffer of the kernel's (a unix stream socket cuts
    /// a write into buffers of about 32 KiB plus a page).
    static let maximumBytes = 32 * 1024

    /// The socket's send buffer (`SO_SNDBUF`), read once: nothing here changes it.
    private var sendBuffer: Int32 = 0

    /// The bytes of the last write, kept for the next one's.
    private var buffer: [UInt8] = []
    /// Where each message of the last write began in ``buffer``.
    private var starts: [Int] = []

    /// Writes the first of `messages` to `socket` in one `send`: as many as are for this path
    /// and fit in ``maximumBytes``, at least two, or one kept as its bytes (``WireMessage``),
    /// each numbered by `serial`. Returns how many it wrote; 0, with nothing written, when they
    /// are not for this path or the socket cannot take them now.
    mutating func write(_ messages: ArraySlice<Message>, to socket: Int32, serial: () -> UInt32) -> Int {
        buffer.removeAll(keepingCapacity: true)
        starts.removeAll(keepingCapacity: true)
        for message in messages {
            let start = buffer.count
            if let wire = message.unreadWire {
                guard start + wire.bytes.count <= Self.maximumBytes else { break }
                buffer.append(contentsOf: wire.bytes)
            } else {
                guard append(message.raw) else { break }
            }
            starts.append(start)
        }
        let wholeMessage = starts.count == 1 && messages.first?.unreadWire != nil
        guard starts.count >= 2 || wholeMessage, fitsOneBuffer(buffer.count, socket) else { return 0 }

        buffer.withUnsafeMutableBytes { bytes in
            for start in starts { Self.number(bytes.baseAddress! + start, serial()) }
        }
        let written = buffer.withUnsafeBytes { bytes in
            Glibc.send(socket, bytes.baseAddress, bytes.count, Int32(MSG_NOSIGNAL) | Int32(MSG_DONTWAIT))
        }
        // Refused (no room, the bus gone): nothing was written, and libdbus sends them.
        guard written > 0 else { return 0 }
        if written < buffer.count {
            // One buffer is sent whole or not at all. Should the kernel ever cut it, the stream
            // cannot be mended without waiting here, on the loop: the bus is to drop the
            // connection rather than read a message cut short.
            shutdown(socket, Int32(SHUT_RDWR))
        }
        return starts.count
    }

    /// Appends the bytes of a message libdbus made (`dbus_message_marshal`), if it is for this
    /// path and fits.
    private mutating func append(_ raw: OpaquePointer) -> Bool {
        guard dbus_message_get_type(raw) != DBUS_MESSAGE_TYPE_METHOD_CALL, dbus_message_get_serial(raw) == 0,
              dbus_message_contains_unix_fds(raw) == 0 else { return false }
        var bytes: UnsafeMutablePointer<CChar>?
        var count: Int32 = 0
        guard dbus_message_marshal(raw, &bytes, &count) != 0, let bytes else { return false }
        defer { dbus_free(bytes) }
        guard count >= 16, buffer.count + Int(count) <= Self.maximumBytes else { return false }
        buffer.append(contentsOf: UnsafeRawBufferPointer(start: bytes, count: Int(count)))
        return true
    }

    /// Whether the kernel takes `count` bytes written to `socket` as one buffer: a unix stream
    /// socket cuts a write into buffers of at most half its send buffer (less 64 bytes).
    private mutating func fitsOneBuffer(_ count: Int, _ socket: Int32) -> Bool {
        if sendBuffer == 0 {
            var size: Int32 = 0
            var length = socklen_t(MemoryLayout<Int32>.size)
            guard getsockopt(socket, SOL_SOCKET, SO_SNDBUF, &size, &length) == 0, size > 0 else { return false }
            sendBuffer = size
        }
        return count <= Int(sendBuffer) / 2 - 256
    }

    /// Puts `serial` in a marshalled message's header (bytes 8 to 11, in its byte order).
    private static func number(_ raw: UnsafeMutableRawPointer, _ serial: UInt32) {
        let bigEndian = raw.load(as: UInt8.self) == UInt8(ascii: "B")
        raw.storeBytes(of: bigEndian ? serial.bigEndian : serial.littleEndian, toByteOffset: 8, as: UInt32.self)
    }
}
