import DBus
import Foundation
import Testing
import TestSupport

/// When the store cannot commit, nothing of the change happened: every answer says so, late
/// ones included, and an expiry that could not be saved is tried again.
///
/// The store is made to fail by another process holding SQLite's write lock for longer than
/// the server waits for it (10 s).
struct FailedCommitTests {
    /// Holds the store's write lock from another process for `seconds`; returns once it has it.
    ///
    /// First waits until the commit log is empty (its first record is not of the log's current
    /// generation): a change still recorded there reaches the database within 100 ms, and that
    /// save, meeting the lock, would hold the service queue for the 10 s it waits.
    ///
    /// With `untilReleased`, the lock is held until the test closes the locker's input
    /// (`locker.send(Data())`), `seconds` being only an upper bound.
    static func lockStore(_ h: Harness, seconds: Double, untilReleased: Bool = false) async throws -> ChildProcess {
        let locker = try ChildProcess(try Paths.executable(named: "python3"), ["-c", """
            import select, sqlite3, struct, sys, time
            def logged():
                with open(sys.argv[3], 'rb') as f:
                    head = f.read(64 + 24)
                if len(head) < 64 + 24:
                    return False
                generation = struct.unpack_from('<Q', head, 8)[0]
                length, record = struct.unpack_from('<QQ', head, 64)
                return length > 0 and record == generation
            deadline = time.time() + 10
            while logged() and time.time() < deadline:
                time.sleep(0.01)
            c = sqlite3.connect(sys.argv[1], isolation_level=None, timeout=30)
            c.execute('BEGIN IMMEDIATE')
            print('locked', flush=True)
            if sys.argv[4] == 'until-released':
                select.select([sys.stdin], [], [], float(sys.argv[2]))
            else:
                time.sleep(float(sys.argv[2]))
            c.execute('ROLLBACK')
            print('released', flush=True)
            """, h.server.storeDirectory + "/pasteboards.sqlite", String(seconds), h.server.storeDirectory + "/commits.log", untilReleased ? "until-released" : "timed"])
        if !untilReleased { locker.send(Data()) }
        try #require(await eventually(timeout: .seconds(10)) { locker.stdout.starts(with: Array("locked".utf8)) })
        return locker
    }

    /// Whether `locker` (``lockStore(_:seconds:)``) still holds the store: a call answered
    /// while it does was not waiting for the store. Said by the locker itself, so that a
    /// loaded machine's delays cannot pass for the wait, as a bound on the time taken could.
    static func stillHolds(_ locker: ChildProcess) -> Bool {
        !String(decoding: locker.stdout, as: UTF8.self).contains("released")
    }

    /// Data over 64 KiB, which the store keeps in a file of its own: a write of it is not answered
    /// from the commit log on the bus thread, but takes the service queue and commits to the
    /// database before it is answered.
    static let takesTheQueue = [UInt8](repeating: 0x78, count: 70_000)

    @Test(.timeLimit(.minutes(5)))
    func aLateAnswerOfAFailedBatchIsTheFailure() async throws {
        let h = try await Harness(limits: ["provider-timeout-ms=60000"])
        #expect(try await h.write(text: "committed", to: "p") == 1)
        let writer = try h.connect()
        // Provides its data after the batch has given up on the store.
        try writer.export(TestProvider(["text/plain": Array("never committed".utf8)], delaySeconds: 12), at: "/org/pasteboardd/Provider1")
        // Held until the answers are in, however long the machine takes to get there: released
        // at a fixed time instead, a slow run's second batch could meet the store free again.
        let lock = try await Self.lockStore(h, seconds: 55)

        // Another client's write holds the queue (its commit waits for the lock, then fails),
        // so that the promise and the read of it, sent behind it, form the next batch. (Large
        // enough to take the queue.)
        let other = try h.connect()
        let blocker = Task { await h.expectFailure("QuotaExceeded", "WriteItems", [.string("x"), Harness.inlineItems([[("text/plain", Self.takesTheQueue)]]), Harness.options([])], on: other) }
        // Time for it to reach the queue on a loaded machine, with 8 s of its 10 left.
        try await Task.sleep(for: .seconds(2))
        writer.send([try Message.methodCall(
            destination: Harness.busName, path: Harness.path, interface: Harness.interface, method: "WritePromised",
            arguments: [.string("p"), .array(element: "as", [.strings(["text/plain"])]), Harness.options([])])])
        // The read's data comes from the provider after that batch has failed too.
        do {
            let data = try await h.call("ReadData", [.string("p"), .uint32(0), .string("text/plain"), .uint64(0)], on: writer, timeout: .seconds(40))
            Issue.record("the read of a promise that was never committed answered \(data)")
        } catch {
            #expect(error.name == Harness.errorPrefix + "QuotaExceeded", "\(error)")
        }
        #expect(await blocker.value != nil)
        lock.kill()
        _ = try await lock.wait(timeout: .seconds(30))
        #expect(try await h.types("p") == (1, ["text/plain;charset=utf-8"]))
        #expect(try await h.readData("text/plain;charset=utf-8", in: "p").data == Array("committed".utf8))
    }

    @Test(.timeLimit(.minutes(5)))
    func anExpiryThatCannotBeSavedIsTriedAgain() async throws {
        let h = try await Harness()
        let signals = try await h.recordSignals()
        let asked = ContinuousClock.now
        #expect(try await h.write([[("text/plain", Array("password".utf8))]], to: "e", options: [("expires-in-ms", .uint64(15_000))]) == 1)
        // Due while the store is locked: the first attempt waits 10 s and fails. Held until
        // that is logged, however long a loaded machine takes to get there.
        let lock = try await Self.lockStore(h, seconds: 90, untilReleased: true)
        // A machine that stalled the test for the 15 s let the expiry be saved before the lock:
        // the case this test is about did not happen.
        guard ContinuousClock.now - asked < .seconds(15) else { return }
        #expect(await eventually(timeout: .seconds(60)) { h.server.log.contains("trying again") }, "\(h.server.log)")
        lock.send(Data())
        _ = try await lock.wait(timeout: .seconds(30))
        #expect(await signals.announcements(2, timeout: .seconds(30)).last == Announcement("e", 2, []), "\(signals.announcements)")
        #expect(try await h.types("e") == (2, []))
        #expect(h.server.log.contains("trying again"), "\(h.server.log)")
    }
}
