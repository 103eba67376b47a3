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

    @Test func anotherClientsReadsAreAnsweredMeanwhile() async throws {
        let h = try await Harness()
        _ = try await h.write(text: "settled", to: "other")
        let writer = try h.connect()
        let reader = try h.connect()
        // The writer keeps the queue busy; the reader's reads go on being answered, and each
        // sees committed contents only.
        let writes = Task {
            for round in 1...200 { _ = try await h.write(text: "busy \(round)", to: "busy", on: writer) }
        }
        for _ in 1...100 {
            #expect(try await h.readData(Self.type, in: "other").data == Array("settled".utf8))
            let count = try #require(try await h.call("ChangeCount", [.string("busy")], on: reader).first?.uint64Value)
            let types = try await h.call("Types", [.string("busy")], on: reader)
            #expect(types.first?.uint64Value ?? 0 >= count)
        }
        try await writes.value
        #expect(try await h.changeCount("busy") == 200)
    }
}
