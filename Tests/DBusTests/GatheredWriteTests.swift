@testable import DBus
import Foundation
import Testing
import TestSupport

/// Replies and signals sent together leave in one write (``GatheredWrite``); whatever libdbus
/// still holds, or the socket cannot take, goes through libdbus; all in order, and numbered in
/// that order.
/// Replies with a signal after; `Block` holds the connection's thread, so that calls pile up
/// unread behind it.
final class PilingObject: DBusObject {
    let introspectionXML = "<node/>"

    func handle(_ call: MethodCall) {
        switch call.member {
        case "Block":
            usleep(300_000)
            call.reply([])
        case "Emit":
            call.reply([], then: {
                [try! Message.signal(path: "/org/example/Piling", interface: "org.example.Piling", name: "Said", arguments: call.arguments)]
            })
        default:
            call.fail(.unknownMethod("no \(call.member)"))
        }
    }

    func properties(of interface: String) async throws(DBusError) -> [(name: String, value: DBusValue)] { [] }
}

struct GatheredWriteTests {
    let served: ServedObject
    var bus: TestBus { served.bus }

    init() async throws {
        served = try await ServedObject(PilingObject(), at: "/org/example/Piling", name: "org.example.Piling")
    }

    func emit(_ word: String) async throws -> Message {
        try await served.client.call(Message.methodCall(destination: "org.example.Piling", path: "/org/example/Piling", interface: "org.example.Piling", method: "Emit", arguments: [.string(word)]))
    }

    @Test func aLoneCallsReplyLeavesByItselfBeforeItsSignal() async throws {
        let stream = try await served.client.signals(matching: MatchRule(interface: "org.example.Piling", member: "Said"))
        var iterator = stream.makeAsyncIterator()
        let reply = try await emit("alone")
        let signal = try #require(await iterator.next())
        #expect(signal.arguments() == [.string("alone")])
        #expect(signal.serial == reply.serial + 1)
        #expect(served.server.gatheredMessages == 0)
    }

    @Test func answersToCallsThatCameTogetherLeaveTogetherInOrder() async throws {
        let stream = try await served.client.signals(matching: MatchRule(interface: "org.example.Piling", member: "Said"))
        let blocked = Task { try await served.client.call(destination: "org.example.Piling", path: "/org/example/Piling", interface: "org.example.Piling", method: "Block") }
        try await Task.sleep(for: .milliseconds(50))
        // These wait in the server's socket until Block is answered, then are read together.
        let words = (0..<10).map { "word \($0)" }
        let replies = try await withThrowingTaskGroup(of: (String, Message).self) { group in
            for word in words { group.addTask { (word, try await emit(word)) } }
            return try await group.reduce(into: [String: Message]()) { $0[$1.0] = $1.1 }
        }
        _ = try await blocked.value
        var signals: [String: Message] = [:]
        for await signal in stream {
            signals[signal.arguments().first?.stringValue ?? ""] = signal
            if signals.count == words.count { break }
        }
        for word in words {
            let reply = try #require(replies[word]), signal = try #require(signals[word])
            #expect(signal.serial > reply.serial, "\(word): the signal left before the reply")
        }
        #expect(served.server.gatheredMessages >= 2)
    }

    @Test func signalsKeepTheirOrderWhenTheSocketFillsUp() async throws {
        let count = 6000
        let stream = try await served.client.signals(matching: MatchRule(interface: "org.example.Burst", member: "Numbered"))
        let filler = DBusValue.bytes([UInt8](repeating: 0x2a, count: 200))
        // The bus reads nothing for a while: the server's socket fills, and what does not fit
        // waits in libdbus, which writes it once the bus reads again.
        bus.pause()
        for start in stride(from: 0, to: count, by: 100) {
            served.server.send(try (start..<start + 100).map { index throws(DBusError) in
                try Message.signal(path: "/org/example/Piling", interface: "org.example.Burst", name: "Numbered", arguments: [.uint32(UInt32(index)), filler])
            })
        }
        try await Task.sleep(for: .milliseconds(300))
        bus.resume()

        var next: UInt32 = 0
        var lastSerial: UInt32 = 0
        for await signal in stream {
            guard signal.arguments().first == .uint32(next), signal.serial > lastSerial else {
                Issue.record("signal \(next) after serial \(lastSerial) expected, got \(signal.arguments().first.map { "\($0)" } ?? "none") numbered \(signal.serial)")
                break
            }
            lastSerial = signal.serial
            next += 1
            if next == count { break }
        }
        #expect(next == UInt32(count))
        // Both ways were taken: gathered until the socket was full, then through libdbus.
        let gathered = served.server.gatheredMessages
        #expect(gathered > 0 && gathered < count, "\(gathered) of \(count) gathered")
    }
}
