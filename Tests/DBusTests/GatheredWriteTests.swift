@testable import DBus
import Foundation
import Testing
import TestSupport

/// Replies and signals sent together leave in one write (``GatheredWrite``); whatever libdbus
/// still holds, or the socket cannot take, goes through libdbus; all in order, and numbered in
/// that order.
struct GatheredWriteTests {
    let served: ServedObject
    var bus: TestBus { served.bus }

    init() async throws {
        served = try await ServedObject(EchoObject(), at: "/org/example/Echo", name: "org.example.Echo")
    }

    @Test func aReplyAndItsSignalLeaveTogetherNumberedInOrder() async throws {
        let before = served.server.gatheredMessages
        let stream = try await served.client.signals(matching: MatchRule(interface: "org.example.Echo", member: "Said"))
        var iterator = stream.makeAsyncIterator()
        var serials: [UInt32] = []
        for word in ["one", "two", "three"] {
            let call = try Message.methodCall(destination: "org.example.Echo", path: "/org/example/Echo", interface: "org.example.Echo", method: "Emit", arguments: [.string(word)])
            let reply = try await served.client.call(call)
            let signal = try #require(await iterator.next())
            #expect(signal.arguments() == [.string(word)])
            #expect(reply.replySerial == call.serial)
            serials += [reply.serial, signal.serial]
        }
        // Each reply and its signal in one write, numbered one after the other.
        #expect(served.server.gatheredMessages - before == 6)
        #expect(zip(serials, serials.dropFirst()).allSatisfy { $0 < $1 })
        #expect(stride(from: 0, to: 6, by: 2).allSatisfy { serials[$0 + 1] == serials[$0] + 1 })
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
                try Message.signal(path: "/org/example/Burst", interface: "org.example.Burst", name: "Numbered", arguments: [.uint32(UInt32(index)), filler])
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
