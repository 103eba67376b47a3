import DBus
import Foundation
import Testing
import TestSupport

/// The write option `transient`: the contents never reach the disk, but unlike a secret their
/// types are announced.
struct TransientTests {
    static let text = "text/plain;charset=utf-8"
    static let transient: [(String, DBusValue)] = [("transient", .boolean(true))]

    @Test func changedCarriesTheTypes() async throws {
        let h = try await Harness()
        let signals = try await h.recordSignals()
        #expect(try await h.write([[(Self.text, "passing".bytes), ("text/html", "<i>passing</i>".bytes)]], options: Self.transient) == 1)
        #expect(try await h.writeFd([[("image/png", try Descriptors.pipe(holding: [0x89, 0x50]))]], options: Self.transient + [("append", .boolean(true))]) == 2)
        #expect(await signals.announcements(2) == [
            Announcement("general", 1, [Self.text, "text/html"]), Announcement("general", 2, [Self.text, "text/html", "image/png"]),
        ])
        #expect(try await h.readBest(["text/plain"]) == (2, Self.text, "passing".bytes))
        #expect(try await h.readData("image/png", item: 1) == (2, [0x89, 0x50]))
    }

    @Test func transientDataIsNeverOnDisk() async throws {
        let h = try await Harness()
        let marker = uniqueMarker("transient-data")
        let control = uniqueMarker("plain-control")
        try await h.write(text: control, to: "control")
        #expect(!StateFiles.holding(control, under: h.server.stateDirectory).isEmpty, "the plain control is not found on disk")

        let small = Array(marker.utf8)
        let large = payload(repeating: marker, count: 100_000)
        let huge = payload(repeating: marker, count: 300_000)
        #expect(try await h.write([[(Self.text, small)], [("application/octet-stream", large)]], options: Self.transient) == 1)
        #expect(try await h.writeFd([[("application/octet-stream", try Descriptors.file(huge))]], to: "fd", options: Self.transient) == 1)
        #expect(try await h.readData(Self.text) == (1, small))
        #expect(try await h.readFdBytes("application/octet-stream", item: 1) == (1, large))
        #expect(try await h.readFdBytes("application/octet-stream", in: "fd") == (1, huge))
        StateFiles.expectAbsent(marker, from: h.server, "while running")
        // Replaced by plain contents, the data does not go into the history's store either.
        #expect(try await h.write(text: "plain", to: "fd") == 2)
        StateFiles.expectAbsent(marker, from: h.server, "after a plain write replaced it")

        h.server.kill9()
        try await h.server.restart()
        StateFiles.expectAbsent(marker, from: h.server, "after the restart")
        let general = try await h.types()
        #expect(general.count >= 1 && general.types.isEmpty, "\(general)")
        #expect(try await h.readData(Self.text, in: "fd") == (2, "plain".bytes))
        #expect(try await h.readData(Self.text, in: "control") == (1, Array(control.utf8)))
        #expect(try await h.write(text: "next") > general.count)
    }

    /// Contents that do not survive a restart are a change, announced once the new server owns
    /// its name: a watcher that stayed on the bus misses nothing. (On a shared store they are
    /// dropped at the same count, as the other servers already hold them: no change.)
    @Test func theirLossAtARestartIsAnnounced() async throws {
        let h = try await Harness()
        let signals = try await h.recordSignals()
        #expect(try await h.write([[(Self.text, "passing".bytes)]], options: Self.transient) == 1)
        #expect(try await h.write([[(Self.text, "hunter2".bytes)]], to: "vault", options: [("concealed", .boolean(true))]) == 1)
        try await h.write(text: "kept", to: "plain")
        #expect(await signals.announcements(3).count == 3)
        h.server.kill9()
        try await h.server.restart()
        guard !h.server.sharesCounts else {
            #expect(try await h.types() == (1, []))
            #expect(try await h.types("vault") == (1, []))
            return
        }
        #expect(await signals.announcements(5).dropFirst(3) == [Announcement("general", 2, []), Announcement("vault", 2, [])])
        #expect(try await h.types() == (2, []))
    }

    @Test func aPlainWriteAfterwardsIsDurableAgain() async throws {
        let h = try await Harness()
        #expect(try await h.write([[(Self.text, "passing".bytes)]], options: Self.transient) == 1)
        #expect(try await h.write(text: "kept") == 2)
        // Plain items appended to transient ones stay off the disk with them.
        #expect(try await h.write([[(Self.text, "passing".bytes)]], to: "appended", options: Self.transient) == 1)
        #expect(try await h.write([[(Self.text, "kept too?".bytes)]], to: "appended", options: [("append", .boolean(true))]) == 2)
        h.server.kill9()
        try await h.server.restart()
        #expect(try await h.readData(Self.text) == (2, "kept".bytes))
        #expect(try await h.items("appended").items.isEmpty)
        #expect(try await h.changeCount("appended") >= 2)
    }
}
