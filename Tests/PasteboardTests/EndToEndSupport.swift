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
    /// Inside ``gate`` for as long as the value lives.
    private let pass: Gate.Pass
    let bus: TestBus
    /// Nil when the world was made with `server: false`.
    let server: TestServer?

    /// - Parameters:
    ///   - server: Whether to start `pasteboardd` on the bus.
    ///   - limits: `KEY=VALUE` settings for the server's `--limit`.
    init(server: Bool = true, limits: [String] = []) async throws {
        // A write to a pipe or descriptor the other end has closed must fail, not kill the tests.
        signal(SIGPIPE, SIG_IGN)
        pass = await Self.gate.pass()
        bus = try await TestBus()
        self.server = server ? try await TestServer(bus: bus, limits: limits) : nil
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
        pid = try spawnDetached(
            try Paths.executable(named: "dbus-monitor"),
            ["--address", world.address, "--profile", "type='method_call',destination='\(PasteboardProxy.busName)'"],
            standardOutput: .appending(output), standardError: .standardOutput)
        let deadline = ContinuousClock.now + .seconds(20)
        while !members.contains("ChangeCount") {
            guard ContinuousClock.now < deadline else { throw TestSupportError("dbus-monitor saw no call within 20 s:\n\(log)") }
            _ = try await probe.changeCount
            try await Task.sleep(for: .milliseconds(20))
        }
    }

    deinit {
        kill(pid, SIGKILL)
        _ = reap(pid)
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

    /// Writes markers to `pasteboard` until the recorder sees a change of any of them, then
    /// waits for the change of the last, so that nothing of the priming is still on its way;
    /// returns the change count to look beyond.
    func waitUntilSubscribed(by pasteboard: Pasteboard, sourceLocation: SourceLocation = #_sourceLocation) async throws -> Int {
        // Generous: on a loaded machine subscribing has been seen to take over 5 s, and a
        // subscription that works returns at once anyway.
        let timeout: Duration = .seconds(15)
        let deadline = ContinuousClock.now + timeout
        var markers: Set<Int> = []
        func seen(_ counts: Set<Int>) -> Bool {
            changes.all.contains { $0.name == pasteboard.name && counts.contains($0.changeCount) }
        }
        while ContinuousClock.now < deadline {
            try await pasteboard.setString("subscribed?")
            markers.insert(try await pasteboard.changeCount)
            if await eventually(timeout: .milliseconds(200), { seen(markers) }) {
                // Subscribed; the last marker's change may still be on its way.
                let last = markers.max()!
                guard await eventually(timeout: timeout, { seen([last]) }) else {
                    Issue.record("the change sequence saw an earlier marker but not the last (\(last)) within \(timeout)", sourceLocation: sourceLocation)
                    throw TestSupportError("not subscribed")
                }
                return last
            }
        }
        Issue.record("the change sequence saw none of this process's writes within \(timeout)", sourceLocation: sourceLocation)
        throw TestSupportError("not subscribed")
    }

    /// The first change recorded that satisfies `predicate`, waiting up to `timeout`.
    func first(timeout: Duration = .seconds(20), where predicate: @escaping (PasteboardChange) -> Bool) async -> PasteboardChange? {
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
