import DBus
import Foundation
import Testing
import TestSupport

/// `History` and `Restore`: earlier generations, newest first, bounded, durable, and never
/// holding concealed or transient contents.
struct HistoryTests {
    typealias Entry = (count: UInt64, time: Int64, types: [String])

    func history(_ h: Harness, _ name: String = "general", limit: UInt32 = 0) async throws -> [Entry] {
        let reply = try await h.call("History", [.string(name), .uint32(limit)])
        return try #require(reply.first?.arrayValue).map { entry in
            let fields = entry.structureFields ?? []
            return (fields[0].uint64Value ?? 0, fields[1].int64Value ?? 0, fields[2].stringArrayValue ?? [])
        }
    }

    func restore(_ h: Harness, _ count: UInt64, _ name: String = "general") async throws -> UInt64 {
        try #require(try await h.call("Restore", [.string(name), .uint64(count)]).first?.uint64Value)
    }

    @Test func listsTheCurrentContentsThenEarlierOnesNewestFirst() async throws {
        let h = try await Harness()
        let before = Int64(Date().timeIntervalSince1970 * 1000)
        try await h.write(text: "one")
        try await h.write([[("image/png", [1, 2, 3])]])
        try await h.write(text: "three", type: "text/html")
        let entries = try await history(h)
        #expect(entries.map(\.count) == [3, 2, 1])
        #expect(entries.map(\.types) == [["text/html"], ["image/png"], ["text/plain;charset=utf-8"]])
        let after = Int64(Date().timeIntervalSince1970 * 1000)
        #expect(entries.allSatisfy { $0.time >= before - 1000 && $0.time <= after + 1000 })
        #expect(entries.map(\.time) == entries.map(\.time).sorted(by: >))
        #expect(try await history(h, limit: 2).map(\.count) == [3, 2])
        #expect(try await history(h, "never-written").isEmpty)
    }

    @Test func restoreMakesAnEarlierGenerationCurrentAsANewChange() async throws {
        let h = try await Harness()
        let signals = try await h.recordSignals()
        try await h.write(text: "first")
        try await h.write(text: "second")
        #expect(try await restore(h, 1) == 3)
        #expect(try await h.readData("text/plain;charset=utf-8") == (3, Array("first".utf8)))
        let changed = await signals.wait(for: 3)
        #expect(changed.last?.changed?.count == 3)
        #expect(try await history(h).map(\.count) == [3, 2, 1])
        await h.expectFailure("NoSuchItem", "Restore", [.string("general"), .uint64(99)])
        await h.expectFailure("InvalidName", "Restore", [.string(""), .uint64(1)])
        #expect(try await h.changeCount() == 3)
    }

    /// `history-depth` counts `History`'s entries, the current contents among them.
    @Test func holdsHistoryDepthEntriesByDefault() async throws {
        let h = try await Harness()
        for index in 1...40 { try await h.write(text: "\(index)") }
        #expect(try await history(h).map(\.count) == Array((9...40).reversed()))
        #expect(try await history(h, limit: 1000).count == 32)
        await h.expectFailure("NoSuchItem", "Restore", [.string("general"), .uint64(8)])
    }

    /// With no history at all, nothing is listed and nothing can be restored, not even the
    /// current contents.
    @Test func aDepthOfZeroKeepsNone() async throws {
        let h = try await Harness(limits: ["history-depth=0"])
        try await h.write(text: "one")
        try await h.write(text: "two")
        #expect(try await history(h).isEmpty)
        await h.expectFailure("NoSuchItem", "Restore", [.string("general"), .uint64(2)])
        await h.expectFailure("NoSuchItem", "Restore", [.string("general"), .uint64(1)])
    }

    @Test func isBoundedByDepthAndBytes() async throws {
        let h = try await Harness(limits: ["history-depth=3", "max-history-bytes=250"])
        for text in ["a", "b", "c", "d"] { try await h.write(text: text) }
        // Three entries: the current contents, then at most two earlier ones.
        #expect(try await history(h).map(\.count) == [4, 3, 2])
        #expect(try await history(h, limit: 5).map(\.count) == [4, 3, 2])
        await h.expectFailure("NoSuchItem", "Restore", [.string("general"), .uint64(1)])
        // Two earlier generations of 200 bytes exceed 250 bytes: the older one goes.
        let block = [UInt8](repeating: 7, count: 200)
        try await h.write([[("application/octet-stream", block)]])
        try await h.write([[("application/octet-stream", block)]])
        try await h.write(text: "e")
        #expect(try await history(h).map(\.count) == [7, 6])
        // Contents over 250 bytes do not fit even alone: once replaced, no earlier generation
        // is kept, and none comes back at the next start.
        try await h.write([[("application/octet-stream", [UInt8](repeating: 8, count: 300))]])
        try await h.write(text: "f")
        #expect(try await history(h).map(\.count) == [9])
        try await h.server.restart()
        #expect(try await history(h).map(\.count) == [9])
        await h.expectFailure("NoSuchItem", "Restore", [.string("general"), .uint64(8)])
        await h.expectFailure("NoSuchItem", "Restore", [.string("general"), .uint64(7)])
    }

    /// Current contents that `History` does not list (concealed, transient, cleared) leave the
    /// whole depth to earlier generations; a listed write takes its place back.
    @Test func hiddenContentsLeaveTheWholeDepthToEarlierOnes() async throws {
        let h = try await Harness(limits: ["history-depth=3"])
        for text in ["a", "b", "c"] { try await h.write(text: text) }
        #expect(try await history(h).map(\.count) == [3, 2, 1])
        try await h.write([[("text/plain", Array("secret".utf8))]], options: [("concealed", .boolean(true))])
        #expect(try await history(h).map(\.count) == [3, 2, 1])
        #expect(try await restore(h, 1) == 5)
        #expect(try await h.readData("text/plain;charset=utf-8") == (5, Array("a".utf8)))
        try await h.write([[("text/plain", Array("passing".utf8))]], options: [("transient", .boolean(true))])
        #expect(try await history(h).map(\.count) == [5, 3, 2])
        try await h.clear()
        #expect(try await history(h).map(\.count) == [5, 3, 2])
        try await h.server.restart()
        #expect(try await history(h).map(\.count) == [5, 3, 2])
        try await h.write(text: "d")
        #expect(try await history(h).map(\.count) == [8, 5, 3])
        await h.expectFailure("NoSuchItem", "Restore", [.string("general"), .uint64(2)])
    }

    /// Concealed and transient contents never enter it; owner-only ones do, and stay private
    /// (see ``OwnerOnlyTests``).
    @Test func secretsNeverEnterTheHistory() async throws {
        let h = try await Harness()
        try await h.write(text: "public")
        try await h.write([[("text/plain", Array("hidden".utf8))]], options: [("concealed", .boolean(true))])
        try await h.write([[("text/plain", Array("passing".utf8))]], options: [("transient", .boolean(true))])
        try await h.write([[("text/plain", Array("mine".utf8))]], options: [("owner-only", .boolean(true))])
        try await h.write(text: "last")
        #expect(try await history(h).map(\.count) == [5, 4, 1])
        await h.expectFailure("NoSuchItem", "Restore", [.string("general"), .uint64(2)])
        await h.expectFailure("NoSuchItem", "Restore", [.string("general"), .uint64(3)])
    }

    /// Contents written to expire are listed by `History` while current (the contract leaves
    /// out only concealed and transient ones), and a restore keeps their deadline; replaced or
    /// expired they leave the history, so nothing meant to go away comes back, nor takes a
    /// place of the lasting ones.
    @Test func expiringContentsAreListedOnlyWhileCurrent() async throws {
        let h = try await Harness(limits: ["history-depth=3"])
        try await h.write(text: "one")
        try await h.write(text: "two")
        try await h.write(text: "three")
        #expect(try await h.write([[("text/plain", Array("one-time code".utf8))]], options: [("expires-in-ms", .uint64(600_000))]) == 4)
        #expect(try await history(h).map(\.count) == [4, 3, 2])
        #expect(try await restore(h, 4) == 5)
        #expect(try await h.readData("text/plain").data == Array("one-time code".utf8))
        #expect(try await history(h).map(\.count) == [5, 3, 2])
        try await h.write(text: "next")
        // 4 and 5 never entered the history, nor took the place of a lasting generation.
        #expect(try await history(h).map(\.count) == [6, 3, 2])
        await h.expectFailure("NoSuchItem", "Restore", [.string("general"), .uint64(4)])
        await h.expectFailure("NoSuchItem", "Restore", [.string("general"), .uint64(5)])
        #expect(try await restore(h, 2) == 7)

        // Restored, expiring contents keep their deadline: restored 12 s into 24, they go about
        // 12 s later. A deadline counted anew from the restore could not pass before 24 s after
        // the call was sent, which leaves a loaded machine 12 s to see the right one, and 12 s
        // for the restore to come before it.
        #expect(try await h.write([[("text/plain", Array("brief".utf8))]], to: "short", options: [("expires-in-ms", .uint64(24_000))]) == 1)
        try await Task.sleep(for: .seconds(12))
        let restoring = ContinuousClock.now
        #expect(try await restore(h, 1, "short") == 2)
        #expect(try await history(h, "short").map(\.count) == [2])
        #expect(await eventually(timeout: .seconds(40)) { (try? await h.changeCount("short")) == 3 })
        #expect(ContinuousClock.now - restoring < .seconds(24), "the restored copy expires on the first one's time")
        #expect(try await history(h, "short").isEmpty)
        await h.expectFailure("NoSuchItem", "Restore", [.string("short"), .uint64(2)])
        // After a restart: current expiring contents are listed, replaced ones were never saved.
        #expect(try await h.write([[("text/plain", Array("code".utf8))]], options: [("expires-in-ms", .uint64(600_000))]) == 8)
        try await h.server.restart()
        #expect(try await history(h).map(\.count) == [8, 7, 6])
    }

    @Test func survivesACrashWithFileBackedData() async throws {
        let h = try await Harness()
        let big = (0..<300_000).map { UInt8(truncatingIfNeeded: $0 &* 7) }
        try await h.writeFd([[("application/octet-stream", try Descriptors.file(big))]])
        try await h.write(text: "after")
        h.server.kill9()
        try await h.server.restart()
        #expect(try await history(h).map(\.count) == [2, 1])
        #expect(try await restore(h, 1) == 3)
        #expect(try await h.readFdBytes("application/octet-stream") == (3, big))
    }

    @Test func removeDropsTheHistory() async throws {
        let h = try await Harness()
        try await h.write(text: "one")
        try await h.write(text: "two")
        try await h.remove()
        #expect(try await history(h).isEmpty)
        h.server.kill9()
        try await h.server.restart()
        #expect(try await history(h).isEmpty)
        await h.expectFailure("NoSuchItem", "Restore", [.string("general"), .uint64(1)])
    }

    @Test func aLowerLimitHoldsFromTheNextStart() async throws {
        let h = try await Harness()
        for text in ["a", "b", "c", "d", "e", "f"] { try await h.write(text: text) }
        #expect(try await history(h).map(\.count) == [6, 5, 4, 3, 2, 1])
        #expect(await h.server.terminate() == 0)

        // The same store under a history of three entries: trimmed at start, and for good.
        let lower = try await TestServer(bus: h.bus, stateDirectory: h.server.stateDirectory, limits: ["history-depth=3"], store: h.server.store)
        #expect(try await history(h).map(\.count) == [6, 5, 4])
        await h.expectFailure("NoSuchItem", "Restore", [.string("general"), .uint64(3)])
        #expect(await lower.terminate() == 0)
        try await h.server.restart()
        #expect(try await history(h).map(\.count) == [6, 5, 4])
        #expect(try await restore(h, 4) == 7)
        #expect(try await h.readData("text/plain;charset=utf-8").data == Array("d".utf8))
    }
}
