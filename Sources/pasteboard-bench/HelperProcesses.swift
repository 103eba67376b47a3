import DBus
import Foundation

#if canImport(Glibc)
import Glibc
#endif

/// The processes the benchmark starts from its own binary, so that the floor and the listener
/// stand where the server and its clients stand: in processes of their own.
///
/// - `echo` serves the floor (``EchoFloor``) under ``EchoFloor/busName`` until it is killed.
///   The floor is a process like the server, so both pay the same context switches.
/// - `listen` subscribes to `Changed` on the signal figure's pasteboard and to the floor's
///   `Pinged`, prints `ready`, then one line per signal received, `C <ns>` or `P <ns>`, with
///   the `CLOCK_MONOTONIC` time of receipt; the benchmark subtracts the time it wrote.
enum HelperRole: String {
    case echo, listen

    func run(address: String) async throws -> Never {
        let connection = try Connection.connect(address: address)
        switch self {
        case .echo:
            try connection.export(EchoFloor(), at: EchoFloor.path)
            guard try await connection.requestName(EchoFloor.busName) == .primaryOwner else {
                throw BenchError("\(EchoFloor.busName) is already taken on \(address)")
            }
            await connection.waitUntilDisconnected()
        case .listen:
            let changes = try await connection.signals(matching: MatchRule(interface: BusFixture.serverName, member: "Changed", arg0: Measurements.signalPasteboard))
            let pings = try await connection.signals(matching: MatchRule(interface: EchoFloor.interface, member: EchoFloor.signal))
            Self.say("ready")
            await withTaskGroup(of: Void.self) { group in
                group.addTask { for await _ in changes { Self.say("C \(monotonicNanoseconds())") } }
                group.addTask { for await _ in pings { Self.say("P \(monotonicNanoseconds())") } }
            }
        }
        exit(0)
    }

    /// One line on stdout, written at once (stdout is a pipe the benchmark reads).
    private static func say(_ line: String) {
        var bytes = Array((line + "\n").utf8)
        _ = bytes.withUnsafeMutableBytes { write(1, $0.baseAddress, $0.count) }
    }
}

/// Reads the lines a `listen` process prints, from the read end of its stdout pipe.
final class LineReader {
    private let fd: Int32
    private var buffer: [UInt8] = []

    init(fd: Int32) {
        self.fd = fd
    }

    deinit {
        close(fd)
    }

    /// The next line, without its newline; nil at the end of the stream.
    func next() -> String? {
        while true {
            if let newline = buffer.firstIndex(of: UInt8(ascii: "\n")) {
                let line = String(decoding: buffer[..<newline], as: UTF8.self)
                buffer.removeSubrange(...newline)
                return line
            }
            var chunk = [UInt8](repeating: 0, count: 4096)
            let count = chunk.withUnsafeMutableBytes { read(fd, $0.baseAddress, $0.count) }
            if count < 0, errno == EINTR { continue }
            guard count > 0 else { return nil }
            buffer += chunk[..<count]
        }
    }
}
