import DBus
import Foundation
import Testing
import TestSupport

/// The write option `concealed`: a secret is never on disk (large data lives in memory), its
/// `Changed` carries no types, and after a restart its pasteboard is empty with a count no
/// lower than before.
struct ConcealedTests {
    static let text = "text/plain;charset=utf-8"
    static let concealed: [(String, DBusValue)] = [("concealed", .boolean(true))]

    @Test func changedCarriesNoTypesButTheDataReadsBack() async throws {
        let h = try await Harness()
        let signals = try await h.recordSignals()
        #expect(try await h.write([[(Self.text, "hunter2".bytes), ("text/html", "<b>hunter2</b>".bytes)]], options: Self.concealed) == 1)
        let big = payload(repeating: "hunter2", count: 200_000)
        #expect(try await h.writeFd([[("application/octet-stream", try Descriptors.file(big))]], to: "fd", options: Self.concealed) == 1)
        #expect(await signals.announcements(2) == [Announcement("general", 1, []), Announcement("fd", 1, [])])
        // For now, the data reads back like any other, by every read method.
        #expect(try await h.types() == (1, [Self.text, "text/html"]))
        #expect(try await h.items().items == [.init(types: [Self.text, "text/html"], sizes: [7, 14])])
        // Items says so, for clipboard managers that must not record it.
        #expect(try await h.call("Items", [.string("general")]).last?.arrayValue?.first?.dictionaryEntries?.first { $0.key == .string("concealed") }?.value == .variant(.boolean(true)))
        try await h.write(text: "plain", to: "plain")
        #expect(try await h.call("Items", [.string("plain")]).last?.arrayValue?.first?.dictionaryEntries?.map(\.key) == [.string("types"), .string("sizes")])
        #expect(try await h.readData(Self.text) == (1, "hunter2".bytes))
        #expect(try await h.readBest(["text/html"]) == (1, "text/html", "<b>hunter2</b>".bytes))
        #expect(try await h.readFdBytes("text/html").data == "<b>hunter2</b>".bytes)
        #expect(try await h.readFdBytes("application/octet-stream", in: "fd") == (1, big))
        #expect(try await h.listPasteboards().sorted() == ["fd", "general", "plain"])
    }

    @Test func aSecretIsNeverOnDisk() async throws {
        let h = try await Harness()
        let secret = uniqueMarker("concealed-secret")
        // Plain writes of other markers show that the search does find data in the store: in
        // the database, and in the blob files of large payloads.
        let control = uniqueMarker("plain-control")
        // (A small write reaches the database from the commit log within a moment.)
        try await h.write(text: control, to: "control")
        #expect(await eventually(timeout: .seconds(20)) {
            StateFiles.holding(control, under: h.server.stateDirectory).contains { $0.contains(".sqlite") }
        }, "the plain control is not found in the database: \(StateFiles.holding(control, under: h.server.stateDirectory))")
        let largeControl = uniqueMarker("plain-large-control")
        try await h.writeFd([[("application/octet-stream", try Descriptors.file(payload(repeating: largeControl, count: 100_000)))]], to: "large-control")
        let inBlob = StateFiles.holding(largeControl, under: h.server.stateDirectory)
        #expect(inBlob.contains { $0.contains("blobs/") }, "the large plain control is not found in a blob file: \(inBlob)")

        // Inline, small and over 64 KiB (which the store would keep in a file of its own) ...
        let small = Array(secret.utf8)
        let large = payload(repeating: secret, count: 100_000)
        #expect(try await h.write([[(Self.text, small)], [("application/octet-stream", large)]], options: Self.concealed) == 1)
        // ... and through descriptors, a file and a pipe, well over 64 KiB.
        let huge = payload(repeating: secret, count: 1 << 20)
        let (pipe, feeder) = try PipeFeeder.start(count: 4) { _ in payload(repeating: secret, count: 100_000) }
        #expect(try await h.writeFd([[("application/octet-stream", try Descriptors.file(huge))], [(Self.text, pipe)]], to: "fd", options: Self.concealed) == 1)
        #expect(await feeder.wait())

        // Everything reads back, from memory.
        #expect(try await h.readData(Self.text) == (1, small))
        #expect(try await h.readFdBytes("application/octet-stream", item: 1) == (1, large))
        #expect(try await h.readFdBytes("application/octet-stream", in: "fd") == (1, huge))
        #expect(try await h.readFdBytes(Self.text, item: 1, in: "fd").data.count == 400_000)
        StateFiles.expectAbsent(secret, from: h.server, "while running")
        // Replaced by plain contents, the secret does not go into the history's store either.
        #expect(try await h.write(text: "plain") == 2)
        StateFiles.expectAbsent(secret, from: h.server, "after a plain write replaced it")

        h.server.kill9()
        StateFiles.expectAbsent(secret, from: h.server, "after a crash")
        try await h.server.restart()
        StateFiles.expectAbsent(secret, from: h.server, "after the restart")
        #expect(try await h.readData(Self.text) == (2, "plain".bytes))
        // The secret vanished with the restart: a change, so its count moved on by one (on a
        // shared store, whose counts only the database moves, it stays).
        #expect(try await h.types("fd") == (h.server.sharesCounts ? 1 : 2, []))
        #expect(try await h.readData(Self.text, in: "control") == (1, Array(control.utf8)))
        // A clean stop writes nothing of it either.
        #expect(await h.server.terminate() == 0)
        StateFiles.expectAbsent(secret, from: h.server, "after a clean stop")
    }

    @Test func afterACrashThePasteboardIsEmptyWithACountNoLower() async throws {
        let h = try await Harness()
        try await h.write(text: "plain")
        #expect(try await h.write([[(Self.text, "secret".bytes)]], options: Self.concealed) == 2)
        let before = try await h.changeCount()
        h.server.kill9()
        try await h.server.restart()
        let after = try await h.types()
        #expect(after.count >= before)
        #expect(after.types.isEmpty)
        #expect(try await h.items().items.isEmpty)
        // Not even the plain contents the secret replaced come back.
        await h.expectFailure("NoSuchItem", "ReadData", [.string("general"), .uint32(0), .string(Self.text), .uint64(0)])
        #expect(try await h.listPasteboards() == ["general"])
        // The count goes on upwards.
        #expect(try await h.write(text: "next") > after.count)
        // And the same after a clean stop.
        #expect(try await h.write([[(Self.text, "secret".bytes)]], options: Self.concealed) == after.count + 2)
        try await h.server.restart()
        #expect(try await h.types().count >= after.count + 2)
        #expect(try await h.types().types.isEmpty)
    }

    @Test func appendingToASecretKeepsItConcealed() async throws {
        let h = try await Harness()
        let secret = uniqueMarker("appended-secret")
        let signals = try await h.recordSignals()
        #expect(try await h.write([[(Self.text, "secret".bytes)]], options: Self.concealed) == 1)
        // Plain items appended to a secret are concealed with it ...
        #expect(try await h.write([[("text/html", Array(secret.utf8))]], options: [("append", .boolean(true))]) == 2)
        // ... and a secret appended to plain items conceals them all.
        try await h.write(text: "plain", to: "mixed")
        #expect(try await h.write([[("text/html", "more".bytes)]], to: "mixed", options: [("append", .boolean(true)), ("concealed", .boolean(true))]) == 2)
        #expect(await signals.announcements(4) == [
            Announcement("general", 1, []), Announcement("general", 2, []),
            Announcement("mixed", 1, [Self.text]), Announcement("mixed", 2, []),
        ])
        #expect(try await h.types() == (2, [Self.text, "text/html"]))
        #expect(try await h.readData("text/html", item: 1) == (2, Array(secret.utf8)))
        StateFiles.expectAbsent(secret, from: h.server, "while running")

        h.server.kill9()
        try await h.server.restart()
        StateFiles.expectAbsent(secret, from: h.server, "after the restart")
        #expect(try await h.items().items.isEmpty)
        #expect(try await h.items("mixed").items.isEmpty)
    }

    @Test func clearingEndsTheConcealment() async throws {
        let h = try await Harness()
        let signals = try await h.recordSignals()
        #expect(try await h.write([[(Self.text, "secret".bytes)]], options: Self.concealed) == 1)
        #expect(try await h.clear() == 2)
        #expect(try await h.write([[(Self.text, "open".bytes)]], options: [("append", .boolean(true))]) == 3)
        // And a plain write replacing a secret is plain.
        #expect(try await h.write([[(Self.text, "secret".bytes)]], to: "replaced", options: Self.concealed) == 1)
        #expect(try await h.write(text: "open", to: "replaced") == 2)
        #expect(await signals.announcements(5) == [
            Announcement("general", 1, []), Announcement("general", 2, []), Announcement("general", 3, [Self.text]),
            Announcement("replaced", 1, []), Announcement("replaced", 2, [Self.text]),
        ])
        h.server.kill9()
        try await h.server.restart()
        #expect(try await h.readData(Self.text) == (3, "open".bytes))
        #expect(try await h.readData(Self.text, in: "replaced") == (2, "open".bytes))
    }
}
