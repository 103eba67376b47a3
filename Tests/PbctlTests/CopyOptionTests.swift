import Foundation
import Testing
import TestSupport

// PENDING SERVER SUPPORT: the server refuses the write options `concealed`, `transient` and
// `expires-in-ms` with InvalidArgument for now, so `pbctl copy` exits 65. When it implements
// them, delete `refusedForNow` and remove the `.disabled` traits below.

/// `pbctl copy --concealed`, `--transient` and `--expires`.
struct CopyOptionTests {
    static let pending = "the server does not implement concealed, transient and expires-in-ms yet"

    @Test(arguments: [
        (["--concealed"], "concealed"),
        (["--transient"], "transient"),
        (["--expires", "5"], "expires-in-ms"),
    ])
    func refusedForNow(options: [String], key: String) async throws {
        let world = try await PbctlHarness()
        let result = try await runPbctl(["--address", world.bus.address, "copy"] + options, input: Data("secret".utf8))
        expect(result, status: 65, stdout: "", stderr: "pbctl: the option '\(key)' is not supported by this version of pasteboardd yet; leave it out\n")
        // Refused means not written.
        expectSuccess(try await world.pbctl("count"), stdout: "0\n")
    }

    @Test(.disabled(Comment(rawValue: pending)))
    func concealed() async throws {
        let world = try await PbctlHarness()
        let watcher = try world.watch("watch")
        defer { watcher.stop() }
        let skipped = try await watcher.prime(world) { "general \($0) text/plain;charset=utf-8" }
        let count = try await world.changeCount()
        expectSuccess(try await world.pbctl("copy", "--concealed", input: "hunter2"))
        expectSuccess(try await world.pbctl("paste"), stdout: "hunter2")
        // Changed carries no types for a secret.
        #expect(Array(try await watcher.waitForLines(skipped + 1).dropFirst(skipped)) == ["general \(count + 1)"])
        let history = try await world.pbctl("history")
        #expect(history.status == 0)
        #expect(!history.out.split(separator: "\n").contains { $0.hasPrefix("\(count + 1)\t") }, "\(history.out)")
    }

    @Test(.disabled(Comment(rawValue: pending)))
    func transient() async throws {
        let world = try await PbctlHarness()
        expectSuccess(try await world.pbctl("copy", input: "kept"))
        expectSuccess(try await world.pbctl("copy", "--transient", input: "passing"))
        expectSuccess(try await world.pbctl("paste"), stdout: "passing")
        expectSuccess(try await world.pbctl("types"), stdout: "text/plain;charset=utf-8\n")
        let history = try await world.pbctl("history")
        #expect(history.status == 0)
        #expect(!history.out.split(separator: "\n").contains { $0.hasPrefix("2\t") }, "\(history.out)")
    }

    @Test(.disabled(Comment(rawValue: pending)))
    func expires() async throws {
        let world = try await PbctlHarness()
        expectSuccess(try await world.pbctl("copy", "--expires", "0.5", input: "brief"))
        expectSuccess(try await world.pbctl("paste"), stdout: "brief")
        let deadline = ContinuousClock.now + .seconds(10)
        while try await world.changeCount() < 2, ContinuousClock.now < deadline {
            try await Task.sleep(for: .milliseconds(100))
        }
        expectSuccess(try await world.pbctl("count"), stdout: "2\n")
        expect(try await world.pbctl("paste"), status: 1, stdout: "", stderr: "pbctl: 'general' is empty\n")
    }
}
