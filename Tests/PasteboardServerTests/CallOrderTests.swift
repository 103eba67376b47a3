import DBus
import Foundation
import Testing
import TestSupport

/// Reads may skip the server's queue, but never a client's own earlier calls: a read sent right
/// behind a write, without waiting for its reply, sees that write.
///
/// Each write is made small (answered on the bus thread, from the commit log) and large (over
/// 64 KiB: it takes the service queue, and the read behind it must wait).
struct CallOrderTests {
    static let type = "text/plain;charset=utf-8"

    /// `text`, followed by enough bytes to keep the write off the commit log when `large`.
    static func payload(_ text: String, large: Bool) -> [UInt8] {
        Array(text.utf8) + (large ? FailedCommitTests.takesTheQueue : [])
    }

    static func write(_ bytes: [UInt8], to name: String) throws -> Message {
        try Message.methodCall(
            destination: Harness.busName, path: Harness.path, interface: Harness.interface, method: "WriteItems",
            arguments: [.string(name), Harness.inlineItems([[(type, bytes)]]), Harness.options([])])
    }

    @Test func aReadSentBehindAnUnansweredWriteSeesIt() async throws {
        let h = try await Harness()
        for round in 1...100 {
            let bytes = Self.payload("round \(round)", large: round.isMultiple(of: 2))
            // Sent without waiting: the write's reply is not awaited before the read goes out.
            h.client.send([try Self.write(bytes, to: "general")])
            let read = try await h.call("ReadData", [.string("general"), .uint32(0), .string(Self.type), .uint64(0)])
            #expect(read.first?.uint64Value == UInt64(round))
            #expect(read.last?.bytesValue == bytes, "round \(round)")
        }
    }

    /// A small write or a clear could be answered on the bus thread at once; behind an
    /// unanswered large write of the same client, it must wait for it instead.
    @Test func aSmallChangeSentBehindALargeWriteComesAfterIt() async throws {
        let h = try await Harness()
        for round in 1...20 {
            let name = "behind-\(round)"
            let last = Self.payload("small \(round)", large: false)
            h.client.send([try Self.write(Self.payload("large \(round)", large: true), to: name)])
            if round.isMultiple(of: 2) {
                h.client.send([try Self.write(last, to: name)])
            } else {
                h.client.send([try Message.methodCall(destination: Harness.busName, path: Harness.path, interface: Harness.interface,
                                                      method: "ClearContents", arguments: [.string(name)])])
            }
            let read = try await h.call("Types", [.string(name)])
            #expect(read.first?.uint64Value == 2, "round \(round)")
            #expect(read.last?.stringArrayValue == (round.isMultiple(of: 2) ? [Self.type] : []), "round \(round)")
            if round.isMultiple(of: 2) {
                #expect(try await h.readData(Self.type, in: name).data == last, "round \(round)")
            }
        }
    }

    @Test func everyReadingMethodSeesTheUnansweredWriteBeforeIt() async throws {
        let h = try await Harness()
        // Each read asks about a name never written before the write just sent.
        let reads: [(String, (String) -> [DBusValue], (String, [DBusValue]) -> Bool)] = [
            ("ChangeCount", { [.string($0)] }, { $1.first?.uint64Value == 1 }),
            ("Types", { [.string($0)] }, { $1.last?.stringArrayValue == [Self.type] }),
            ("CanRead", { [.string($0), .strings(["text/plain"])] }, { $1.first?.boolValue == true }),
            ("AvailableType", { [.string($0), .strings(["text/plain"])] }, { $1.first?.stringValue == "text/plain" }),
            ("ListPasteboards", { _ in [] }, { name, reply in reply.first?.stringArrayValue?.contains(name) == true }),
            ("History", { [.string($0), .uint32(0)] }, { $1.first?.arrayValue?.count == 1 }),
        ]
        for (method, arguments, seesWrite) in reads {
            for large in [false, true] {
                let name = "fresh-\(method)-\(large ? "large" : "small")"
                h.client.send([try Self.write(Self.payload("new", large: large), to: name)])
                let reply = try await h.call(method, arguments(name))
                #expect(seesWrite(name, reply), "\(method) answered \(reply) after a \(large ? "large" : "small") write")
            }
        }
    }

    @Test(.timeLimit(.minutes(5)))
    func anotherClientsReadsAreAnsweredWhileAWriteWaitsForTheStore() async throws {
        let h = try await Harness()
        _ = try await h.write(text: "settled", to: "other")
        // Another process holds the store until told to let go: the next write waits for it
        // on the service queue (for up to the server's 10 s busy timeout, then fails).
        let locker = try await FailedCommitTests.lockStore(h, seconds: 60, untilReleased: true)
        let writer = try h.connect()
        let held = FailedCommitTests.takesTheQueue
        let writeEnded = Flag()
        let writing = ContinuousClock.now
        let write = Task {
            defer { writeEnded.set() }
            return try await h.write([[(Self.type, held)]], to: "busy", on: writer)
        }
        try await Task.sleep(for: .milliseconds(300))

        // Meanwhile another client is answered at once, from what is committed: not the
        // waiting write.
        #expect(try await h.readData(Self.type, in: "other") == (1, Array("settled".utf8)))
        #expect(try await h.changeCount("busy") == 0)
        #expect(try await h.listPasteboards() == ["other"])
        // The reads did not wait behind the write: it is still waiting for the store, which
        // cannot end before the locker lets go or the busy timeout runs out. (No bound on
        // the time the reads took, which a loaded machine could miss.)
        // (Unless a stalled machine took the server's 10 s busy timeout over the reads.)
        #expect(!writeEnded.isSet || ContinuousClock.now - writing >= .seconds(10), "the reads waited for the write")
        #expect(FailedCommitTests.stillHolds(locker))

        locker.send(Data())
        _ = try await locker.wait(timeout: .seconds(20))
        #expect(!FailedCommitTests.stillHolds(locker))
        // Let go within the busy timeout (as on any machine not loaded past it), the write
        // succeeds; otherwise it failed whole. Either way it is all or nothing.
        let written = await write.result
        if case .success(let count) = written {
            #expect(count == 1)
            #expect(try await h.changeCount("busy") == 1)
        } else {
            #expect(try await h.changeCount("busy") == 0)
        }
    }
}
