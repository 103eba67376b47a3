import CDBus
@testable import DBus
import Foundation
import Synchronization
import Testing
import TestSupport

/// Answers `Slow` after half a second, with its arguments and a word of its own.
final class SlowEchoObject: DBusObject {
    let introspectionXML = "<node/>"
    let word: String
    /// How many `Hang` calls have arrived: a test waits for its call to reach the callee.
    let hung = Mutex(0)

    init(word: String) { self.word = word }

    func handle(_ call: MethodCall) {
        switch call.member {
        case "Slow":
            let word = self.word
            DispatchQueue.global().asyncAfter(deadline: .now() + 0.5) { call.reply([.string(word)]) }
        case "Hang":
            hung.withLock { $0 += 1 }
        default:
            call.fail(.unknownMethod("no \(call.member)"))
        }
    }

    func properties(of interface: String) async throws(DBus.DBusError) -> [(name: String, value: DBusValue)] { [] }
}

/// The bus lets any client send a reply with any serial to anyone: a reply is taken only from
/// the connection the call went to (its unique name, or the followed owner of its well-known
/// name), or an error from the bus, which answers for a callee that cannot.
struct ReplySenderTests {
    let bus: TestBus
    let server: Connection
    let client: Connection
    let attacker: Connection
    let slow = SlowEchoObject(word: "genuine")

    init() async throws {
        let served = try await ServedObject(slow, at: "/org/example/Slow", name: "org.example.Slow")
        (bus, server, client) = (served.bus, served.server, served.client)
        attacker = try Connection.connect(address: bus.address)
    }

    /// Replies from `attacker` to `client` for every serial the client can have used so far,
    /// saying "spoofed".
    func spoofEveryRecentSerial() throws {
        var spoofs: [Message] = []
        for serial in UInt32(1)...300 {
            let spoof = Message(taking: try #require(dbus_message_new(DBUS_MESSAGE_TYPE_METHOD_RETURN)))
            dbus_message_set_destination(spoof.raw, client.uniqueName)
            dbus_message_set_reply_serial(spoof.raw, serial)
            try Marshalling.append([.string("spoofed")], to: spoof.raw)
            spoofs.append(spoof)
        }
        attacker.send(spoofs)
    }

    /// The arguments of the first signal of `signals` (none if it ends first).
    static func firstArguments(of signals: AsyncStream<Message>) async -> [DBusValue] {
        for await signal in signals { return signal.arguments() }
        return []
    }

    func slow(on destination: String) async throws -> [DBusValue] {
        try await client.call(destination: destination, path: "/org/example/Slow", interface: "org.example.Slow", method: "Slow", timeout: .seconds(20))
    }

    @Test func aCallToAUniqueNameIsAnsweredOnlyByIt() async throws {
        let call = Task { try await slow(on: server.uniqueName) }
        try await Task.sleep(for: .milliseconds(100))
        try spoofEveryRecentSerial()
        #expect(try await call.value == [.string("genuine")])
    }

    @Test func aCallToAFollowedNameIsAnsweredOnlyByItsOwner() async throws {
        client.followOwner(of: "org.example.Slow")
        let call = Task { try await slow(on: "org.example.Slow") }
        try await Task.sleep(for: .milliseconds(100))
        try spoofEveryRecentSerial()
        #expect(try await call.value == [.string("genuine")])
    }

    /// The owner is followed as it changes: the next owner's answers are taken.
    @Test func aFollowedNameThatChangesHandsIsAnsweredByTheNewOwner() async throws {
        client.followOwner(of: "org.example.Slow")
        #expect(try await slow(on: "org.example.Slow") == [.string("genuine")])
        server.close()
        let next = try Connection.connect(address: bus.address)
        defer { next.close() }
        try next.export(SlowEchoObject(word: "next"), at: "/org/example/Slow")
        #expect(await eventually(timeout: .seconds(10)) { (try? await next.requestName("org.example.Slow")) == .primaryOwner })
        #expect(try await slow(on: "org.example.Slow") == [.string("next")])
    }

    /// The bus answers for a callee that leaves without answering: its error is taken.
    @Test func theBusAnswersForACalleeThatLeaves() async throws {
        let call = Task {
            try await client.call(destination: server.uniqueName, path: "/org/example/Slow", interface: "org.example.Slow", method: "Hang", timeout: .seconds(20))
        }
        #expect(await eventually { slow.hung.withLock { $0 } > 0 }, "Hang never arrived")
        let started = ContinuousClock.now
        server.close()
        await #expect { try await call.value } throws: { error in
            (error as? DBus.DBusError)?.name == DBus.DBusError.noReplyName
        }
        #expect(ContinuousClock.now - started < .seconds(10))
    }

    /// A signal sent to the client by name reaches it whatever its match rules say: one whose
    /// rule names a followed well-known sender is taken only from that name's owner.
    @Test func aSignalSentStraightHereIsTakenOnlyFromTheFollowedSender() async throws {
        client.followOwner(of: "org.example.Slow")
        let signals = try await client.signals(matching: MatchRule(sender: "org.example.Slow", interface: "org.example.Slow", member: "Rang"))
        let fake = try Message.signal(path: "/org/example/Slow", interface: "org.example.Slow", name: "Rang", arguments: [.string("spoofed")])
        dbus_message_set_destination(fake.raw, client.uniqueName)
        attacker.send([fake])
        _ = try await attacker.busID()
        try server.emit(path: "/org/example/Slow", interface: "org.example.Slow", name: "Rang", arguments: [.string("genuine")])
        #expect(await Self.firstArguments(of: signals) == [.string("genuine")])
    }

    /// Without following, such a signal is taken, as libdbus takes it (the test above would
    /// pass without checking anything if the bus did not deliver it).
    @Test func aSignalSentStraightHereIsTakenWhenNotFollowing() async throws {
        let signals = try await client.signals(matching: MatchRule(sender: "org.example.Slow", interface: "org.example.Slow", member: "Rang"))
        let fake = try Message.signal(path: "/org/example/Slow", interface: "org.example.Slow", name: "Rang", arguments: [.string("spoofed")])
        dbus_message_set_destination(fake.raw, client.uniqueName)
        attacker.send([fake])
        #expect(await Self.firstArguments(of: signals) == [.string("spoofed")])
    }

    /// While the bus has not yet said who owns the name, a subscription made after following
    /// began takes no signal claiming to come from it: the bus handles the subscription's
    /// `AddMatch` after the question, so nothing genuine can have come for it yet. The impostor's
    /// signal is made to wait in the socket until then: the connection is driven by a thread of
    /// the test's, which starts turning only once the following and the subscription are queued.
    @Test func aSignalBeforeTheOwnerIsKnownIsNotTaken() async throws {
        let go = DispatchSemaphore(value: 0)
        let driven = try await DrivingThread.connect(to: bus.address, awaitingName: true, before: { go.wait() })
        defer { driven.close() }
        let fake = try Message.signal(path: "/org/example/Slow", interface: "org.example.Slow", name: "Rang", arguments: [.string("spoofed")])
        dbus_message_set_destination(fake.raw, driven.uniqueName)
        attacker.send([fake])
        _ = try await attacker.busID()
        driven.followOwner(of: "org.example.Slow")
        let subscribing = Task { try await driven.signals(matching: MatchRule(sender: "org.example.Slow", interface: "org.example.Slow", member: "Rang")) }
        try await Task.sleep(for: .milliseconds(200))
        go.signal()
        let signals = try await subscribing.value
        try server.emit(path: "/org/example/Slow", interface: "org.example.Slow", name: "Rang", arguments: [.string("genuine")])
        #expect(await Self.firstArguments(of: signals) == [.string("genuine")])
    }
}
