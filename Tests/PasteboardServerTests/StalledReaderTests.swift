import DBus
import Foundation
import Synchronization
import Testing
import TestSupport

/// Readers that take a large `ReadFd` and never read it hold no more of the server than their
/// allowance: each keeps a pipe and its feeder waiting (``StoredFileFeeder``), `max-transfers`
/// per process, and everyone else is served meanwhile.
struct StalledReaderTests {
    @Test func readersThatNeverReadDoNotHoldTheServer() async throws {
        let h = try await Harness(limits: ["max-transfers=8"])
        let large = (0..<(8 << 20)).map { UInt8(truncatingIfNeeded: $0 &* 31) }
        try await h.writeFd([[("application/octet-stream", try Descriptors.file(large))]])
        let arguments: [DBusValue] = [.string("general"), .uint32(0), .string("application/octet-stream"), .uint64(0)]
        // This process takes the data again and again, over two connections, and reads none of
        // it, keeping its descriptors open, up to its allowance.
        let greedy = [try h.connect(), try h.connect()]
        defer { greedy.forEach { $0.close() } }
        var stalled: [UnixFileDescriptor] = []
        for index in 0..<8 {
            stalled.append(try #require(try await h.call("ReadFd", arguments, on: greedy[index % 2]).last?.fileDescriptorValue))
        }
        await h.expectFailure("QuotaExceeded", "ReadFd", arguments, on: greedy[0])
        await h.expectFailure("QuotaExceeded", "ReadFd", arguments, on: greedy[1])
        // Everyone else is answered, writes included, and another process that does read gets
        // it all.
        #expect(try await h.write(text: "meanwhile", to: "other") == 1)
        let pasted = try await runProgram(try Paths.product("pbctl"), ["--address", h.bus.address, "paste", "-t", "application/octet-stream"])
        #expect(pasted.status == 0 && pasted.stdout == Data(large), "\(pasted.err)")
        // Replacing the contents does not disturb a reader that starts late.
        #expect(try await h.write(text: "replaced") == 2)
        #expect(try Descriptors.readAll(stalled[0]) == large)
        #expect(try await h.readData("text/plain;charset=utf-8").data == Array("replaced".utf8))
        // A descriptor read or closed gives its place back.
        stalled.removeAll()
        try await h.writeFd([[("application/octet-stream", try Descriptors.file(large))]])
        #expect(await eventually(timeout: .seconds(10)) {
            (try? await h.call("ReadFd", arguments, on: greedy[0]).last?.fileDescriptorValue) != nil
        })
    }
}

/// A `ReadFd` pipe carries the store file's own cached pages (`splice`), so the file must not be
/// reused while any of them waits in the pipe, whatever the reader does with the pipe.
struct LateReaderTests {
    @Test func aReaderThatReadsLateGetsTheDataItAskedFor() async throws {
        let h = try await Harness()
        // Small enough to fit the feeder's pipe whole, large enough to become the spare file.
        let size = 1 << 20
        let first = (0..<size).map { UInt8(truncatingIfNeeded: $0 &* 31 &+ 7) }
        try await h.writeFd([[("application/octet-stream", try Descriptors.file(first))]], to: "late")
        let (_, late) = try await h.readFd("application/octet-stream", in: "late")
        try await Task.sleep(for: .milliseconds(300))
        // Removed, the file is let go of (off the queue, after the reply) and may become the
        // spare, which the next large write overwrites, were nobody holding it.
        try await h.remove("late")
        try await Task.sleep(for: .milliseconds(300))
        try await h.writeFd([[("application/octet-stream", try Descriptors.file([UInt8](repeating: 9, count: size)))]], to: "other")
        try await Task.sleep(for: .milliseconds(300))
        #expect(try Descriptors.readAll(late) == first)
    }
}

/// A client with thousands of calls in flight neither stops the server nor starves the others.
struct CallFloodTests {
    @Test func thousandsOfPendingCallsAreAllAnsweredAndOthersServed() async throws {
        let h = try await Harness()
        try await h.write(text: "steady")
        let flooder = try h.connect()
        let replies = Counter()
        let stop = Flag()
        // The flood goes on in waves of 500 calls in flight, up to 200 waves, until told to stop.
        let flood = Task { () throws -> (waves: Int, answered: Int) in
            var waves = 0
            var answered = 0
            while waves < 200, !stop.isSet {
                waves += 1
                answered += try await withThrowingTaskGroup(of: Bool.self) { group in
                    for index in 0..<500 {
                        group.addTask {
                            defer { replies.increment() }
                            let method = index % 2 == 0 ? "ChangeCount" : "Types"
                            return try await h.call(method, [.string("general")], on: flooder).first?.uint64Value == 1
                        }
                    }
                    var answered = 0
                    for try await ok in group where ok { answered += 1 }
                    return answered
                }
            }
            return (waves, answered)
        }
        #expect(await eventually(timeout: .seconds(10)) { replies.value > 0 })
        // Another client is answered while the flood still goes on.
        #expect(try await h.readData("text/plain;charset=utf-8").data == Array("steady".utf8))
        stop.set()
        let (waves, answered) = try await flood.value
        #expect(waves < 200, "the other client was answered only after the whole flood")
        #expect(answered == waves * 500)
        #expect(try await h.changeCount() == 1)
    }
}


/// A count shared by concurrent tasks.
final class Counter: Sendable {
    private let count = Atomic<Int>(0)
    var value: Int { count.load(ordering: .relaxed) }
    func increment() { count.add(1, ordering: .relaxed) }
}
