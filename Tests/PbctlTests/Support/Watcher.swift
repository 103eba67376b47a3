import Foundation
import Testing
import TestSupport

/// A `pbctl watch` running in the background with its output collected as it comes; killed
/// when stopped or released.
///
/// ```swift
/// let watcher = try world.watch("watch", "--json")
/// let skipped = try await watcher.prime(world) { "general \($0) text/plain;charset=utf-8" }
/// try await world.pbctl("copy", input: "one")
/// let lines = try await watcher.waitForLines(skipped + 1)
/// ```
final class Watcher: Sendable {
    /// The default time to wait for output.
    static let patience: Duration = .seconds(30)

    private let child: ChildProcess
    /// Where ``lines`` come from instead of stdout: a file an `--exec` command appends to.
    private let file: String?
    /// Files of the test's to delete with it (a gate its commands wait on, say).
    private let companions: [String]

    /// Starts the built `pbctl` with `arguments`.
    ///
    /// - Parameters:
    ///   - environment: added to the watcher's environment (and so to its `--exec` commands').
    ///   - file: where ``lines`` are read from instead of stdout.
    init(_ arguments: [String], environment: [String: String] = [:], linesFrom file: String? = nil, removing companions: [String] = []) throws {
        self.file = file
        self.companions = companions
        child = try ChildProcess(try Paths.product("pbctl"), arguments, environment: environment)
        child.send(Data())
    }

    /// The watcher's process id.
    var pid: pid_t { child.pid }

    /// Its exit status (128 + the signal for a signal), or nil while it runs.
    var exitStatus: Int32? { child.exitStatus }

    /// Kills the watcher (it never ends by itself) and waits until it is gone; the file its
    /// lines were read from goes too.
    func stop() {
        child.kill()
        for path in [file].compactMap({ $0 }) + companions { try? FileManager.default.removeItem(atPath: path) }
    }

    /// The complete lines printed so far.
    var lines: [String] {
        let data = file.map { FileManager.default.contents(atPath: $0) ?? Data() } ?? child.stdout
        let text = String(decoding: data, as: UTF8.self)
        guard let end = text.lastIndex(of: "\n") else { return [] }
        return text[..<end].split(separator: "\n", omittingEmptySubsequences: false).map(String.init)
    }

    /// What the watcher wrote to stderr so far.
    var errorText: String {
        String(decoding: child.stderr, as: UTF8.self)
    }

    /// Polls the output until `done` holds for its lines, and returns them.
    ///
    /// - Throws: when `timeout` passes first, with the output so far.
    @discardableResult
    func waitUntil(timeout: Duration = Watcher.patience, _ what: String, _ done: ([String]) -> Bool) async throws -> [String] {
        let deadline = ContinuousClock.now + timeout
        while true {
            let lines = self.lines
            if done(lines) { return lines }
            guard ContinuousClock.now < deadline else {
                throw TestSupportError("pbctl watch: no \(what) within \(timeout); lines so far: \(lines); stderr: \(errorText)")
            }
            try await Task.sleep(for: .milliseconds(20))
        }
    }

    /// Waits until at least `count` lines are out, and returns them all.
    @discardableResult
    func waitForLines(_ count: Int, timeout: Duration = Watcher.patience) async throws -> [String] {
        try await waitUntil(timeout: timeout, "\(count) lines") { $0.count >= count }
    }

    /// Makes sure the watcher listens before a test makes the changes it checks: writes to
    /// pasteboard `name` until the watcher reports one change, then waits for the line of the
    /// last write, so that nothing of the priming is still on its way.
    ///
    /// - Parameters:
    ///   - line: the line the watcher prints for the change of `name` with a given count.
    /// - Returns: how many lines the priming produced; the test's own lines follow them.
    func prime(_ world: PbctlHarness, name: String = "general", line: (UInt64) -> String) async throws -> Int {
        let deadline = ContinuousClock.now + Self.patience
        while lines.isEmpty {
            guard ContinuousClock.now < deadline else {
                throw TestSupportError("pbctl watch reported none of the priming changes; stderr: \(errorText)")
            }
            expectSuccess(try await world.pbctl("-p", name, "copy", input: "ready"))
            try await Task.sleep(for: .milliseconds(50))
        }
        let count = try await world.changeCount(name)
        return try await waitUntil("line for the priming change \(count)") { $0.contains(line(count)) }.count
    }
}

extension PbctlHarness {
    /// Starts `pbctl --address BUS ARGUMENTS...` in the background.
    func watch(_ arguments: String..., environment: [String: String] = [:], linesFrom file: String? = nil, removing companions: [String] = []) throws -> Watcher {
        try Watcher(["--address", bus.address] + arguments, environment: environment, linesFrom: file, removing: companions)
    }

    /// The change count of `name`, as `pbctl count` prints it.
    func changeCount(_ name: String = "general") async throws -> UInt64 {
        let result = try await pbctl("-p", name, "count")
        guard result.status == 0, let count = UInt64(result.out.trimmingCharacters(in: .newlines)) else {
            throw TestSupportError("pbctl count failed: \(result)")
        }
        return count
    }
}
