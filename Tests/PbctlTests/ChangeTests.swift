import Foundation
import Testing
import TestSupport

/// `pbctl clear` and `remove`.
struct ChangeTests {
    @Test func clear() async throws {
        let world = try await PbctlHarness()
        expectSuccess(try await world.pbctl("copy", input: "hello"))
        expectSuccess(try await world.pbctl("clear"))
        expectSuccess(try await world.pbctl("count"), stdout: "2\n")
        expectSuccess(try await world.pbctl("types"))
        expectSuccess(try await world.pbctl("info", "--json"), stdout: #"{"name":"general","count":2,"items":[]}"# + "\n")
        expectSuccess(try await world.pbctl("list"), stdout: "general\n")
    }

    @Test func remove() async throws {
        let world = try await PbctlHarness()
        expectSuccess(try await world.pbctl("-p", "keep", "copy", input: "kept"))
        expectSuccess(try await world.pbctl("-p", "drop", "copy", input: "one"))
        expectSuccess(try await world.pbctl("-p", "drop", "copy", input: "two"))
        expectSuccess(try await world.pbctl("list"), stdout: "drop\nkeep\n")
        expectSuccess(try await world.pbctl("-p", "drop", "remove"))
        expectSuccess(try await world.pbctl("list"), stdout: "keep\n")
        // The count never goes backwards: the removal was a change too.
        expectSuccess(try await world.pbctl("-p", "drop", "count"), stdout: "3\n")
        expect(try await world.pbctl("-p", "drop", "paste"), status: 1, stdout: "", stderr: "pbctl: 'drop' is empty\n")
        expectSuccess(try await world.pbctl("-p", "keep", "paste"), stdout: "kept")
    }

    @Test func removingWhatHoldsNothingDoesNothing() async throws {
        let world = try await PbctlHarness()
        expectSuccess(try await world.pbctl("-p", "never", "remove"))
        expectSuccess(try await world.pbctl("-p", "never", "count"), stdout: "0\n")
        expectSuccess(try await world.pbctl("list"))
    }
}
