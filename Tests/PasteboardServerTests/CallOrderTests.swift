import DBus
import Foundation
import Testing
import TestSupport

/// Reads may skip the server's queue, but never a client's own earlier calls: a read sent right
/// behind a write, without waiting for its reply, sees that write.
struct CallOrderTests {
    static let type = "text/plain;charset=utf-8"

    static func write(_ text: String, to name: String) throws -> Message {
        try Message.methodCall(
            destination: Harness.busName, path: Harness.path, interface: Harness.interface, method: "WriteItems",
            arguments: [.string(name), Harness.inlineItems([[(type, Array(text.utf8))]]), Harness.options([])])
    }

    @Test func aReadSentBehindAnUnansweredWriteSeesIt() async throws {
        let h = try await Harness()
        for round in 1...100 {
            // Sent without waiting: the write's reply is not awaited before the read goes out.
            h.client.send([try Self.write("round \(round)", to: "general")])
            let read = try await h.call("ReadData", [.string("general"), .uint32(0), .string(Self.type), .uint64(0)])
            #expect(read.first?.uint64Value == UInt64(round))
            #expect(read.last?.bytesValue == Array("round \(round)".utf8), "round \(round)")
        }
    }

    @Test func everyReadingMethodSeesTheUnansweredWriteBeforeIt() async throws {
        let h = try await Harness()
        let reads: [(String, [DBusValue], ([DBusValue]) -> Bool)] = [
            ("ChangeCount", [.string("fresh")], { $0.first?.uint64Value == 1 }),
            ("Types", [.string("fresh")], { $0.last?.stringArrayValue == [Self.type] }),
            ("CanRead", [.string("fresh"), .strings(["text/plain"])], { $0.first?.boolValue == true }),
            ("AvailableType", [.string("fresh"), .strings(["text/plain"])], { $0.first?.stringValue == "text/plain" }),
            ("ListPasteboards", [], { $0.first?.stringArrayValue?.contains("fresh") == true }),
            ("History", [.string("fresh"), .uint32(0)], { $0.first?.arrayValue?.count == 1 }),
        ]
        for (method, arguments, seesWrite) in reads {
            _ = try await h.call("Remove", [.string("fresh")])
            h.client.send([try Self.write("new", to: "fresh")])
            let reply = try await h.call(method, arguments)
            #expect(seesWrite(reply), "\(method) answered \(reply)")
        }
    }

    @Test(.timeLimit(.minutes(1)))
    func anotherClientsReadsAreAnsweredWhileAWriteWaitsForTheStore() async throws {
        let h = try await Harness()
        _ = try await h.write(text: "settled", to: "other")
        // Another process holds the store: the next write waits for it on the service queue.
        let locker = try await FailedCommitTests.lockStore(h, seconds: 8)
        let writer = try h.connect()
        let held = FailedCommitTests.beyondCommitLog
        let write = Task { try await h.write([[(Self.type, held)]], to: "busy", on: writer) }
        try await Task.sleep(for: .milliseconds(300))

        // Meanwhile another client is answered at once, from what is committed: not the
        // waiting write.
        let start = ContinuousClock.now
        #expect(try await h.readData(Self.type, in: "other") == (1, Array("settled".utf8)))
        #expect(try await h.changeCount("busy") == 0)
        #expect(try await h.listPasteboards() == ["other"])
        #expect(ContinuousClock.now - start < .seconds(2), "the reads waited \(ContinuousClock.now - start)")

        _ = try await locker.wait(timeout: .seconds(20))
        #expect(try await write.value == 1)
        #expect(try await h.changeCount("busy") == 1)
    }
}
