import DBus
import ProcessSpawning
import Foundation
import Synchronization

#if canImport(Glibc)
import Glibc
#endif

/// A private `dbus-daemon`, the release-built `pasteboardd` on it, and the echo floor in a
/// process of its own: everything one run measures, torn down by ``stop()``.
final class BusFixture: Sendable {
    static let serverName = "org.pasteboardd.Pasteboard1"
    static let serverPath = "/org/pasteboardd/Pasteboard1"

    let directory: String
    let address: String
    let daemonPID: pid_t
    /// The running server's process id; ``restartServer()`` replaces it.
    var serverPID: pid_t { server.withLock { $0 } }
    private let server: Mutex<pid_t>
    /// The folder holding this binary, `pasteboardd` and `pbctl`.
    let products: String
    /// The process serving the echo floor (this binary, `--role echo`).
    let echoPID: pid_t
    /// The process serving the C floor (`pasteboard-c-floor`, the echo service straight on
    /// libdbus).
    let cFloorPID: pid_t
    /// The bus configuration the daemon runs with.
    let busConfig: String

    /// Starts the daemon and the server, and exports the floor.
    ///
    /// - Parameter busConfig: the bus configuration; found from the repository when nil.
    init(busConfig: String?) async throws {
        products = Self.productsDirectory()
        let server = products + "/pasteboardd"
        guard FileManager.default.isExecutableFile(atPath: server) else {
            throw BenchError("\(server) is missing: run `swift build -c release` first")
        }
        guard let config = busConfig ?? Self.findBusConfig() else {
            throw BenchError("dbus/session-test.conf not found: run from the repository or pass --bus-config")
        }
        let daemon = try Self.executable(named: "dbus-daemon")
        self.busConfig = config

        directory = FileManager.default.temporaryDirectory.appendingPathComponent("pasteboard-bench-\(getpid())").path
        try? FileManager.default.removeItem(atPath: directory)
        try FileManager.default.createDirectory(atPath: directory + "/state", withIntermediateDirectories: true)
        address = "unix:path=\(directory)/bus"

        daemonPID = try Spawn.start(daemon, ["--config-file=\(config)", "--nofork", "--address=\(address)"], output: directory + "/dbus-daemon.log")
        var probe: Connection?
        let deadline = monotonicNanoseconds() + 10_000_000_000
        while probe == nil {
            probe = try? Connection.connect(address: address)
            if probe == nil {
                guard monotonicNanoseconds() < deadline else {
                    kill(daemonPID, SIGKILL)
                    throw BenchError("dbus-daemon did not listen on \(address) within 10 s")
                }
                usleep(2_000)
            }
        }

        let serverPID = try Spawn.start(server, Self.serverArguments(address: address, directory: directory), output: directory + "/pasteboardd.log")
        self.server = Mutex(serverPID)
        while try await probe!.nameOwner(Self.serverName) == nil {
            guard monotonicNanoseconds() < deadline, kill(serverPID, 0) == 0 else {
                kill(serverPID, SIGKILL)
                kill(daemonPID, SIGKILL)
                throw BenchError("pasteboardd did not own \(Self.serverName) within 10 s (log: \(directory)/pasteboardd.log)")
            }
            try await Task.sleep(for: .milliseconds(2))
        }
        echoPID = try Spawn.start(products + "/pasteboard-bench", ["--role", "echo", "--address", address], output: directory + "/echo.log")
        while try await probe!.nameOwner(EchoFloor.busName) == nil {
            guard monotonicNanoseconds() < deadline, kill(echoPID, 0) == 0 else {
                [echoPID, serverPID, daemonPID].forEach { kill($0, SIGKILL) }
                throw BenchError("the echo floor did not own \(EchoFloor.busName) within 10 s (log: \(directory)/echo.log)")
            }
            try await Task.sleep(for: .milliseconds(2))
        }
        cFloorPID = try Spawn.start(products + "/pasteboard-c-floor", [address], output: directory + "/c-floor.log")
        while try await probe!.nameOwner(EchoFloor.cBusName) == nil {
            guard monotonicNanoseconds() < deadline, kill(cFloorPID, 0) == 0 else {
                [cFloorPID, echoPID, serverPID, daemonPID].forEach { kill($0, SIGKILL) }
                throw BenchError("the C floor did not own \(EchoFloor.cBusName) within 10 s (log: \(directory)/c-floor.log)")
            }
            try await Task.sleep(for: .milliseconds(2))
        }
        probe!.close()
    }

    /// Starts a `--role listen` process; its stdout comes back through the returned reader,
    /// once it has said it is subscribed.
    func startListener() throws -> (pid: pid_t, lines: LineReader) {
        var fds: [Int32] = [0, 0]
        guard pipe(&fds) == 0 else { throw BenchError("pipe: \(String(cString: strerror(errno)))") }
        // Children get only what spawn hands them, so close-on-exec is no more than tidiness here.
        _ = fcntl(fds[0], F_SETFD, FD_CLOEXEC)
        let pid: pid_t
        do {
            pid = try spawn(
                products + "/pasteboard-bench", ["--role", "listen", "--address", address],
                standardInput: .open("/dev/null", flags: O_RDONLY, mode: 0), standardOutput: .duplicate(fds[1]),
                standardError: .open(directory + "/listener.log", flags: O_WRONLY | O_CREAT | O_APPEND, mode: 0o644))
        } catch {
            close(fds[0])
            close(fds[1])
            throw BenchError("\(error)")
        }
        close(fds[1])
        let lines = LineReader(fd: fds[0])
        guard lines.next() == "ready" else {
            kill(pid, SIGKILL)
            Spawn.wait(pid)
            throw BenchError("the listener process did not start (log: \(directory)/listener.log)")
        }
        return (pid, lines)
    }

    private static func serverArguments(address: String, directory: String) -> [String] {
        // Never the desktop of whoever runs it: the desktop figures start their own.
        ["--address", address, "--state-dir", directory + "/state", "--desktop", "off"]
    }

    /// Stops the server with SIGTERM, starts it again on the same state directory, and returns
    /// the milliseconds from just before the spawn until the bus reports the name owned
    /// (`GetNameOwner` polled every 0.5 ms, so the figure is at most about 1 ms late).
    func restartServer() async throws -> Double {
        let probe = try connect()
        defer { probe.close() }
        let old = serverPID
        kill(old, SIGTERM)
        Spawn.wait(old)
        let start = monotonicNanoseconds()
        let pid = try Spawn.start(products + "/pasteboardd", Self.serverArguments(address: address, directory: directory), output: directory + "/pasteboardd.log")
        server.withLock { $0 = pid }
        while try await probe.nameOwner(Self.serverName) == nil {
            guard monotonicNanoseconds() - start < 10_000_000_000, kill(pid, 0) == 0 else {
                throw BenchError("pasteboardd did not own \(Self.serverName) within 10 s of a restart (log: \(directory)/pasteboardd.log)")
            }
            try await Task.sleep(for: .microseconds(500))
        }
        return Double(monotonicNanoseconds() - start) / 1_000_000
    }

    /// A new client connection to the private bus.
    func connect() throws -> Connection {
        try Connection.connect(address: address)
    }

    /// Waits, untimed, for the machine to be quiet: the kernel's dirty pages written back
    /// (`sync`), and the server idle (under a millisecond of CPU in 50 ms, for at most 5 s).
    ///
    /// Large transfers leave gigabytes of blob files in the page cache for the kernel to write
    /// back over the following seconds, and the server frees what they replaced behind its
    /// replies. Without this, that work lands in whatever is timed next: `pbctl`'s starts, on
    /// a machine of two cores. (Not between the transfers' own rounds: a machine left idle
    /// hands its free memory back to its host, and the next round's fresh memory then costs
    /// more than the write-back it waited out.)
    func settle() {
        sync()
        let deadline = monotonicNanoseconds() + 5_000_000_000
        var last = CPUTime.nanoseconds(of: serverPID)
        while monotonicNanoseconds() < deadline {
            usleep(50_000)
            let now = CPUTime.nanoseconds(of: serverPID)
            if now &- last < 1_000_000 { return }
            last = now
        }
    }

    /// The server's resident memory in bytes, from `/proc/<pid>/status`.
    func serverResidentBytes() throws -> Int {
        let status = try String(contentsOfFile: "/proc/\(serverPID)/status", encoding: .utf8)
        guard let line = status.split(separator: "\n").first(where: { $0.hasPrefix("VmRSS:") }),
              let kib = Int(line.split(separator: " ").dropFirst().first ?? "")
        else { throw BenchError("no VmRSS in /proc/\(serverPID)/status") }
        return kib * 1024
    }

    /// Stops the server with SIGTERM, the daemon with SIGKILL, and removes the temporary folder.
    func stop() {
        kill(echoPID, SIGTERM)
        Spawn.wait(echoPID)
        kill(cFloorPID, SIGTERM)
        Spawn.wait(cFloorPID)
        kill(serverPID, SIGTERM)
        Spawn.wait(serverPID)
        kill(daemonPID, SIGKILL)
        Spawn.wait(daemonPID)
        try? FileManager.default.removeItem(atPath: directory)
    }

    private static func productsDirectory() -> String {
        let me = (try? FileManager.default.destinationOfSymbolicLink(atPath: "/proc/self/exe")) ?? CommandLine.arguments[0]
        return URL(fileURLWithPath: me).deletingLastPathComponent().path
    }

    /// `dbus/session-test.conf` in the current folder or above this binary (`.build/release`).
    private static func findBusConfig() -> String? {
        var folders = [FileManager.default.currentDirectoryPath]
        var url = URL(fileURLWithPath: productsDirectory()).resolvingSymlinksInPath()
        while url.path != "/" {
            folders.append(url.path)
            url.deleteLastPathComponent()
        }
        return folders.map { $0 + "/dbus/session-test.conf" }.first { FileManager.default.fileExists(atPath: $0) }
    }

    static func executable(named name: String) throws -> String {
        let path = ProcessInfo.processInfo.environment["PATH"] ?? ""
        for folder in path.split(separator: ":").map(String.init) + ["/usr/bin", "/bin", "/usr/sbin"] {
            let candidate = folder + "/" + name
            if FileManager.default.isExecutableFile(atPath: candidate) { return candidate }
        }
        throw BenchError("\(name) is not installed")
    }
}
