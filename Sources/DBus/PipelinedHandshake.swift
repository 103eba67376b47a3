import CDBus

#if canImport(Glibc)
import Glibc
#endif

/// The bus handshake sent in one write, for a connection that does not wait for `Hello`'s
/// answer (`Connection.connect(address:awaitingName: false)`).
///
/// libdbus authenticates in turns: `AUTH EXTERNAL`, then after the bus's `OK`,
/// `NEGOTIATE_UNIX_FD`, then after its `AGREE_UNIX_FD`, `BEGIN`. That is two round trips to the
/// bus before the first message may leave, most of what a short-lived client such as `pbctl`
/// waits for. The protocol lets a client send all three lines at once, as sd-bus does, but
/// libdbus can neither do that nor take over a socket someone else authenticated. So:
///
/// 1. the bus socket is connected here, and the three lines sent at once without waiting;
/// 2. libdbus connects to a stand-in, an abstract socket of this process whose answers (`OK`,
///    `AGREE_UNIX_FD`) are written before libdbus asks, so its handshake waits for nothing;
/// 3. the bus socket then takes the place of libdbus's (`dup3` onto its descriptor), so that
///    what libdbus sends next (`Hello`, the first call) follows the handshake at once.
///
/// The bus's own answers come back ahead of the first replies. ``HandshakeAnswers`` takes them
/// off the socket before libdbus reads it (the event loop asks it first), and a bus that
/// refuses ends the connection with the reason. Only a plain `unix:path=` or `unix:abstract=`
/// address of a bus run by this user is taken this way; for any other, or if anything fails
/// before a message has gone to the bus, `open` returns nil and the connection is made the
/// usual way.
enum PipelinedHandshake {

    /// A libdbus connection whose handshake with the bus went out in one write, and the bus's
    /// answers still to be read; nil when the usual way must be taken instead (see above).
    static func open(address: String) -> (raw: OpaquePointer, answers: HandshakeAnswers)? {
        guard let bus = UnixSocketAddress(parsing: address) else { return nil }
        let socket = Glibc.socket(AF_UNIX, Int32(SOCK_STREAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0)
        guard socket >= 0 else { return nil }
        // Closed on the way out in any case: once it has taken libdbus's place, that copy is
        // the one that counts.
        defer { close(socket) }
        // Whether there is a bus at all is for the usual way to say, in libdbus's words. A bus
        // running as another user (a system bus, a socket passed into a container) may take
        // other mechanisms than EXTERNAL, which libdbus then tries in turn.
        guard bus.connect(socket), cdbus_peer_uid(socket) == geteuid() else { return nil }
        let lines = [0] + Array("AUTH EXTERNAL \(hexadecimal(String(geteuid())))\r\nNEGOTIATE_UNIX_FD\r\nBEGIN\r\n".utf8)
        guard UnixFileDescriptor.writeAll(socket, lines[...], socket: true) == 0, cdbus_fcntl_int(socket, F_SETFL, cdbus_fcntl(socket, F_GETFL) | O_NONBLOCK) == 0,
              let raw = authenticatedAgainstStandIn(guid: bus.guid)
        else { return nil }
        // libdbus's socket becomes the bus's: same descriptor number, so its watches still hold.
        var descriptor: Int32 = -1
        guard dbus_connection_get_socket(raw, &descriptor) != 0, descriptor >= 0, dup3(socket, descriptor, O_CLOEXEC) >= 0 else {
            dbus_connection_close(raw)
            dbus_connection_unref(raw)
            return nil
        }
        return (raw, HandshakeAnswers(guid: bus.guid))
    }

    /// A libdbus connection authenticated against a stand-in in this process that answers at
    /// once, with `guid` when the address names one (``HandshakeAnswers`` checks the bus's).
    private static func authenticatedAgainstStandIn(guid: String?) -> OpaquePointer? {
        let listener = Glibc.socket(AF_UNIX, Int32(SOCK_STREAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue) | Int32(SOCK_NONBLOCK.rawValue), 0)
        guard listener >= 0 else { return nil }
        defer { close(listener) }
        let name = "pasteboardd-handshake-\(getpid())-\(String(UInt64.random(in: .min ... .max), radix: 16))"
        let standIn = UnixSocketAddress(path: Array(name.utf8), abstract: true, guid: nil)
        // A backlog of all the kernel allows: libdbus connects in blocking mode, and the name
        // can be read from /proc/net/unix by anyone, who must not be able to fill the queue.
        guard standIn.bind(listener), listen(listener, SOMAXCONN) == 0 else { return nil }
        var error = CDBus.DBusError()
        dbus_error_init(&error)
        defer { dbus_error_free(&error) }
        guard let raw = dbus_connection_open_private("unix:abstract=\(name)", &error) else { return nil }
        func fail() -> OpaquePointer? {
            dbus_connection_close(raw)
            dbus_connection_unref(raw)
            return nil
        }
        // The abstract name is listed in /proc/net/unix: only libdbus's connection, from this
        // process, is answered; any other queued before it is closed.
        var accepted: Int32 = -1
        while accepted < 0 {
            let candidate = accept4(listener, nil, nil, Int32(SOCK_CLOEXEC.rawValue))
            if candidate < 0, errno == EINTR { continue }
            guard candidate >= 0 else { return fail() }
            if cdbus_peer_pid(candidate) == getpid() { accepted = candidate } else { close(candidate) }
        }
        defer { close(accepted) }
        guard UnixFileDescriptor.writeAll(accepted, Array("OK \(guid ?? standInGUID)\r\nAGREE_UNIX_FD\r\n".utf8)[...], socket: true) == 0 else { return fail() }
        // The answers are there already: this reads them and writes `BEGIN`, without waiting
        // for anyone but this thread. A second is far more than that takes.
        let deadline = Clock.now + 1_000_000_000
        while dbus_connection_get_is_authenticated(raw) == 0 {
            guard Clock.now < deadline, dbus_connection_get_is_connected(raw) != 0, dbus_connection_read_write(raw, 100) != 0 else { return fail() }
        }
        guard dbus_connection_can_send_type(raw, TypeCode.unixFD) != 0 else { return fail() }
        return raw
    }

    /// What the stand-in calls itself when the address names no bus guid: 32 hex digits.
    private static let standInGUID = "706173746562617264647374616e6469"

    /// `text`'s bytes in lower-case hex, as `AUTH EXTERNAL` takes the user id.
    static func hexadecimal(_ text: String) -> String {
        let digits = Array("0123456789abcdef".utf8)
        var out: [UInt8] = []
        for byte in text.utf8 {
            out.append(digits[Int(byte >> 4)])
            out.append(digits[Int(byte & 0xf)])
        }
        return String(decoding: out, as: UTF8.self)
    }

}

/// The bus's answers to a pipelined handshake (`OK <guid>`, then `AGREE_UNIX_FD`), read off
/// the socket before libdbus reads anything from it, and never a byte past them: the messages
/// behind them are libdbus's.
///
/// Used only on the connection's loop thread.
final class HandshakeAnswers {
    enum Progress: Equatable {
        /// Both answers read: libdbus may read the socket.
        case done
        /// Not all of them have come yet.
        case waiting
        /// The bus said no, or something that is not an answer; the connection must end.
        case refused(String)
    }

    /// The guid the address names, which the bus's `OK` must carry.
    private let guid: String?
    private var okRead = false
    /// The start of an answer line read off the socket before its end came.
    private var pending: [UInt8] = []

    /// The longest answer line taken: an `OK` with its guid is 35 bytes.
    private static let longestLine = 256

    init(guid: String?) {
        self.guid = guid
    }

    /// Reads what has come of the answers, without waiting: one look at the socket, and one
    /// read of what belongs to them.
    ///
    /// Until the last answer's line ends, every byte on the socket is an answer's, so a line
    /// cut midway is read off and kept: the socket then stops reading as readable, and the
    /// loop's `poll` waits for the rest instead of spinning on it. Once the last line ends,
    /// only the bytes up to its end are read; what follows is libdbus's.
    func take(from socket: Int32) -> Progress {
        var peeked = [UInt8](repeating: 0, count: Self.longestLine)
        var count: Int
        repeat {
            count = peeked.withUnsafeMutableBytes { recv(socket, $0.baseAddress, $0.count, Int32(MSG_PEEK | MSG_DONTWAIT)) }
        } while count < 0 && errno == EINTR
        if count < 0 {
            if errno == EAGAIN || errno == EWOULDBLOCK { return .waiting }
            return .refused("the bus connection failed during the handshake: \(SystemCallError("recv"))")
        }
        guard count > 0 else { return .refused("the bus closed the connection during the handshake") }
        let kept = pending.count
        let bytes = pending + peeked[..<count]
        var consumed = 0
        var progress = Progress.waiting
        while progress == .waiting, let end = Self.lineEnd(in: bytes[consumed...]) {
            progress = answer(String(decoding: bytes[consumed..<(consumed + end)], as: UTF8.self))
            consumed += end + 2
        }
        switch progress {
        case .refused: return progress
        case .waiting:
            guard bytes.count - consumed < Self.longestLine else { return .refused("the bus did not answer the handshake as D-Bus does") }
            pending = Array(bytes[consumed...])
            return readOff(count, from: socket) ? .waiting : .refused("the bus connection failed during the handshake")
        case .done:
            pending = []
            return readOff(consumed - kept, from: socket) ? .done : .refused("the bus connection failed during the handshake")
        }
    }

    /// Reads `count` bytes already seen with `MSG_PEEK` off the socket.
    private func readOff(_ count: Int, from socket: Int32) -> Bool {
        guard count > 0 else { return true }
        var discarded = [UInt8](repeating: 0, count: count)
        var read: Int
        repeat {
            read = discarded.withUnsafeMutableBytes { recv(socket, $0.baseAddress, $0.count, Int32(MSG_DONTWAIT)) }
        } while read < 0 && errno == EINTR
        return read == count
    }

    /// One line of the bus's answers: `.waiting` for the next one, `.done` after the last.
    private func answer(_ text: String) -> Progress {
        guard okRead else {
            guard text.hasPrefix("OK ") else { return .refused("the bus refused the authentication (\(text))") }
            if let guid, text.dropFirst(3) != guid {
                return .refused("the bus's guid \(text.dropFirst(3)) is not the one its address names (\(guid))")
            }
            okRead = true
            return .waiting
        }
        guard text == "AGREE_UNIX_FD" else { return .refused("the bus does not pass file descriptors (\(text))") }
        return .done
    }

    /// Reads the answers, waiting for them until `deadline` (monotonic nanoseconds).
    func settle(on socket: Int32, until deadline: UInt64) -> Progress {
        while true {
            let progress = take(from: socket)
            guard progress == .waiting else { return progress }
            let now = Clock.now
            guard now < deadline else { return .refused("the bus did not answer the handshake in time") }
            var probe = pollfd(fd: socket, events: Int16(POLLIN), revents: 0)
            _ = poll(&probe, 1, Int32(clamping: (deadline - now) / 1_000_000 + 1))
        }
    }

    private static func lineEnd(in bytes: ArraySlice<UInt8>) -> Int? {
        var index = bytes.startIndex
        while index + 1 < bytes.endIndex {
            if bytes[index] == 13, bytes[index + 1] == 10 { return index - bytes.startIndex }
            index += 1
        }
        return nil
    }
}

/// A `unix:` bus address of one socket (`path=` or `abstract=`, and maybe `guid=`), the only
/// kind the pipelined handshake takes.
struct UnixSocketAddress {
    let path: [UInt8]
    let abstract: Bool
    let guid: String?

    init(path: [UInt8], abstract: Bool, guid: String?) {
        self.path = path
        self.abstract = abstract
        self.guid = guid
    }

    /// Nil for anything but one `unix:` address with a path or an abstract name and at most a
    /// guid besides: several addresses, other transports, `tmpdir=`, `runtime=`, bad escapes.
    init?(parsing address: String) {
        let bytes = Array(address.utf8)
        let prefix = Array("unix:".utf8)
        guard bytes.count > prefix.count, Array(bytes[..<prefix.count]) == prefix, !bytes.contains(UInt8(ascii: ";")) else { return nil }
        var path: [UInt8]?, abstract = false, guid: String?
        for pair in bytes[prefix.count...].split(separator: UInt8(ascii: ","), omittingEmptySubsequences: false) {
            guard let equals = pair.firstIndex(of: UInt8(ascii: "=")), let value = Self.unescaped(pair[(equals + 1)...]) else { return nil }
            switch String(decoding: pair[..<equals], as: UTF8.self) {
            case "path" where path == nil: path = value
            case "abstract" where path == nil: path = value; abstract = true
            case "guid" where guid == nil: guid = String(decoding: value, as: UTF8.self)
            default: return nil
            }
        }
        // libdbus's limits: a path of at most 99 bytes, an abstract name of at most 98.
        guard let path, !path.isEmpty, !path.contains(0), path.count <= (abstract ? 98 : 99) else { return nil }
        self.init(path: path, abstract: abstract, guid: guid)
    }

    /// `%XX` escapes undone; nil for a malformed one, or for a byte the specification says
    /// must be escaped (libdbus refuses the address then, and must be the one to say so).
    private static func unescaped(_ value: ArraySlice<UInt8>) -> [UInt8]? {
        var out: [UInt8] = []
        var index = value.startIndex
        while index < value.endIndex {
            if value[index] == UInt8(ascii: "%") {
                guard index + 2 < value.endIndex, let high = hexValue(value[index + 1]), let low = hexValue(value[index + 2]) else { return nil }
                out.append(high << 4 | low)
                index += 3
            } else {
                guard isOptionallyEscaped(value[index]) else { return nil }
                out.append(value[index])
                index += 1
            }
        }
        return out
    }

    /// `[-0-9A-Za-z_/.\*]`, the bytes an address value may hold unescaped.
    private static func isOptionallyEscaped(_ byte: UInt8) -> Bool {
        switch byte {
        case UInt8(ascii: "0")...UInt8(ascii: "9"), UInt8(ascii: "a")...UInt8(ascii: "z"), UInt8(ascii: "A")...UInt8(ascii: "Z"): true
        case UInt8(ascii: "-"), UInt8(ascii: "_"), UInt8(ascii: "/"), UInt8(ascii: "."), UInt8(ascii: "\\"), UInt8(ascii: "*"): true
        default: false
        }
    }

    private static func hexValue(_ byte: UInt8) -> UInt8? {
        switch byte {
        case UInt8(ascii: "0")...UInt8(ascii: "9"): byte - UInt8(ascii: "0")
        case UInt8(ascii: "a")...UInt8(ascii: "f"): byte - UInt8(ascii: "a") + 10
        case UInt8(ascii: "A")...UInt8(ascii: "F"): byte - UInt8(ascii: "A") + 10
        default: nil
        }
    }

    func connect(_ socket: Int32) -> Bool {
        withAddress { address, length in Glibc.connect(socket, address, length) == 0 }
    }

    func bind(_ socket: Int32) -> Bool {
        withAddress { address, length in Glibc.bind(socket, address, length) == 0 }
    }

    /// The `sockaddr_un`: an abstract name after a zero byte, and sized to it.
    private func withAddress(_ body: (UnsafePointer<sockaddr>, socklen_t) -> Bool) -> Bool {
        var address = sockaddr_un()
        address.sun_family = sa_family_t(AF_UNIX)
        let name = abstract ? [0] + path : path
        let capacity = MemoryLayout.size(ofValue: address.sun_path)
        guard name.count < capacity || (abstract && name.count <= capacity) else { return false }
        withUnsafeMutableBytes(of: &address.sun_path) { $0.copyBytes(from: name) }
        let length = socklen_t(MemoryLayout<sa_family_t>.size + (abstract ? name.count : name.count + 1))
        return withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { body($0, length) }
        }
    }
}
