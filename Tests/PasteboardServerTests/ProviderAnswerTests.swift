import CDBus
@testable import DBus
import Foundation
import Testing
import TestSupport

/// Only the writer answers for its promise. The bus lets any client send a reply with any
/// serial to anyone (the session bus's policy allows it, and a client watching the bus sees
/// the serial of the server's `Provide` call go by), stamping the true sender on it: the server
/// takes a `Provide` answer only from the unique name it called.
struct ProviderAnswerTests {
    @Test(.timeLimit(.minutes(5)))
    func anotherClientsReplyIsNotTheWritersAnswer() async throws {
        // The writer answers after 1 s: 30 s for it, not the default 5, on a loaded machine.
        let h = try await Harness(limits: ["provider-timeout-ms=30000"])
        let writer = try h.connect()
        let provider = TestProvider(["text/plain": Array("genuine".utf8)], delaySeconds: 1)
        try writer.export(provider, at: "/org/pasteboardd/Provider1")
        let written = try await h.reply(
            "WritePromised", [.string("p"), .array(element: "as", [.strings(["text/plain"])]), Harness.options([])], on: writer)
        let server = try #require(written.sender)
        let read = Task { try await h.readData("text/plain", in: "p") }
        try #require(await eventually(timeout: .seconds(10)) { !provider.calls.withLock { $0.isEmpty } })

        // The server's Provide call left after its reply to WritePromised: its serial is a
        // little above that reply's. Another client answers every such serial first.
        let attacker = try h.connect()
        var spoofs: [Message] = []
        for serial in written.serial + 1...written.serial + 500 {
            let spoof = Message(taking: try #require(dbus_message_new(DBUS_MESSAGE_TYPE_METHOD_RETURN)))
            dbus_message_set_destination(spoof.raw, server)
            dbus_message_set_reply_serial(spoof.raw, serial)
            try Marshalling.append([.bytes(Array("spoofed".utf8))], to: spoof.raw)
            spoofs.append(spoof)
        }
        attacker.send(spoofs)

        #expect(try await read.value == (1, Array("genuine".utf8)))
        // What the server kept, and serves to every later reader, is the writer's too.
        #expect(try await h.readData("text/plain", in: "p") == (1, Array("genuine".utf8)))
        #expect(provider.calls.withLock { $0.count } == 1)
        // The spoofs did answer the call's serial: the check above could fail.
        let serial = try #require(provider.serials.withLock { $0.first })
        #expect(serial > written.serial && serial <= written.serial + 500, "Provide was call \(serial), the write's reply \(written.serial)")
    }
}
