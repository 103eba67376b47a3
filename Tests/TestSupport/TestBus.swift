import Foundation

/// A private `dbus-daemon` for one test, started with the project's test configuration and
/// killed when the value is released. Tests hand its ``address`` to everything explicitly and
/// never touch the developer's session bus.
public final class TestBus: Sendable {
    public let address: String
    private let pid: pid_t
    private let directory: String

    /// Starts the daemon on a socket in a new temporary directory and waits until it accepts
    /// connections. It is spawned like the servers, with
    /// ``spawnDetached(_:_:standardOutput:standardError:newProcessGroup:)`` in a process group of
    /// its own: inheriting no descriptor of the test process, it can never hold another test's
    /// pipe open. The wait suspends: a thread of the tests' small pool held while a loaded
    /// machine starts the daemon would stall every other test's tasks with it.
    public init() async throws {
        directory = try Paths.temporaryDirectory("pasteboardd-bus")
        let socket = directory + "/bus"
        address = "unix:path=" + socket
        pid = try spawnDetached(
            try Paths.executable(named: "dbus-daemon"),
            ["--config-file=\(Paths.repository)/dbus/session-test.conf", "--nofork", "--address=\(address)"],
            newProcessGroup: true)
        let deadline = ContinuousClock.now + .seconds(30)
        while !Self.accepts(socket) {
            guard ContinuousClock.now < deadline else {
                kill(pid, SIGKILL)
                throw TestSupportError("dbus-daemon did not start listening on \(socket) within 30 s")
            }
            try? await Task.sleep(for: .milliseconds(2))
        }
    }

    /// Stops the daemon where it is (`SIGSTOP`), so that what clients send meanwhile waits in
    /// its sockets and is read late, several messages in one go.
    public func pause() {
        kill(pid, SIGSTOP)
    }

    /// Lets a paused daemon go on (`SIGCONT`).
    public func resume() {
        kill(pid, SIGCONT)
    }

    deinit {
        kill(pid, SIGCONT)
        kill(pid, SIGKILL)
        _ = reap(pid)
        try? FileManager.default.removeItem(atPath: directory)
    }

    /// Whether a unix socket at `path` accepts a connection.
    static func accepts(_ path: String) -> Bool {
        guard let fd = connectUnixSocket(path) else { return false }
        close(fd)
        return true
    }
}

/// A stream connection to the unix socket at `path` (close-on-exec), or nil when nothing
/// accepts there.
public func connectUnixSocket(_ path: String) -> Int32? {
    let fd = socket(AF_UNIX, Int32(SOCK_STREAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0)
    guard fd >= 0 else { return nil }
    var address = sockaddr_un()
    address.sun_family = sa_family_t(AF_UNIX)
    let bytes = Array(path.utf8)
    guard bytes.count < MemoryLayout.size(ofValue: address.sun_path) else {
        close(fd)
        return nil
    }
    withUnsafeMutableBytes(of: &address.sun_path) { buffer in
        buffer.copyBytes(from: bytes)
    }
    let connected = withUnsafePointer(to: &address) { pointer in
        pointer.withMemoryRebound(to: sockaddr.self, capacity: 1) {
            connect(fd, $0, socklen_t(MemoryLayout<sockaddr_un>.size)) == 0
        }
    }
    guard connected else {
        close(fd)
        return nil
    }
    return fd
}

public struct TestSupportError: Error, CustomStringConvertible {
    public let description: String
    public init(_ description: String) { self.description = description }
}

/// Where the repository, the built products and system tools are.
public enum Paths {
    /// The repository root (this file is `Tests/TestSupport/TestBus.swift`).
    public static let repository: String = {
        URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent().path
    }()

    /// The folder holding the test bundle, which is also where SwiftPM puts the built products.
    public static let products: String = {
        let me = (try? FileManager.default.destinationOfSymbolicLink(atPath: "/proc/self/exe")) ?? CommandLine.arguments[0]
        return URL(fileURLWithPath: me).deletingLastPathComponent().path
    }()

    /// A product of this package (`pasteboardd`, `pbctl`), built by `swift build`.
    public static func product(_ name: String) throws -> String {
        let candidate = products + "/" + name
        guard FileManager.default.isExecutableFile(atPath: candidate) else {
            throw TestSupportError("\(candidate) is missing: run `swift build` before `swift test` (scripts/test does both)")
        }
        return candidate
    }

    /// A program found on PATH or in the usual system folders.
    public static func executable(named name: String) throws -> String {
        let path = ProcessInfo.processInfo.environment["PATH"] ?? ""
        for folder in path.split(separator: ":").map(String.init) + ["/usr/bin", "/bin", "/usr/sbin"] {
            let candidate = folder + "/" + name
            if FileManager.default.isExecutableFile(atPath: candidate) { return candidate }
        }
        throw TestSupportError("\(name) is not installed")
    }

    /// A new empty directory, for a server's state.
    public static func temporaryDirectory(_ label: String = "pasteboardd-test") throws -> String {
        let url = FileManager.default.temporaryDirectory.appendingPathComponent("\(label)-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: url, withIntermediateDirectories: true)
        return url.path
    }
}
