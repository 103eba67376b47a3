import DBus
import Foundation
import Synchronization

/// The built `pasteboardd`, running on a test's private bus with a state directory of its own,
/// and killed when the value is released.
///
/// ```swift
/// let bus = try TestBus()
/// let server = try await TestServer(bus: bus, limits: ["max-inline-bytes=1024"])
/// server.kill9()
/// try await server.restart()      // same bus, same state directory
/// #expect(server.terminate() == 0)
/// ```
///
/// The initializer returns once the server owns `org.pasteboardd.Pasteboard1`, its readiness
/// signal. The server's standard error goes to a log file, read by ``log``.
///
/// The process is spawned and reaped here rather than through Foundation's `Process`, whose
/// exit monitoring can wait forever when many tests spawn processes at once (its per-process
/// socket leaks into children spawned concurrently). The server inherits no descriptor but
/// standard input, output and error, so it never holds a test's pipe open.
public final class TestServer: Sendable {
    public static let busName = "org.pasteboardd.Pasteboard1"

    public let bus: TestBus
    public let stateDirectory: String
    /// The `--limit KEY=VALUE` settings the server runs with.
    public let limits: [String]
    private let logPath: String
    private let ownsStateDirectory: Bool
    /// The running server; nil once it has been stopped.
    private let running = Mutex<Running?>(nil)

    private struct Running {
        let pid: pid_t
        let uniqueName: String
    }

    /// Starts a server and waits until it owns its bus name.
    ///
    /// - Parameters:
    ///   - bus: The private bus to serve on.
    ///   - stateDirectory: Where to keep the data; a new temporary directory (deleted with the
    ///     server) when nil.
    ///   - limits: `KEY=VALUE` settings, each passed as `--limit`.
    /// - Throws: when the server exits or does not own its name within ten seconds.
    public init(bus: TestBus, stateDirectory: String? = nil, limits: [String] = []) async throws {
        self.bus = bus
        self.limits = limits
        if let stateDirectory {
            self.stateDirectory = stateDirectory
            ownsStateDirectory = false
        } else {
            self.stateDirectory = try Paths.temporaryDirectory("pasteboardd-state")
            ownsStateDirectory = true
        }
        logPath = FileManager.default.temporaryDirectory.appendingPathComponent("pasteboardd-log-\(UUID().uuidString)").path
        try await start()
    }

    deinit {
        if let pid = running.withLock({ $0.take() })?.pid {
            kill(pid, SIGKILL)
            _ = Self.reap(pid)
        }
        try? FileManager.default.removeItem(atPath: logPath)
        if ownsStateDirectory { try? FileManager.default.removeItem(atPath: stateDirectory) }
    }

    /// The arguments the server is started with.
    public var arguments: [String] {
        ["--address", bus.address, "--state-dir", stateDirectory] + limits.flatMap { ["--limit", $0] }
    }

    /// Everything the server has written to standard error so far, over all its runs.
    public var log: String {
        (try? String(contentsOfFile: logPath, encoding: .utf8)) ?? ""
    }

    /// The process id of the running server, or nil when it is stopped.
    public var processIdentifier: Int32? {
        running.withLock { $0?.pid }
    }

    /// The unique bus name of the running server, or nil when it is stopped.
    public var uniqueName: String? {
        running.withLock { $0?.uniqueName }
    }

    // MARK: Stopping and restarting

    /// Kills the server with SIGKILL (a crash) and waits until it is gone.
    public func kill9() {
        guard let pid = running.withLock({ $0.take() })?.pid else { return }
        kill(pid, SIGKILL)
        _ = Self.reap(pid)
    }

    /// Stops the server with SIGTERM and returns its exit status (128 + the signal number if
    /// a signal ended it), or nil if it was not running. Kills it after ten seconds.
    @discardableResult
    public func terminate() -> Int32? {
        guard let pid = running.withLock({ $0.take() })?.pid else { return nil }
        kill(pid, SIGTERM)
        let deadline = ContinuousClock.now + .seconds(10)
        while ContinuousClock.now < deadline {
            if let status = Self.reap(pid, wait: false) { return status }
            usleep(5_000)
        }
        kill(pid, SIGKILL)
        return Self.reap(pid)
    }

    /// Starts the server again on the same bus and state directory, stopping it first (with
    /// SIGTERM) if it still runs; returns once the new process owns the name.
    public func restart() async throws {
        terminate()
        try await start()
    }

    // MARK: Starting

    private func start() async throws {
        let pid = try Self.spawn(try Paths.product("pasteboardd"), arguments, standardError: logPath)
        let watcher = try Connection.connect(address: bus.address)
        defer { watcher.close() }
        let deadline = ContinuousClock.now + .seconds(10)
        while true {
            if let status = Self.reap(pid, wait: false) {
                throw TestSupportError("pasteboardd exited with status \(status) before owning \(Self.busName):\n\(log)")
            }
            // The owner's process id tells this run from an earlier one the bus still lists.
            if let owner = try await watcher.nameOwner(Self.busName),
               let ownerPID = try? await watcher.unixProcessID(of: owner), ownerPID == UInt32(pid)
            {
                running.withLock { $0 = Running(pid: pid, uniqueName: owner) }
                return
            }
            if ContinuousClock.now > deadline {
                kill(pid, SIGKILL)
                _ = Self.reap(pid)
                throw TestSupportError("pasteboardd did not own \(Self.busName) within 10 s:\n\(log)")
            }
            try await Task.sleep(for: .milliseconds(10))
        }
    }

    // MARK: Processes

    /// Starts `executable` with standard input and output on /dev/null and standard error
    /// appended to `standardError`, no other descriptor, default signal handling, and the
    /// environment without `DBUS_SESSION_BUS_ADDRESS`.
    static func spawn(_ executable: String, _ arguments: [String], standardError: String) throws -> pid_t {
        var actions = posix_spawn_file_actions_t()
        posix_spawn_file_actions_init(&actions)
        defer { posix_spawn_file_actions_destroy(&actions) }
        posix_spawn_file_actions_addopen(&actions, 0, "/dev/null", O_RDONLY, 0)
        posix_spawn_file_actions_addopen(&actions, 1, "/dev/null", O_WRONLY, 0)
        posix_spawn_file_actions_addopen(&actions, 2, standardError, O_WRONLY | O_CREAT | O_APPEND, 0o600)
        closeFrom(3, in: &actions)

        var attributes = posix_spawnattr_t()
        posix_spawnattr_init(&attributes)
        defer { posix_spawnattr_destroy(&attributes) }
        var noSignals = sigset_t()
        sigemptyset(&noSignals)
        posix_spawnattr_setsigmask(&attributes, &noSignals)
        var defaults = sigset_t()
        sigemptyset(&defaults)
        for number in [SIGPIPE, SIGTERM, SIGINT, SIGHUP] { sigaddset(&defaults, number) }
        posix_spawnattr_setsigdefault(&attributes, &defaults)
        posix_spawnattr_setflags(&attributes, Int16(POSIX_SPAWN_SETSIGMASK | POSIX_SPAWN_SETSIGDEF | POSIX_SPAWN_SETPGROUP))

        var environment = ProcessInfo.processInfo.environment
        environment["DBUS_SESSION_BUS_ADDRESS"] = nil
        let argv = ([executable] + arguments).map { strdup($0) } + [nil]
        let envp = environment.map { strdup("\($0.key)=\($0.value)") } + [nil]
        defer {
            argv.forEach { free($0) }
            envp.forEach { free($0) }
        }
        var pid = pid_t()
        let result = posix_spawn(&pid, executable, &actions, &attributes, argv, envp)
        guard result == 0 else { throw TestSupportError("cannot start \(executable): \(String(cString: strerror(result)))") }
        return pid
    }

    /// Closes every descriptor from `lowest` up in the child, with glibc's
    /// `posix_spawn_file_actions_addclosefrom_np` (atomic: nothing opened meanwhile by another
    /// thread slips through), or one by one where it is missing.
    private static func closeFrom(_ lowest: Int32, in actions: inout posix_spawn_file_actions_t) {
        typealias AddCloseFrom = @convention(c) (UnsafeMutablePointer<posix_spawn_file_actions_t>, Int32) -> Int32
        if let symbol = dlsym(nil, "posix_spawn_file_actions_addclosefrom_np") {
            _ = unsafeBitCast(symbol, to: AddCloseFrom.self)(&actions, lowest)
            return
        }
        let open = (try? FileManager.default.contentsOfDirectory(atPath: "/proc/self/fd")) ?? []
        for fd in open.compactMap({ Int32($0) }) where fd >= lowest {
            posix_spawn_file_actions_addclose(&actions, fd)
        }
    }

    /// Reaps `pid` and returns its exit status (128 + signal for a signal), or nil when it is
    /// still running and `wait` is false.
    static func reap(_ pid: pid_t, wait: Bool = true) -> Int32? {
        var status: Int32 = 0
        while true {
            let result = waitpid(pid, &status, wait ? 0 : WNOHANG)
            if result == pid { break }
            if result == 0 { return nil }
            if errno == EINTR { continue }
            return -1  // not our child any more: reaped elsewhere
        }
        let signal = status & 0x7f
        return signal == 0 ? (status >> 8) & 0xff : 128 + signal
    }
}
