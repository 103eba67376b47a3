import Foundation
import Testing
import TestSupport

/// `pbctl history` and `pbctl restore COUNT`.
struct HistoryTests {
    @Test func historyListsGenerationsNewestFirst() async throws {
        let world = try await PbctlHarness()
        expectSuccess(try await world.pbctl("history"))
        expectSuccess(try await world.pbctl("copy", input: "one"))
        expectSuccess(try await world.pbctl("copy", "-t", "text/html", input: "<b>two</b>"))
        let result = try await world.pbctl("history")
        expect(result, status: 0, stderr: "")
        let lines = result.out.split(separator: "\n").map { $0.split(separator: "\t").map(String.init) }
        #expect(lines.map { $0.first } == ["2", "1"])
        #expect(lines.map { $0.last } == ["text/html", "text/plain;charset=utf-8"])
        // The middle column is an ISO 8601 time.
        #expect(lines.allSatisfy { $0.count == 3 && ISO8601DateFormatter().date(from: $0[1]) != nil })
        let limited = try await world.pbctl("history", "--limit", "1")
        #expect(limited.out.split(separator: "\n").count == 1)
    }

    @Test func restoreMakesAnEarlierCopyCurrent() async throws {
        let world = try await PbctlHarness()
        expectSuccess(try await world.pbctl("copy", input: "first"))
        expectSuccess(try await world.pbctl("copy", input: "second"))
        expectSuccess(try await world.pbctl("restore", "1"), stdout: "3\n")
        expectSuccess(try await world.pbctl("paste"), stdout: "first")
        let missing = try await world.pbctl("restore", "42")
        expect(missing, status: 1, stdout: "")
        #expect(missing.err.hasPrefix("pbctl: 'general' has no contents of change 42"))
        expect(try await world.pbctl("restore", "x"), status: 64, stdout: "")
    }

    @Test func concealedCopiesStayOutOfTheHistory() async throws {
        let world = try await PbctlHarness()
        expectSuccess(try await world.pbctl("copy", input: "visible"))
        expectSuccess(try await world.pbctl("copy", "--concealed", input: "hunter2"))
        expectSuccess(try await world.pbctl("copy", input: "after"))
        let result = try await world.pbctl("history")
        #expect(result.out.split(separator: "\n").map { $0.split(separator: "\t").first.map(String.init) } == ["3", "1"])
    }
}
