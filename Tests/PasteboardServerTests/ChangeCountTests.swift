import DBus
import Foundation
import Testing
import TestSupport

/// Change counts (one per change, never backwards) and the `Changed` and `Removed` signals.
struct ChangeCountTests {
    @Test func everyMutatingCallAddsExactlyOne() async throws {
        let h = try await Harness()
        #expect(try await h.changeCount() == 0)
        #expect(try await h.write(text: "a") == 1)
        #expect(try await h.changeCount() == 1)
        #expect(try await h.clear() == 2)
        #expect(try await h.writeFd([[("text/plain", try Descriptors.pipe(holding: "b".bytes))]]) == 3)
        #expect(try await h.write([[("text/plain", "c".bytes)]], options: [("append", .boolean(true))]) == 4)
        try await h.remove()
        #expect(try await h.changeCount() == 5)
        #expect(try await h.write(text: "d") == 6)
        try await h.remove()
        try await h.remove()  // holds nothing: no change
        #expect(try await h.changeCount() == 7)
        #expect(try await h.clear() == 8)
    }

    @Test func readsAndFailuresDoNotCount() async throws {
        let h = try await Harness()
        try await h.write(text: "a")
        _ = try await h.types()
        _ = try await h.items()
        _ = try await h.readData("text/plain;charset=utf-8")
        _ = try await h.readBest(["text/plain"])
        _ = try await h.readFdBytes("text/plain;charset=utf-8")
        _ = try await h.canRead(["text/plain"])
        _ = try await h.availableType(["text/plain"])
        _ = try await h.listPasteboards()
        _ = try await h.createUnique()
        await h.expectFailure("InvalidType", "WriteItems", [.string("general"), Harness.inlineItems([[("bad type", [1])]]), Harness.options([])])
        await h.expectFailure("Conflict", "WriteItems", [.string("general"), Harness.inlineItems([[("text/plain", [1])]]), Harness.options([("if-change-count", .uint64(9))])])
        #expect(try await h.changeCount() == 1)
    }

    @Test func countsArePerName() async throws {
        let h = try await Harness()
        try await h.write(text: "1", to: "a")
        try await h.write(text: "2", to: "a")
        try await h.write(text: "3", to: "b")
        #expect(try await h.changeCount("a") == 2)
        #expect(try await h.changeCount("b") == 1)
        #expect(try await h.changeCount("c") == 0)
    }

    @Test func concurrentWritersGetDistinctConsecutiveCounts() async throws {
        let h = try await Harness()
        let writers = try (0..<4).map { _ in try h.connect() }
        let counts = try await withThrowingTaskGroup(of: UInt64.self) { group in
            for (index, writer) in writers.enumerated() {
                for round in 0..<10 {
                    group.addTask { try await h.write([[("text/plain", "\(index)-\(round)".bytes)]], on: writer) }
                }
            }
            return try await group.reduce(into: []) { $0.append($1) }
        }
        #expect(counts.sorted() == Array(1...40))
        #expect(try await h.changeCount() == 40)
    }

    @Test func changedFollowsEveryChangeInOrderAfterTheReply() async throws {
        let h = try await Harness()
        let signals = try await h.recordSignals()

        var replies: [Message] = []
        replies.append(try await h.reply("WriteItems", [.string("general"), Harness.inlineItems([[("text/html", [1]), ("text/plain", [2])], [("image/png", [3])]]), Harness.options([])]))
        replies.append(try await h.reply("ClearContents", [.string("general")]))
        replies.append(try await h.reply("WriteItemsFd", [.string("general"), Harness.descriptorItems([[("public.png", try Descriptors.pipe(holding: [4]))]]), Harness.options([])]))
        replies.append(try await h.reply("WriteItems", [.string("general"), Harness.inlineItems([[("text/plain", [5])]]), Harness.options([("append", .boolean(true))])]))
        replies.append(try await h.reply("WriteItems", [.string("other"), Harness.inlineItems([[("text/plain", [6])]]), Harness.options([])]))

        let received = await signals.wait(for: 5)
        #expect(received.count == 5)
        let changes = received.compactMap(\.changed)
        #expect(changes.map(\.name) == ["general", "general", "general", "general", "other"])
        #expect(changes.map(\.count) == [1, 2, 3, 4, 1])
        #expect(changes.map(\.types) == [["text/html", "text/plain", "image/png"], [], ["image/png"], ["image/png", "text/plain"], ["text/plain"]])
        #expect(replies.map { $0.arguments() } == [[.uint64(1)], [.uint64(2)], [.uint64(3)], [.uint64(4)], [.uint64(1)]])

        // Both come from the server's connection, which numbers what it sends in order: each
        // signal was sent after the reply to the call that caused it, so it arrives after it.
        for (reply, signal) in zip(replies, received) {
            #expect(signal.sender == reply.sender)
            #expect(signal.serial > reply.serial, "\(signal) was sent before its reply")
        }
        // No more than one signal per change.
        try await Task.sleep(for: .milliseconds(200))
        #expect(signals.signals.count == 5)
    }

    /// The server keeps the last `Changed` of recent pasteboards to copy for the next change
    /// with the same types (``ChangeSignals``): every copy must still carry its own name, count
    /// and types, whatever the name's length (which moves the count), when the types change
    /// or only their spelling does (`Text/Plain` is the same type, written as the write wrote
    /// it), and when more names than it keeps (300 in 256 slots) push one another out.
    @Test func repeatedChangesAnnounceTheirOwnCountsAndTypes() async throws {
        let h = try await Harness()
        let signals = try await h.recordSignals()
        let names = (1...20).map { String(repeating: "n", count: $0) } + (0..<280).map { "other-\($0)" }
        var expected: [(name: String, count: UInt64, types: [String])] = []
        for round in 0..<5 {
            let types = switch round {
            case 2: ["image/png", "text/plain"]
            case 3: ["text/plain"]
            default: ["Text/Plain"]
            }
            for name in names {
                let count = try await h.write([types.map { ($0, [UInt8(round)]) }], to: name)
                expected.append((name, count, types))
            }
        }
        let received = await signals.wait(for: expected.count, timeout: .seconds(20))
        let changes = received.compactMap(\.changed)
        #expect(changes.count == expected.count)
        #expect(changes.map(\.name) == expected.map(\.name))
        #expect(changes.map(\.count) == expected.map(\.count))
        #expect(changes.map(\.types) == expected.map(\.types))
        #expect(Set(expected.map(\.count)) == [1, 2, 3, 4, 5])
    }

    @Test func everyListenerSeesTheSameSignals() async throws {
        let h = try await Harness()
        let first = try await h.recordSignals()
        let second = try await h.recordSignals(on: try h.connect())
        try await h.write(text: "a")
        try await h.write(text: "b", to: "find")
        let one = await first.wait(for: 2)
        let two = await second.wait(for: 2)
        #expect(one.count == 2)
        #expect(one == two)
    }

    @Test func removeEmitsChangedThenRemoved() async throws {
        let h = try await Harness()
        try await h.write([[("text/plain", [1])], [("image/png", [2])]], to: "doomed")
        let signals = try await h.recordSignals()
        let reply = try await h.reply("Remove", [.string("doomed")])
        #expect(reply.arguments() == [])
        let received = await signals.wait(for: 2)
        #expect(received.map(\.member) == ["Changed", "Removed"])
        #expect(received.first?.arguments == [.string("doomed"), .uint64(2), .strings([])])
        #expect(received.last?.arguments == [.string("doomed")])
        #expect(received.allSatisfy { $0.serial > reply.serial })
        #expect(try await h.changeCount("doomed") == 2)
    }

    /// A cleared name holds no items but is listed: `Remove` is what takes it off the list,
    /// as a change (see docs/guarantees.md).
    @Test func removingAClearedNameUnlistsIt() async throws {
        let h = try await Harness()
        #expect(try await h.clear("cleared") == 1)
        #expect(try await h.listPasteboards() == ["cleared"])
        let signals = try await h.recordSignals()
        try await h.remove("cleared")
        let received = await signals.wait(for: 2)
        #expect(received.map(\.member) == ["Changed", "Removed"])
        #expect(received.first?.arguments == [.string("cleared"), .uint64(2), .strings([])])
        #expect(try await h.changeCount("cleared") == 2)
        #expect(try await h.listPasteboards() == [])
    }

    @Test func removingANameThatHoldsNothingDoesNothing() async throws {
        let h = try await Harness()
        try await h.write(text: "kept", to: "removed-twice")
        try await h.remove("removed-twice")
        let signals = try await h.recordSignals()
        try await h.remove("never-written")
        try await h.remove("removed-twice")
        #expect(try await h.changeCount("never-written") == 0)
        #expect(try await h.changeCount("removed-twice") == 2)
        #expect(try await h.listPasteboards() == [])
        // The next signal is the one for this write: the removes emitted none.
        try await h.write(text: "marker", to: "marker")
        let received = await signals.wait(for: 1)
        try await Task.sleep(for: .milliseconds(100))
        #expect(signals.signals.map(\.member) == ["Changed"])
        #expect(received.first?.changed?.name == "marker")
    }

    @Test func failedCallsEmitNothing() async throws {
        let h = try await Harness()
        try await h.write(text: "a")
        let signals = try await h.recordSignals()
        await h.expectFailure("InvalidName", "ClearContents", [.string("")])
        await h.expectFailure("InvalidArgument", "WriteItems", [.string("general"), Harness.inlineItems([[]]), Harness.options([])])
        await h.expectFailure("Conflict", "WriteItems", [.string("general"), Harness.inlineItems([[("text/plain", [1])]]), Harness.options([("if-change-count", .uint64(7))])])
        await h.expectFailure("InvalidArgument", "WriteItemsFd", [.string("general"), Harness.descriptorItems([[("text/plain", try Descriptors.pipe(holding: [1]))]]), Harness.options([("bogus", .boolean(true))])])
        try await h.write(text: "marker", to: "marker")
        _ = await signals.wait(for: 1)
        try await Task.sleep(for: .milliseconds(100))
        #expect(signals.signals.compactMap(\.changed?.name) == ["marker"])
    }

    @Test func countsNeverGoBackwardsAcrossRemoveAndRestart() async throws {
        let h = try await Harness()
        try await h.write(text: "1", to: "a")
        try await h.write(text: "2", to: "a")
        try await h.remove("a")
        try await h.clear("b")
        try await h.server.restart()
        #expect(try await h.changeCount("a") == 3)
        #expect(try await h.changeCount("b") == 1)
        #expect(try await h.write(text: "3", to: "a") == 4)
        try await h.remove("a")
        h.server.kill9()
        try await h.server.restart()
        #expect(try await h.changeCount("a") == 5)
        #expect(try await h.listPasteboards() == ["b"])
        #expect(try await h.clear("a") == 6)
    }
}
