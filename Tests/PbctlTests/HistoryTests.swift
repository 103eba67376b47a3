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

    /// For scripts (a clipboard manager's): one JSON object per entry, the time as the server
    /// gives it, names escaped.
    @Test func historyAsJSONLines() async throws {
        let world = try await PbctlHarness()
        let before = UInt64(Date().timeIntervalSince1970 * 1000)
        expectSuccess(try await world.pbctl("-p", "a \"b\"", "copy", input: "one"))
        expectSuccess(try await world.pbctl("-p", "a \"b\"", "copy", "-t", "text/html", "-t", "text/plain", input: "<b>two</b>"))
        let result = try await world.pbctl("-p", "a \"b\"", "history", "--json")
        expect(result, status: 0, stderr: "")
        let lines = result.out.split(separator: "\n")
        #expect(lines.count == 2)
        let entries = try lines.map { try #require(JSONSerialization.jsonObject(with: Data($0.utf8)) as? [String: Any]) }
        #expect(entries.map { $0["name"] as? String } == ["a \"b\"", "a \"b\""])
        #expect(entries.map { $0["count"] as? Int } == [2, 1])
        #expect(entries.map { $0["types"] as? [String] } == [["text/html", "text/plain"], ["text/plain;charset=utf-8"]])
        let times = entries.compactMap { ($0["time"] as? NSNumber)?.uint64Value }
        #expect(times.count == 2 && times.allSatisfy { $0 >= before - 1_000 && $0 <= before + 60_000 })
        #expect(times[0] >= times[1])
        // The quick path and ArgumentParser's agree.
        #expect(try await world.pbctl("-p", "a \"b\"", "history", "--limit=1", "--json").out == lines[0] + "\n")
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
