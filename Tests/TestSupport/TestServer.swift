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
public final class TestServer: Sendable {
    public static let busName = "org.pasteboardd.Pasteboard1"

    public let bus: TestBus
    public let stateDirectory: String
    /// The `--limit KEY=VALUE` settings the server runs with.
    public let limits: [String]
    private let logPath: String
    private let ownsStateDirectory: Bool
    /// The running process and its unique bus name; nil once it has been stopped.
    private let state = Mutex<Running?>(nil)

    private struct Running: @unchecked Sendable {
        // `Process` is not Sendable; it is only touched under `state`'s lock.
        let process: Process
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
        if let running = state.withLock({ $0.take() }) {
            Self.signal(running.process, SIGKILL)
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
        state.withLock { $0?.process.processIdentifier }
    }

    /// The unique bus name of the running server, or nil when it is stopped.
    public var uniqueName: String? {
        state.withLock { $0?.uniqueName }
    }

    // MARK: Stopping and restarting

    /// Kills the server with SIGKILL (a crash) and waits until it is gone.
    public func kill9() {
        guard let running = state.withLock({ $0.take() }) else { return }
        Self.signal(running.process, SIGKILL)
    }

    /// Stops the server with SIGTERM and returns its exit status (128 + the signal number if
    /// a signal ended it), or nil if it was not running. Kills it after ten seconds.
    @discardableResult
    public func terminate() -> Int32? {
        guard let running = state.withLock({ $0.take() }) else { return nil }
        let process = running.process
        kill(process.processIdentifier, SIGTERM)
        let deadline = Date().addingTimeInterval(10)
        while process.isRunning, Date() < deadline {
            usleep(10_000)
        }
        if process.isRunning { kill(process.processIdentifier, SIGKILL) }
        process.waitUntilExit()
        return process.terminationReason == .exit ? process.terminationStatus : 128 + process.terminationStatus
    }

    /// Starts the server again on the same bus and state directory, stopping it first (with
    /// SIGTERM) if it still runs; returns once the new process owns the name.
    public func restart() async throws {
        terminate()
        try await start()
    }

    // MARK: Starting

    private func start() async throws {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: try Paths.product("pasteboardd"))
        process.arguments = arguments
        var environment = ProcessInfo.processInfo.environment
        environment["DBUS_SESSION_BUS_ADDRESS"] = nil
        process.environment = environment
        if !FileManager.default.fileExists(atPath: logPath) {
            FileManager.default.createFile(atPath: logPath, contents: nil)
        }
        let log = try FileHandle(forWritingTo: URL(fileURLWithPath: logPath))
        try log.seekToEnd()
        process.standardInput = FileHandle.nullDevice
        process.standardOutput = FileHandle.nullDevice
        process.standardError = log
        try process.run()
        try? log.close()

        let watcher = try Connection.connect(address: bus.address)
        defer { watcher.close() }
        let deadline = ContinuousClock.now + .seconds(10)
        while true {
            if !process.isRunning {
                process.waitUntilExit()
                throw TestSupportError("pasteboardd exited with status \(process.terminationStatus) before owning \(Self.busName):\n\(self.log)")
            }
            // The owner's process id tells this run from an earlier one the bus still lists.
            if let owner = try await watcher.nameOwner(Self.busName),
               let pid = try? await watcher.unixProcessID(of: owner), pid == UInt32(process.processIdentifier)
            {
                state.withLock { $0 = Running(process: process, uniqueName: owner) }
                return
            }
            if ContinuousClock.now > deadline {
                Self.signal(process, SIGKILL)
                throw TestSupportError("pasteboardd did not own \(Self.busName) within 10 s:\n\(self.log)")
            }
            try await Task.sleep(for: .milliseconds(10))
        }
    }

    private static func signal(_ process: Process, _ number: Int32) {
        if process.isRunning { kill(process.processIdentifier, number) }
        process.waitUntilExit()
    }
}
