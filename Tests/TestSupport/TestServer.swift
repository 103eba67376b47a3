import DBus
import Foundation
import Synchronization

/// The built `pasteboardd`, running on a test's private bus with a state directory of its own,
/// and killed when the value is released.
///
/// ```swift
/// let bus = try await TestBus()
/// let server = try await TestServer(bus: bus, limits: ["max-inline-bytes=1024"])
/// server.kill9()
/// try await server.restart()      // same bus, same state directory
/// #expect(await server.terminate() == 0)
/// ```
///
/// The initializer returns once the server owns `org.pasteboardd.Pasteboard1`, its readiness
/// signal. The server's standard error goes to a log file, read by ``log``.
///
/// The server is started with ``spawnDetached(_:_:standardOutput:standardError:newProcessGroup:)``
/// in a process group of its own: it inherits no descriptor but standard input (/dev/null),
/// output (/dev/null) and error, so it never holds a test's pipe open.
public final class TestServer: Sendable {
    public static let busName = "org.pasteboardd.Pasteboard1"

    public let bus: TestBus
    public let stateDirectory: String
    /// The `--limit KEY=VALUE` settings the server runs with.
    public let limits: [String]
    /// The display the server's desktop bridge joins; nil runs it with `--desktop off`, so
    /// that no test server ever touches the desktop of the person running the tests.
    public let desktop: DesktopDisplay?
    /// The `--store` the server is given; nil for the default (SQLite in the state directory).
    public let store: String?
    /// Variables added to the server's environment.
    public let environment: [String: String]

    /// Whether the server's counts are those of a PostgreSQL store shared with others.
    public var sharesCounts: Bool { store?.hasPrefix("postgresql") ?? false }

    /// Where the server's SQLite store lives (its database, commit log and blob files): the
    /// state directory, the folder of `--store sqlite:FOLDER`, or for a PostgreSQL store the
    /// local copy's folder under `shared/` of the state directory (once the server has made it).
    public var storeDirectory: String {
        if let store, store.hasPrefix("sqlite:") { return String(store.dropFirst("sqlite:".count)) }
        guard sharesCounts else { return stateDirectory }
        let shared = stateDirectory + "/shared"
        let folders = (try? FileManager.default.contentsOfDirectory(atPath: shared)) ?? []
        return folders.count == 1 ? shared + "/" + folders[0] : stateDirectory
    }
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
    ///   - desktop: the display to bridge `general` to; nil for none.
    /// - Throws: when the server exits or does not own its name within 30 seconds (servers on a
    ///   PostgreSQL store connect and migrate first, dozens at once in the tests).
    ///   - environment: variables added to the server's environment (`XDG_DATA_HOME` for the
    ///     MIME database it reads).
    public init(
        bus: TestBus, stateDirectory: String? = nil, limits: [String] = [], desktop: DesktopDisplay? = nil, store: String? = nil,
        environment: [String: String] = [:]
    ) async throws {
        self.bus = bus
        self.environment = environment
        self.limits = limits
        self.desktop = desktop
        // PASTEBOARDD_TEST_STORE=postgresql runs the servers of the behavioural tests on a
        // PostgreSQL store (a database of their own in one server for the test run).
        self.store = try store ?? SharedTestDatabases.storeForTests()
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
            // A server that ended by itself during the test (a crash, a lost bus): its log is the
            // only account of why, and is deleted below.
            if let status = reap(pid, wait: false), status >= 0 {
                FileHandle.standardError.write(Data("pasteboardd (pid \(pid)) ended by itself with status \(status); its log:\n\(log)\n".utf8))
            } else {
                kill(pid, SIGKILL)
                _ = reap(pid)
            }
        }
        try? FileManager.default.removeItem(atPath: logPath)
        if ownsStateDirectory { try? FileManager.default.removeItem(atPath: stateDirectory) }
    }

    /// The arguments the server is started with.
    public var arguments: [String] {
        ["--address", bus.address, "--state-dir", stateDirectory, "--desktop", desktop?.mode ?? "off"]
            + (store.map { ["--store", $0] } ?? []) + (limits + Self.patientLimits(besides: limits)).flatMap { ["--limit", $0] }
    }

    /// `provider-timeout-ms` of 20 s rather than the server's 5, unless the test sets its own: a
    /// loaded machine has stalled a test's provider, or the app behind a desktop paste, for
    /// seconds, and no test counts on the default to end a wait.
    static func patientLimits(besides limits: [String]) -> [String] {
        limits.contains { $0.hasPrefix("provider-timeout-ms=") } ? [] : ["provider-timeout-ms=20000"]
    }

    /// Everything the server has written to standard error so far, over all its runs (bytes
    /// that are not UTF-8, such as a line cut by `kill -9`, read as replacement characters).
    public var log: String {
        String(decoding: FileManager.default.contents(atPath: logPath) ?? Data(), as: UTF8.self)
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

    /// Sends `signal` to the running server: SIGSTOP makes one that holds its bus name and
    /// answers nothing (a hung server), SIGCONT lets it go on.
    public func send(_ signal: Int32) {
        guard let pid = running.withLock({ $0?.pid }) else { return }
        kill(pid, signal)
    }

    /// The server's state as the kernel tells it (`/proc/PID/stat`: `R`, `S`, `T` when
    /// stopped, …) and its process id; nil when it is not running. For tests that stop it, and
    /// for their failure messages.
    public var processState: (state: Character, pid: pid_t)? {
        guard let pid = running.withLock({ $0?.pid }), let state = TestSupport.processState(pid) else { return nil }
        return (state, pid)
    }

    /// Kills the server with SIGKILL (a crash) and waits until it is gone.
    public func kill9() {
        guard let pid = running.withLock({ $0.take() })?.pid else { return }
        kill(pid, SIGKILL)
        _ = reap(pid)
    }

    /// Stops the server with SIGTERM and returns its exit status (128 + the signal number if
    /// a signal ended it), or nil if it was not running. Kills it after ten seconds. The wait
    /// suspends, holding no thread of the tests' pool while the server stops.
    @discardableResult
    public func terminate() async -> Int32? {
        guard let pid = running.withLock({ $0.take() })?.pid else { return nil }
        kill(pid, SIGTERM)
        let deadline = ContinuousClock.now + .seconds(10)
        while ContinuousClock.now < deadline {
            if let status = reap(pid, wait: false) { return status }
            try? await Task.sleep(for: .milliseconds(5))
        }
        kill(pid, SIGKILL)
        return reap(pid)
    }

    /// Starts the server again on the same bus and state directory, stopping it first (with
    /// SIGTERM) if it still runs; returns once the new process owns the name.
    public func restart() async throws {
        await terminate()
        try await start()
    }

    // MARK: Starting

    private func start() async throws {
        let pid = try spawnDetached(
            try Paths.product("pasteboardd"), arguments, standardError: .appending(logPath),
            environment: environment.merging(desktop?.environment ?? [:]) { $1 }, newProcessGroup: true)
        let watcher = try Connection.connect(address: bus.address)
        defer { watcher.close() }
        let deadline = ContinuousClock.now + .seconds(30)
        while true {
            if let status = reap(pid, wait: false) {
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
                _ = reap(pid)
                throw TestSupportError("pasteboardd did not own \(Self.busName) within 30 s:\n\(log)")
            }
            try await Task.sleep(for: .milliseconds(10))
        }
    }
}
