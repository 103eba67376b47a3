import DBus
import Foundation
import Testing
import TestSupport

/// The write option `expires-in-ms`: the contents are cleared on time, as a change of their
/// own, also when the server was down at that time.
struct ExpiryTests {
    static let text = "text/plain;charset=utf-8"

    @Test func contentsAreClearedOnTimeWithOneChange() async throws {
        let h = try await Harness()
        // Listening from before the first write: its Changed follows its reply, and would
        // otherwise reach a subscription made just after it, or not.
        let signals = try await h.recordSignals()
        try await h.write(text: "before")
        #expect(await signals.announcements(1, timeout: .seconds(10)) == [Announcement("general", 1, [Self.text])])
        // Taken before the call: the server sets the expiry when the call reaches it, later.
        let written = ContinuousClock.now
        #expect(try await h.write([[(Self.text, "brief".bytes)], [("image/png", [1, 2])]], options: [("expires-in-ms", .uint64(6000))]) == 2)
        // Until then, the contents are there as written (checked when the reads were over
        // within the 6 s, which a stalled machine may pass).
        let read = try? await h.readData(Self.text)
        let types = try await h.types()
        if ContinuousClock.now - written < .seconds(6) {
            #expect(read.map { $0 == (2, "brief".bytes) } == true)
            #expect(types == (2, [Self.text, "image/png"]))
        }

        let announced = Array(await signals.announcements(3, timeout: .seconds(20)).dropFirst())
        let cleared = ContinuousClock.now - written
        #expect(announced == [Announcement("general", 2, [Self.text, "image/png"]), Announcement("general", 3, [])])
        #expect(cleared >= .milliseconds(5995) && cleared < .seconds(18), "cleared \(cleared) after a 6 s expiry")
        #expect(try await h.types() == (3, []))
        #expect(try await h.items().items.isEmpty)
        await h.expectFailure("NoSuchItem", "ReadData", [.string("general"), .uint32(0), .string(Self.text), .uint64(0)])
        #expect(try await h.listPasteboards() == ["general"])
        // Exactly one change: nothing more comes.
        try await Task.sleep(for: .milliseconds(300))
        #expect(signals.announcements.count == 3, "\(signals.announcements)")
        #expect(try await h.changeCount() == 3)
        // The next write goes on from there, without an expiry of its own.
        #expect(try await h.write(text: "after") == 4)
        try await Task.sleep(for: .milliseconds(500))
        #expect(try await h.readData(Self.text) == (4, "after".bytes))
    }

    @Test func writeItemsFdContentsExpireToo() async throws {
        let h = try await Harness()
        let signals = try await h.recordSignals()
        let data = payload(repeating: "expiring", count: 100_000)
        // Long enough that a loaded machine still reads it before the expiry.
        #expect(try await h.writeFd([[("application/octet-stream", try Descriptors.file(data))]], to: "fd", options: [("expires-in-ms", .uint64(10_000))]) == 1)
        #expect(try await h.readFdBytes("application/octet-stream", in: "fd") == (1, data))
        #expect(await signals.announcements(2, timeout: .seconds(25)) == [Announcement("fd", 1, ["application/octet-stream"]), Announcement("fd", 2, [])])
        #expect(try await h.items("fd") == (2, []))
    }

    @Test func anExpiryDueWhileTheServerIsDownClearsAtTheNextStart() async throws {
        let h = try await Harness()
        try await h.write(text: "plain", to: "other")
        let asked = ContinuousClock.now
        #expect(try await h.write([[(Self.text, "brief".bytes)]], options: [("expires-in-ms", .uint64(6000))]) == 1)
        let written = ContinuousClock.now
        // Killed at once: a graceful shutdown that took longer than the expiry would clear it
        // itself (the expiry leaves room for a busy machine between the write and the kill).
        h.server.kill9()
        // A machine that stalled the test for the 6 s let the server clear it before the kill,
        // its signal unheard: the case this test is about did not happen.
        guard ContinuousClock.now - asked < .seconds(6) else { return }
        try await Task.sleep(for: .milliseconds(6300) - (ContinuousClock.now - written))
        let signals = try await h.recordSignals()
        try await h.server.restart()
        // Cleared as soon as the server is back: empty, one change later.
        #expect(try await eventually(timeout: .seconds(10)) { try await h.types() == (2, []) })
        #expect(await signals.announcements(1, timeout: .seconds(15)) == [Announcement("general", 2, [])])
        #expect(try await h.items().items.isEmpty)
        // Only the expiring pasteboard.
        #expect(try await h.readData(Self.text, in: "other") == (1, "plain".bytes))
        try await Task.sleep(for: .milliseconds(200))
        #expect(signals.announcements.count == 1, "\(signals.announcements)")
    }

    @Test func theExpiryTimeSurvivesACrash() async throws {
        let h = try await Harness()
        // Listening from before the crash: a slow restart must not make the expiry's signal pass unseen.
        let signals = try await h.recordSignals()
        let written = ContinuousClock.now
        // 15 s: a restart after kill -9 on a loaded machine has taken longer than 8.
        #expect(try await h.write([[(Self.text, "brief".bytes)]], options: [("expires-in-ms", .uint64(15_000))]) == 1)
        _ = await signals.announcements(1, timeout: .seconds(5))
        h.server.kill9()
        try await h.server.restart()
        // Still there after the crash: durable until it expires (checked when the restart and
        // the read were over within the 15 s, which a stalled machine may pass) ...
        let read = try? await h.readData(Self.text)
        if ContinuousClock.now - written < .seconds(15) {
            #expect(read.map { $0 == (1, "brief".bytes) } == true)
        }
        // ... and cleared at the time set when it was written, not 15 s after the restart.
        #expect(await signals.announcements(2, timeout: .seconds(40)).last == Announcement("general", 2, []))
        let cleared = ContinuousClock.now - written
        #expect(cleared >= .milliseconds(14_995) && cleared < .seconds(28), "cleared \(cleared) after a 15 s expiry")
        #expect(try await h.types() == (2, []))
    }

    @Test func aLaterWriteCancelsTheExpiry() async throws {
        let h = try await Harness()
        let signals = try await h.recordSignals()
        // Long enough that the writes below all land before it, even on a busy machine (4 s
        // was not: CI once took longer between the first two writes).
        let expiry = 12_000
        let short: [(String, DBusValue)] = [("expires-in-ms", .uint64(UInt64(expiry)))]
        #expect(try await h.write([[(Self.text, "brief".bytes)]], options: short) == 1)
        #expect(try await h.write(text: "lasting") == 2)
        // A later write with an expiry of its own replaces the earlier expiry, too.
        #expect(try await h.write([[(Self.text, "brief".bytes)]], to: "longer", options: short) == 1)
        #expect(try await h.write([[(Self.text, "longer".bytes)]], to: "longer", options: [("expires-in-ms", .uint64(60_000))]) == 2)
        // And so does clearing.
        let last = ContinuousClock.now
        #expect(try await h.write([[(Self.text, "brief".bytes)]], to: "cleared", options: short) == 1)
        #expect(try await h.clear("cleared") == 2)
        #expect(try await h.write([[(Self.text, "lasting".bytes)]], to: "cleared", options: [("append", .boolean(true))]) == 3)
        // Every Changed out before the crash (each follows its reply, which a kill at once
        // could come between).
        #expect(await signals.announcements(7).count == 7)

        // Past the cancelled expiries, and across a crash: nothing was cleared.
        h.server.kill9()
        try await h.server.restart()
        try await Task.sleep(for: .milliseconds(expiry + 500) - (ContinuousClock.now - last))
        #expect(try await h.readData(Self.text) == (2, "lasting".bytes))
        #expect(try await h.readData(Self.text, in: "longer") == (2, "longer".bytes))
        #expect(try await h.readData(Self.text, in: "cleared") == (3, "lasting".bytes))
        #expect(signals.announcements.map(\.count) == [1, 2, 1, 2, 1, 2, 3], "\(signals.announcements)")
    }

    @Test func appendingKeepsTheExpiry() async throws {
        let h = try await Harness()
        let signals = try await h.recordSignals()
        // Long enough that a loaded machine still sees both items before the expiry.
        #expect(try await h.write([[(Self.text, "first".bytes)]], options: [("expires-in-ms", .uint64(10_000))]) == 1)
        #expect(try await h.write([[(Self.text, "second".bytes)]], options: [("append", .boolean(true))]) == 2)
        #expect(try await h.items().items.count == 2)
        // The stricter handling of the two wins: everything goes at the first expiry.
        #expect(await signals.announcements(3, timeout: .seconds(25)) == [
            Announcement("general", 1, [Self.text]), Announcement("general", 2, [Self.text]), Announcement("general", 3, []),
        ])
        #expect(try await h.items() == (3, []))
    }

    @Test func hugeExpiriesAreTakenAndNeverCome() async throws {
        let h = try await Harness()
        let signals = try await h.recordSignals()
        let huge: [UInt64] = [.max, .max - 1, UInt64(Int64.max) + 1, UInt64(Int64.max), 1 << 53]
        for (index, milliseconds) in huge.enumerated() {
            #expect(try await h.write([[(Self.text, "kept".bytes)]], to: "huge-\(index)", options: [("expires-in-ms", .uint64(milliseconds))]) == 1)
        }
        // The server lives on, and keeps them across a restart and a crash.
        try await h.server.restart()
        h.server.kill9()
        try await h.server.restart()
        try await Task.sleep(for: .milliseconds(200))
        for index in huge.indices {
            #expect(try await h.readData(Self.text, in: "huge-\(index)") == (1, "kept".bytes), "huge-\(index)")
        }
        #expect(signals.announcements.count == huge.count, "\(signals.announcements)")
    }
}
