import DBus
import Foundation
import Testing
import TestSupport

/// `WriteItemsFd` with descriptors that misbehave: writers that vanish, stall or trickle.
struct TransferTests {
    @Test func aWriterThatDisconnectsMidTransferStoresNothing() async throws {
        let h = try await Harness()
        try await h.write(text: "before")
        let before = try await h.snapshot()
        let signals = try await h.recordSignals()

        let writer = try h.connect()
        let writerName = writer.uniqueName
        // Part of the data, more than the server keeps in memory (so it has begun a blob file).
        let (readEnd, feeder) = try PipeFeeder.start(count: 2, keepOpen: true) { [UInt8](repeating: $0 == 0 ? 0xAB : 0xCD, count: 40_000) }
        let call = try Message.methodCall(
            destination: Harness.busName, path: Harness.path, interface: Harness.interface, method: "WriteItemsFd",
            arguments: [.string("general"), Harness.descriptorItems([[("application/x-partial", readEnd)]]), Harness.options([])])
        writer.send([call])
        _ = consume readEnd
        #expect(await feeder.wait(timeout: .seconds(10)))

        // The client goes away first; only then does its pipe close.
        writer.close()
        await writer.waitUntilDisconnected()
        let deadline = ContinuousClock.now + .seconds(5)
        while try await h.client.nameOwner(writerName) != nil, ContinuousClock.now < deadline {
            try await Task.sleep(for: .milliseconds(10))
        }
        _ = consume feeder

        try await Task.sleep(for: .milliseconds(500))
        #expect(try await h.snapshot() == before)
        #expect(signals.signals.isEmpty, "\(signals.signals)")
        // Nothing half-written survives a restart either.
        try await h.server.restart()
        #expect(try await h.snapshot() == before)
        #expect(try await h.write(text: "after") == 2)
    }

    /// A transfer whose caller left the bus is abandoned, however its descriptor goes on.
    ///
    /// Here a writer that never ends and is never idle for the idle timeout (a byte every
    /// 100 ms, as a timer's descriptor gives 8 bytes at every tick with no process behind it),
    /// handed over by a client that then leaves. The server went on reading it until
    /// `max-item-bytes`, holding one of `max-transfers` slots and the descriptor: four such
    /// clients gone kept every `WriteItemsFd` refused until a restart. Now both are let go of
    /// about a second after the caller left, and nothing is stored.
    @Test func aTransferWhoseCallerLeftIsAbandoned() async throws {
        // One transfer per process at a time (a quarter of four): this test's process.
        let h = try await Harness(limits: ["max-transfers=4"])
        try await h.write(text: "before")
        let before = try await h.snapshot()
        let (readEnd, writeEnd) = try Descriptors.pipe()
        try Descriptors.writeAll(writeEnd, [UInt8(ascii: "t")])
        let leaving = try h.connect()
        // Built and let go of here: the test must not hold a copy of the read end.
        leaving.send([try Message.methodCall(
            destination: Harness.busName, path: Harness.path, interface: Harness.interface, method: "WriteItemsFd",
            arguments: [.string("general"), Harness.descriptorItems([[("application/x-ticks", readEnd)]]), Harness.options([])])])
        _ = consume readEnd
        // Admitted once the server reads: the byte written is taken.
        #expect(await eventually { Descriptors.unread(writeEnd) == 0 }, "the transfer was never admitted")
        // From now on a byte every 100 ms, until the pipe breaks.
        let broken = Flag()
        Thread {
            let byte = [UInt8(ascii: "t")]
            while byte.withUnsafeBytes({ write(writeEnd.rawValue, $0.baseAddress!, 1) }) == 1 {
                Thread.sleep(forTimeInterval: 0.1)
            }
            broken.set()
        }.start()
        // While it runs, this process's one slot is taken.
        let other = try h.connect()
        await h.expectFailure("QuotaExceeded", "WriteItemsFd", [.string("probe"), Harness.descriptorItems([[("text/plain", try Descriptors.pipe(holding: [1]))]]), Harness.options([])], on: other)

        leaving.close()
        await leaving.waitUntilDisconnected()
        // The server closes its end: the endless writer meets a broken pipe.
        #expect(await eventually { broken.isSet }, "the transfer of a caller that left went on")
        // Its slot is free again.
        #expect(try await h.writeFd([[("text/plain", try Descriptors.pipe(holding: "after".bytes))]], to: "after", on: other) == 1)
        #expect(try await h.snapshot() == before)
    }

    @Test func aStalledWriterTimesOutWhileOthersAreServed() async throws {
        // 3 s: a loaded machine has been seen to leave the writer's thread unscheduled for
        // longer than 500 ms, which ended the transfer before the calls below.
        let h = try await Harness(limits: ["transfer-idle-timeout-ms=3000"])
        try await h.write(text: "before")
        let before = try await h.snapshot()
        // For about ten seconds the writer sends a byte every 100 ms, so the transfer stays
        // open (long enough for the calls below with every suite running on two cores, which
        // once took over six); then it goes silent without closing the pipe.
        let (readEnd, feeder) = try PipeFeeder.start(count: 100, keepOpen: true) { _ in
            Thread.sleep(forTimeInterval: 0.1)
            return [UInt8(ascii: "x")]
        }
        let staller = try h.connect()
        let finished = Flag()
        async let stalled: (error: DBusError?, at: ContinuousClock.Instant) = {
            defer { finished.set() }
            let error = await h.expectFailure("InvalidArgument", "WriteItemsFd", [.string("general"), Harness.descriptorItems([[("text/plain", readEnd)]]), Harness.options([])], on: staller)
            return (error, .now)
        }()

        // Meanwhile everyone else is answered, writes included: a server blocked by the
        // transfer would answer none of these before it ends.
        let other = try h.connect()
        for _ in 0..<5 {
            #expect(try await h.call("ChangeCount", [.string("general")], on: other) == [.uint64(1)])
            try await Task.sleep(for: .milliseconds(50))
        }
        #expect(try await h.write(text: "meanwhile", to: "other", on: other) == 1)
        // Checked only while the writer is still writing: a machine loaded enough to take
        // longer than its ten seconds over the calls above lets the transfer end rightly.
        let stillWriting = feeder.written < 100
        #expect(!stillWriting || !finished.isSet, "the transfer ended while its writer was still writing")

        let (error, gaveUp) = await stalled
        #expect(error?.message.contains("transfer-idle-timeout-ms") == true, "\(String(describing: error))")
        #expect(await feeder.wait(timeout: .seconds(10)))
        // A writer the machine left unscheduled for the limit was idle, and rightly cut off
        // before its last byte: the server's side is then checked no further.
        if feeder.longestPause < .milliseconds(2800) {
            #expect(feeder.written == 100)
            let waited = gaveUp - (feeder.lastWrite ?? gaveUp)
            // Taken when the error came, not after the test's own work: bounded with room for
            // a stalled host, far below the minute a server that never timed out would take.
            #expect(waited >= .milliseconds(2950) && waited < .seconds(15), "gave up \(waited) after the last byte")
        }
        #expect(try await h.snapshot() == before)
        #expect(try await h.changeCount("other") == 1)
    }

    /// Pauses shorter than `transfer-idle-timeout-ms` are no reason to give up, however long the
    /// whole transfer takes (here 2.4 s against a 2 s limit).
    @Test func aSlowWriterWithinTheTimeoutSucceeds() async throws {
        let h = try await Harness(limits: ["transfer-idle-timeout-ms=2000"])
        let (readEnd, feeder) = try PipeFeeder.start(count: 8) { index in
            Thread.sleep(forTimeInterval: 0.3)
            return Array("piece \(index);".utf8)
        }
        let expected = (0..<8).map { "piece \($0);" }.joined().bytes
        do {
            #expect(try await h.writeFd([[("text/plain", readEnd)]]) == 1)
            #expect(try await h.readData("text/plain").data == expected)
        } catch let error as DBusError where error.message.contains("transfer-idle-timeout-ms") {
            // Only a writer the machine stalled for about the limit may be given up on.
            #expect(feeder.longestPause >= .milliseconds(1800), "gave up on a writer that paused at most \(feeder.longestPause): \(error)")
        }
        #expect(await feeder.wait())
    }

    @Test func oneDescriptorForTwoTypesIsStoredForBoth() async throws {
        let h = try await Harness()
        let text = "the same bytes twice".bytes
        let file = try Descriptors.file(text)
        #expect(try await h.writeFd([[("text/plain", file), ("text/x-copy", file)]]) == 1)
        #expect(try await h.items().items == [.init(types: ["text/plain", "text/x-copy"], sizes: [Int64(text.count), Int64(text.count)])])
        #expect(try await h.readData("text/plain").data == text)
        #expect(try await h.readData("text/x-copy").data == text)

        let pipe = try Descriptors.pipe(holding: "piped".bytes)
        #expect(try await h.writeFd([[("text/plain", pipe)], [("text/plain", pipe), ("text/html", pipe)]]) == 2)
        #expect(try await h.items().items == [.init(types: ["text/plain"], sizes: [5]), .init(types: ["text/plain", "text/html"], sizes: [5, 5])])
        #expect(try await h.readData("text/html", item: 1).data == "piped".bytes)
        #expect(try await h.readData("text/plain", item: 0).data == "piped".bytes)
    }

    @Test func aFileIsReadFromItsCurrentOffset() async throws {
        let h = try await Harness()
        let file = try Descriptors.file("skip:keep".bytes)
        lseek(file.rawValue, 5, SEEK_SET)
        #expect(try await h.writeFd([[("text/plain", file)]]) == 1)
        #expect(try await h.readData("text/plain").data == "keep".bytes)
    }

    @Test func manyTransfersAtOnce() async throws {
        let h = try await Harness()
        let counts = try await withThrowingTaskGroup(of: UInt64.self) { group in
            for index in 0..<16 {
                group.addTask {
                    let data = Self.transferData(index)
                    let (readEnd, feeder) = try PipeFeeder.start(count: 1) { _ in data }
                    let count = try await h.writeFd([[("application/x-data", readEnd)]], to: "name-\(index % 4)")
                    _ = await feeder.wait()
                    return count
                }
            }
            return try await group.reduce(into: []) { $0.append($1) }
        }
        #expect(counts.sorted() == [1, 1, 1, 1, 2, 2, 2, 2, 3, 3, 3, 3, 4, 4, 4, 4])
        for index in 0..<4 {
            let (count, data) = try await h.readFdBytes("application/x-data", in: "name-\(index)")
            #expect(count == 4)
            // Whichever write came last, whole.
            #expect([index, index + 4, index + 8, index + 12].map(Self.transferData).contains(data))
        }
    }

    static func transferData(_ index: Int) -> [UInt8] {
        Array("transfer \(index)".utf8) + [UInt8](repeating: UInt8(index), count: 100_000)
    }
}
