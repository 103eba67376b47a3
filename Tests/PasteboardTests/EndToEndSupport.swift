import Foundation
import Synchronization
import Testing
import TestSupport

@testable import Pasteboard

// What the end-to-end tests of the client share: a private bus with a real `pasteboardd`, the
// built `pbctl` as another process, and polling with a deadline.

/// One test's world: a private bus, the built `pasteboardd` on it (unless asked for none), and
/// pasteboards of this process on that bus. Nothing here touches the session bus.
///
/// ```swift
/// let world = try await World()
/// try await world.pasteboard().setString("hi")
/// #expect(try await world.pbctl("paste").out == "hi")
/// ```
final class World: Sendable {
    let bus: TestBus
    /// Nil when the world was made with `server: false`.
    let server: TestServer?

    /// - Parameters:
    ///   - server: Whether to start `pasteboardd` on the bus.
    ///   - limits: `KEY=VALUE` settings for the server's `--limit`.
    init(server: Bool = true, limits: [String] = []) async throws {
        // A write to a pipe or descriptor the other end has closed must fail, not kill the tests.
        signal(SIGPIPE, SIG_IGN)
        await Self.gate.enter()
        do {
            bus = try TestBus()
            self.server = server ? try await TestServer(bus: bus, limits: limits) : nil
        } catch {
            Self.gate.leave()
            throw error
        }
    }

    deinit {
        Self.gate.leave()
    }

    /// Swift Testing starts every test at once; a few worlds at a time get through sooner than
    /// dozens of servers starting together on a small machine.
    private static let gate = Gate(width: max(4, 2 * ProcessInfo.processInfo.activeProcessorCount))

    /// The bus address, handed to every pasteboard and to `pbctl`.
    var address: String { bus.address }

    /// The pasteboard `name` of this process, on the world's bus.
    func pasteboard(_ name: Pasteboard.Name = .general) -> Pasteboard {
        Pasteboard(name: name, address: address)
    }

    /// Runs the built `pbctl --address BUS ARGUMENTS...` with `input` on stdin: another process,
    /// with a connection of its own.
    func pbctl(_ arguments: String..., input: Data = Data()) async throws -> Outcome {
        try await runProgram(try Paths.product("pbctl"), ["--address", address] + arguments, input: input)
    }

    /// A pasteboard on an address where no bus listens.
    static func noServerPasteboard() -> Pasteboard {
        Pasteboard(name: .general, address: "unix:path=" + FileManager.default.temporaryDirectory.appendingPathComponent("pbtest-none-\(UUID().uuidString)").path)
    }

    /// ``pbctl(_:input:)`` with the UTF-8 of `input` on stdin.
    func pbctl(_ arguments: String..., input: String) async throws -> Outcome {
        try await runProgram(try Paths.product("pbctl"), ["--address", address] + arguments, input: Data(input.utf8))
    }
}

// MARK: - Another process

/// What a finished program left: its exit status and everything it wrote.
struct Outcome: Sendable, CustomStringConvertible {
    let status: Int32
    let stdout: Data
    let stderr: Data

    var out: String { String(decoding: stdout, as: UTF8.self) }
    var err: String { String(decoding: stderr, as: UTF8.self) }
    var description: String { "status \(status)\nstdout: \(out)\nstderr: \(err)" }
}

/// Runs `executable` to completion with `input` on stdin, killing it after `timeout`.
///
/// Standard input, output and error are files of their own rather than pipes, and the child
/// inherits no other descriptor: a program started by one test can never hold another test's
/// pipe open (which Foundation's `Process` allows when tests spawn at the same moment).
func runProgram(_ executable: String, _ arguments: [String], input: Data = Data(), timeout: Duration = .seconds(30)) async throws -> Outcome {
    let directory = FileManager.default.temporaryDirectory.appendingPathComponent("pbtest-run-\(UUID().uuidString)")
    try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
    defer { try? FileManager.default.removeItem(at: directory) }
    let stdinPath = directory.appendingPathComponent("stdin").path
    let stdoutPath = directory.appendingPathComponent("stdout").path
    let stderrPath = directory.appendingPathComponent("stderr").path
    try input.write(to: URL(fileURLWithPath: stdinPath))

    var actions = posix_spawn_file_actions_t()
    posix_spawn_file_actions_init(&actions)
    defer { posix_spawn_file_actions_destroy(&actions) }
    posix_spawn_file_actions_addopen(&actions, 0, stdinPath, O_RDONLY, 0)
    posix_spawn_file_actions_addopen(&actions, 1, stdoutPath, O_WRONLY | O_CREAT | O_TRUNC, 0o600)
    posix_spawn_file_actions_addopen(&actions, 2, stderrPath, O_WRONLY | O_CREAT | O_TRUNC, 0o600)
    closeDescriptors(from: 3, in: &actions)

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
    posix_spawnattr_setflags(&attributes, Int16(POSIX_SPAWN_SETSIGMASK | POSIX_SPAWN_SETSIGDEF))

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

    let deadline = ContinuousClock.now + timeout
    var status: Int32 = 0
    while true {
        let reaped = waitpid(pid, &status, WNOHANG)
        if reaped == pid { break }
        if reaped < 0, errno != EINTR { throw TestSupportError("waitpid: \(String(cString: strerror(errno)))") }
        if ContinuousClock.now > deadline {
            kill(pid, SIGKILL)
            _ = waitpid(pid, &status, 0)
            throw TestSupportError("\(executable) \(arguments) did not finish within \(timeout)")
        }
        try await Task.sleep(for: .milliseconds(5))
    }
    let signal = status & 0x7f
    return Outcome(
        status: signal == 0 ? (status >> 8) & 0xff : 128 + signal,
        stdout: (try? Data(contentsOf: URL(fileURLWithPath: stdoutPath))) ?? Data(),
        stderr: (try? Data(contentsOf: URL(fileURLWithPath: stderrPath))) ?? Data())
}

/// Starts `executable` in the background with standard input on /dev/null and standard output
/// and error appended to `output`, inheriting no other descriptor; returns its process id.
func spawnInBackground(_ executable: String, _ arguments: [String], output: String) throws -> pid_t {
    var actions = posix_spawn_file_actions_t()
    posix_spawn_file_actions_init(&actions)
    defer { posix_spawn_file_actions_destroy(&actions) }
    posix_spawn_file_actions_addopen(&actions, 0, "/dev/null", O_RDONLY, 0)
    posix_spawn_file_actions_addopen(&actions, 1, output, O_WRONLY | O_CREAT | O_APPEND, 0o600)
    posix_spawn_file_actions_adddup2(&actions, 1, 2)
    closeDescriptors(from: 3, in: &actions)
    var environment = ProcessInfo.processInfo.environment
    environment["DBUS_SESSION_BUS_ADDRESS"] = nil
    let argv = ([executable] + arguments).map { strdup($0) } + [nil]
    let envp = environment.map { strdup("\($0.key)=\($0.value)") } + [nil]
    defer {
        argv.forEach { free($0) }
        envp.forEach { free($0) }
    }
    var pid = pid_t()
    let result = posix_spawn(&pid, executable, &actions, nil, argv, envp)
    guard result == 0 else { throw TestSupportError("cannot start \(executable): \(String(cString: strerror(result)))") }
    return pid
}

/// Closes every descriptor from `lowest` up in the child, atomically with glibc's
/// `posix_spawn_file_actions_addclosefrom_np`, or one by one where it is missing.
private func closeDescriptors(from lowest: Int32, in actions: inout posix_spawn_file_actions_t) {
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

/// Records an issue unless `outcome` succeeded with nothing on stderr.
func expectSuccess(_ outcome: Outcome, sourceLocation: SourceLocation = #_sourceLocation) {
    #expect(outcome.status == 0, "\(outcome)", sourceLocation: sourceLocation)
    #expect(outcome.err == "", "\(outcome)", sourceLocation: sourceLocation)
}

// MARK: - Watching the bus

/// `dbus-monitor` on a world's bus, recording every method call addressed to the server: what
/// shows that a client called, or never called, a method.
final class CallMonitor: Sendable {
    /// Whether `dbus-monitor` is installed; tests that need it are skipped without it.
    static let isAvailable = (try? Paths.executable(named: "dbus-monitor")) != nil

    private let pid: pid_t
    private let output: String

    /// Starts the monitor and returns once it sees calls: it calls `ChangeCount` on `probe`
    /// until one shows.
    init(_ world: World, probe: Pasteboard) async throws {
        output = FileManager.default.temporaryDirectory.appendingPathComponent("pbtest-monitor-\(UUID().uuidString)").path
        pid = try spawnInBackground(
            try Paths.executable(named: "dbus-monitor"),
            ["--address", world.address, "--profile", "type='method_call',destination='\(PasteboardProxy.busName)'"],
            output: output)
        let deadline = ContinuousClock.now + .seconds(5)
        while !members.contains("ChangeCount") {
            guard ContinuousClock.now < deadline else { throw TestSupportError("dbus-monitor saw no call within 5 s:\n\(log)") }
            _ = try await probe.changeCount
            try await Task.sleep(for: .milliseconds(20))
        }
    }

    deinit {
        kill(pid, SIGKILL)
        var status: Int32 = 0
        while waitpid(pid, &status, 0) < 0, errno == EINTR {}
        try? FileManager.default.removeItem(atPath: output)
    }

    /// Everything the monitor wrote.
    var log: String {
        (try? String(contentsOfFile: output, encoding: .utf8)) ?? ""
    }

    /// The methods called so far, in order (`--profile` lines: type, time, serial, sender,
    /// destination, path, interface, member).
    var members: [String] {
        log.split(separator: "\n").compactMap { line in
            let fields = line.split(separator: "\t", omittingEmptySubsequences: false)
            guard fields.first == "mc", fields.count >= 8 else { return nil }
            return String(fields[7])
        }
    }
}

// MARK: - Waiting

/// Polls `condition` every 10 ms until it holds or `timeout` passes; returns whether it held.
/// It runs on the caller's actor, so a `@MainActor` test can poll main-actor state.
func eventually(
    isolation: isolated (any Actor)? = #isolation,
    timeout: Duration = .seconds(5), _ condition: () async throws -> Bool
) async rethrows -> Bool {
    let deadline = ContinuousClock.now + timeout
    while true {
        if try await condition() { return true }
        if ContinuousClock.now > deadline { return false }
        try? await Task.sleep(for: .milliseconds(10))
    }
}

/// Values gathered by one task and read by another.
final class Collected<Value: Sendable>: Sendable {
    private let values = Mutex<[Value]>([])

    func append(_ value: Value) {
        values.withLock { $0.append(value) }
    }

    var all: [Value] {
        values.withLock { $0 }
    }
}

/// A flag set once, from any task.
final class Flag: Sendable {
    private let value = Mutex(false)

    func set() {
        value.withLock { $0 = true }
    }

    var isSet: Bool { value.withLock { $0 } }
}

/// Collects a pasteboard's changes in a task of its own, and makes sure the subscription is in
/// place before the test goes on: it writes to the pasteboard from this process until the
/// consumer sees one of those writes (the sequence reports only what happens once it has
/// subscribed, and subscribing takes a round trip to the bus).
final class ChangeRecorder: Sendable {
    let changes = Collected<PasteboardChange>()
    let task: Task<Void, Never>
    private let finished = Flag()

    init(_ sequence: PasteboardChanges) {
        let changes = changes
        let finished = finished
        task = Task {
            for await change in sequence {
                changes.append(change)
            }
            finished.set()
        }
    }

    /// Whether the consuming loop has ended.
    var hasFinished: Bool { finished.isSet }

    /// Writes a marker to `pasteboard` until the recorder sees a change of it; returns the
    /// change count to look beyond.
    func waitUntilSubscribed(by pasteboard: Pasteboard, sourceLocation: SourceLocation = #_sourceLocation) async throws -> Int {
        let deadline = ContinuousClock.now + .seconds(5)
        while ContinuousClock.now < deadline {
            try await pasteboard.setString("subscribed?")
            let count = try await pasteboard.changeCount
            if await eventually(timeout: .milliseconds(200), { self.changes.all.contains { $0.name == pasteboard.name && $0.changeCount == count } }) {
                return count
            }
        }
        Issue.record("the change sequence saw none of this process's writes within 5 s", sourceLocation: sourceLocation)
        throw TestSupportError("not subscribed")
    }

    /// The first change recorded that satisfies `predicate`, waiting up to `timeout`.
    func first(timeout: Duration = .seconds(5), where predicate: @escaping (PasteboardChange) -> Bool) async -> PasteboardChange? {
        _ = await eventually(timeout: timeout) { self.changes.all.contains(where: predicate) }
        return changes.all.first(where: predicate)
    }
}

// MARK: - Data

/// `count` bytes of pseudo-random data.
func randomBytes(_ count: Int) -> Data {
    var generator = SystemRandomNumberGenerator()
    var data = Data(count: count)
    data.withUnsafeMutableBytes { buffer in
        let words = buffer.bindMemory(to: UInt64.self)
        for index in words.indices { words[index] = generator.next() }
        for index in (words.count * 8)..<count { buffer[index] = UInt8.random(in: 0...255) }
    }
    return data
}

/// A new file in the temporary directory holding `data`, deleted by the caller.
func temporaryFile(_ data: Data, extension pathExtension: String = "bin") throws -> URL {
    let url = FileManager.default.temporaryDirectory.appendingPathComponent("pbtest-\(UUID().uuidString).\(pathExtension)")
    try data.write(to: url)
    return url
}

/// The names in the temporary directory that start with `prefix`.
func temporaryEntries(prefix: String) -> Set<String> {
    let names = (try? FileManager.default.contentsOfDirectory(atPath: FileManager.default.temporaryDirectory.path)) ?? []
    return Set(names.filter { $0.hasPrefix(prefix) })
}

// MARK: - Concurrency

/// An asynchronous counting semaphore.
final class Gate: Sendable {
    private let state: Mutex<(free: Int, waiting: [CheckedContinuation<Void, Never>])>

    init(width: Int) {
        state = Mutex((width, []))
    }

    /// Waits until fewer than `width` callers are inside.
    func enter() async {
        await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
            let admitted = state.withLock { state in
                guard state.free > 0 else {
                    state.waiting.append(continuation)
                    return false
                }
                state.free -= 1
                return true
            }
            if admitted { continuation.resume() }
        }
    }

    /// Lets the next waiting caller in.
    func leave() {
        let next = state.withLock { state in
            guard !state.waiting.isEmpty else {
                state.free += 1
                return nil as CheckedContinuation<Void, Never>?
            }
            return state.waiting.removeFirst()
        }
        next?.resume()
    }
}
