import CDBus
@testable import DBus
import Foundation
import Testing
import TestSupport

/// Another client of the bus answering in the server's place: the bus lets anyone send a reply
/// with any serial, or a signal, to a connection named by its unique name. `pbctl` takes both
/// only from the owner of the server's name.
struct ImpostorTests {
    static let text = "text/plain;charset=utf-8"

    /// The unique name of the connection the process `pid` made to the bus.
    static func uniqueName(of pid: pid_t, on impostor: Connection) async throws -> String {
        let deadline = ContinuousClock.now + .seconds(20)
        while ContinuousClock.now < deadline {
            let names = try await impostor.call(
                destination: "org.freedesktop.DBus", path: "/org/freedesktop/DBus", interface: "org.freedesktop.DBus", method: "ListNames")
            for case let name? in names.first?.stringArrayValue ?? [] where name.hasPrefix(":") {
                if (try? await impostor.unixProcessID(of: name)) == UInt32(pid) { return name }
            }
            try await Task.sleep(for: .milliseconds(20))
        }
        throw TestSupportError("process \(pid) did not connect to the bus")
    }

    @Test(.timeLimit(.minutes(5)))
    func aChangedSentStraightToAWatcherIsNotAChange() async throws {
        let world = try await PbctlHarness()
        let watcher = try world.watch("watch")
        defer { watcher.stop() }
        let skipped = try await watcher.prime(world) { "general \($0) \(Self.text)" }
        let impostor = try Connection.connect(address: world.bus.address)
        defer { impostor.close() }
        let watcherName = try await Self.uniqueName(of: watcher.pid, on: impostor)
        let fake = try Message.signal(
            path: "/org/pasteboardd/Pasteboard1", interface: "org.pasteboardd.Pasteboard1", name: "Changed",
            arguments: [.string("general"), .uint64(424_242), .strings(["text/x-fake"])])
        dbus_message_set_destination(fake.raw, watcherName)
        impostor.send([fake])
        _ = try await impostor.call(
            destination: "org.freedesktop.DBus", path: "/org/freedesktop/DBus", interface: "org.freedesktop.DBus", method: "GetId")
        let count = try await world.changeCount()
        expectSuccess(try await world.pbctl("copy", input: "real"))
        let lines = try await watcher.waitForLines(skipped + 1)
        #expect(Array(lines.dropFirst(skipped)) == ["general \(count + 1) \(Self.text)"])
        #expect(!watcher.lines.contains { $0.contains("424242") })
    }

    /// A paste waiting for a slow provider, answered meanwhile for every serial it can have
    /// used: it prints the provider's data.
    @Test(.timeLimit(.minutes(5)))
    func aReplyFromAnotherClientIsNotThePaste() async throws {
        // The writer answers after 2 s: 30 s for it, not the default 5, on a loaded machine.
        let world = try await PbctlHarness(limits: ["provider-timeout-ms=30000"])
        let writer = try Connection.connect(address: world.bus.address)
        defer { writer.close() }
        let provider = AnsweringProvider([Self.text: Array("genuine".utf8)], delaySeconds: 2)
        try writer.export(provider, at: "/org/pasteboardd/Provider1")
        _ = try await writer.call(
            destination: "org.pasteboardd.Pasteboard1", path: "/org/pasteboardd/Pasteboard1", interface: "org.pasteboardd.Pasteboard1",
            method: "WritePromised", arguments: [.string("general"), .array(element: "as", [.strings([Self.text])]), .dictionary(key: "s", value: "v", [])])
        let paste = try ChildProcess(try Paths.product("pbctl"), ["--address", world.bus.address, "paste"])
        paste.send(Data())
        let impostor = try Connection.connect(address: world.bus.address)
        defer { impostor.close() }
        let pasteName = try await Self.uniqueName(of: paste.pid, on: impostor)
        #expect(await eventually(timeout: .seconds(20)) { !provider.asked.withLock(\.isEmpty) })
        var spoofs: [Message] = []
        for serial in UInt32(1)...64 {
            let spoof = Message(taking: try #require(dbus_message_new(DBUS_MESSAGE_TYPE_METHOD_RETURN)))
            dbus_message_set_destination(spoof.raw, pasteName)
            dbus_message_set_reply_serial(spoof.raw, serial)
            try Marshalling.append([.uint64(1), .string(Self.text), .bytes(Array("spoofed".utf8))], to: spoof.raw)
            spoofs.append(spoof)
        }
        impostor.send(spoofs)
        #expect(try await paste.wait(timeout: .seconds(30)) == 0, "\(String(decoding: paste.stderr, as: UTF8.self))")
        #expect(String(decoding: paste.stdout, as: UTF8.self) == "genuine")
    }
}
