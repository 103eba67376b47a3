import CDBus
@testable import DBus
import Foundation
import Testing
import TestSupport

/// A client that asks for data, or listens for changes, and never reads what comes must not
/// make the bus stop reading the server's messages to everyone (dbus-daemon holds what a client
/// has not read against the sender's `max_incoming_bytes`).
@Suite("Replies a client does not read")
struct UnreadRepliesTests {
    /// A client on a raw socket: it authenticates, says `Hello`, sends calls, and never reads
    /// a byte of what comes back.
    final class DeafClient {
        let socket: Int32
        private var serial: UInt32 = 1

        init(address: String) throws {
            guard address.hasPrefix("unix:path="), let fd = connectUnixSocket(String(address.dropFirst(10).prefix { $0 != "," })) else {
                throw TestSupportError("no unix socket in \(address)")
            }
            socket = fd
            let uid = String(getuid()).utf8.map { String(format: "%02x", $0) }.joined()
            try write(Array("\0AUTH EXTERNAL \(uid)\r\n".utf8))
            var answer: [UInt8] = []
            while !answer.suffix(2).elementsEqual([13, 10]) {
                var byte: UInt8 = 0
                guard read(fd, &byte, 1) == 1 else { throw TestSupportError("the bus closed the authentication") }
                answer.append(byte)
            }
            guard answer.starts(with: Array("OK".utf8)) else { throw TestSupportError("the bus refused: \(String(decoding: answer, as: UTF8.self))") }
            try write(Array("BEGIN\r\n".utf8))
            try send(try Message.methodCall(destination: "org.freedesktop.DBus", path: "/org/freedesktop/DBus", interface: "org.freedesktop.DBus", method: "Hello"))
        }

        deinit { close(socket) }

        func send(_ message: Message) throws {
            dbus_message_set_serial(message.raw, serial)
            serial += 1
            var bytes: UnsafeMutablePointer<CChar>? = nil
            var length: Int32 = 0
            guard dbus_message_marshal(message.raw, &bytes, &length) != 0, let bytes else { throw TestSupportError("marshal failed") }
            defer { dbus_free(bytes) }
            try write(Array(UnsafeBufferPointer(start: UnsafeRawPointer(bytes).assumingMemoryBound(to: UInt8.self), count: Int(length))))
        }

        private func write(_ bytes: [UInt8]) throws {
            var offset = 0
            while offset < bytes.count {
                let written = bytes.withUnsafeBytes { Glibc.write(socket, $0.baseAddress! + offset, $0.count - offset) }
                guard written > 0 else { throw TestSupportError("the bus stopped taking the calls: \(String(cString: strerror(errno)))") }
                offset += written
            }
        }
    }

    @Test(.timeLimit(.minutes(5)))
    func aClientThatDoesNotReadIsRefusedMoreData() async throws {
        let harness = try await Harness()
        let megabyte = [UInt8](repeating: 0x61, count: 1 << 20)
        _ = try await harness.write([[("application/octet-stream", megabyte)]])
        let (deaf, deafName) = try await Self.deafClient(on: harness)

        // 150 MiB asked for, none of it read.
        let held = try await Self.askWithoutReading(150, deaf, deafName, harness)
        #expect(held > 16 << 20, "the server answered the first calls with their data (\(held) bytes held)")
        #expect(held <= (64 << 20) + (2 << 20), "the rest were refused: \(held) bytes held for a client that reads nothing")

        // Everyone else is served, large data included.
        let started = ContinuousClock.now
        #expect(try await harness.changeCount() == 1)
        #expect(try await harness.readData("application/octet-stream").data == megabyte)
        // Bounded with room for a loaded host's stalls: a server held up by the deaf client
        // would not answer before the calls' own 20 s.
        #expect(ContinuousClock.now - started < .seconds(15))
        withExtendedLifetime(deaf) {}
    }

    /// Several clients that do not read: once the bus holds `max-unread-bytes` of the server's
    /// replies (96 MiB here), a client behind with its reading by more than 1 MiB is refused,
    /// below what one client may leave unread by itself (64 MiB).
    @Test(.timeLimit(.minutes(5)))
    func manyClientsThatDoNotReadAreRefusedSooner() async throws {
        let harness = try await Harness(limits: ["max-unread-bytes=96M"])
        let megabyte = [UInt8](repeating: 0x62, count: 1 << 20)
        _ = try await harness.write([[("application/octet-stream", megabyte)]])
        var deaf: [DeafClient] = []
        var heldByEach: [UInt64] = []
        for _ in 0..<2 {
            let (client, name) = try await Self.deafClient(on: harness)
            deaf.append(client)
            heldByEach.append(try await Self.askWithoutReading(70, client, name, harness))
        }
        // The first fills its own 64 MiB (give or take the replies on their way when the bus
        // was asked).
        #expect(heldByEach[0] > 60 << 20 && heldByEach[0] <= 66 << 20, "\(heldByEach)")
        // The second is refused once the bus holds over 96 MiB of ours: about 32 MiB in, where
        // by itself it would have been let leave 64 MiB unread.
        #expect(heldByEach[1] >= 24 << 20 && heldByEach[1] <= 40 << 20, "\(heldByEach)")
        // Everyone else is served, large data included.
        let started = ContinuousClock.now
        #expect(try await harness.readData("application/octet-stream").data == megabyte)
        // Bounded with room for a loaded host's stalls: a server held up by the deaf client
        // would not answer before the calls' own 20 s.
        #expect(ContinuousClock.now - started < .seconds(15))
        withExtendedLifetime(deaf) {}
    }

    /// A listener that subscribes to `Changed` and never reads: once the bus holds
    /// `max-unread-bytes` of the server's signals for it (4 MiB here), changes announcing
    /// large sets of type names are refused, so the bus never reaches the point where it stops
    /// reading the server; ordinary changes go on, and once the listener leaves, large ones are
    /// taken again.
    @Test(.timeLimit(.minutes(5)))
    func aListenerThatDoesNotReadHoldsUpLargeAnnouncementsOnly() async throws {
        let harness = try await Harness(limits: ["max-unread-bytes=4M"])
        var deaf: DeafClient? = try DeafClient(address: harness.bus.address)
        try deaf?.send(try Message.methodCall(
            destination: "org.freedesktop.DBus", path: "/org/freedesktop/DBus", interface: "org.freedesktop.DBus", method: "AddMatch",
            arguments: [.string("type='signal',interface='\(Harness.interface)',member='Changed'")]))
        // 13 items of 64 types of 240 bytes, each type its own: 195 KiB of type names, announced
        // in every Changed. Transient, so that nothing of it is stored on disk.
        let items: [[(String, [UInt8])]] = (0..<13).map { item in
            (0..<64).map { type in
                let name = "application/x-item\(item)-type\(type)-"
                return (name + String(repeating: "t", count: 240 - name.utf8.count), [])
            }
        }
        let transient: [(String, DBusValue)] = [("transient", .boolean(true))]
        var written = 0
        var refusal: DBus.DBusError?
        while written < 300, refusal == nil {
            do throws(DBus.DBusError) {
                _ = try await harness.call("WriteItems", [.string("wide"), Harness.inlineItems(items), Harness.options(transient)])
                written += 1
            } catch {
                refusal = error
            }
        }
        // 4 MiB is 21 such signals; asked every 256 KiB, the bus says so a little after (how
        // much after depends on how busy the machine is: the bound is far below the bus's
        // gigabyte all the same).
        let refused = try #require(refusal, "\(written) writes announcing 195 KiB each, none refused")
        #expect(refused.name == Harness.errorPrefix + "QuotaExceeded" && refused.message.contains("type names"), "\(refused)")
        #expect(written >= 21 && written < 200, "refused after \(written) writes")
        let held = try await Self.held(by: try await harness.client.nameOwner(Harness.busName) ?? "", harness).incoming
        #expect(held > 4 << 20 && held < 40 << 20, "the bus holds \(held) bytes of the server's")

        // Ordinary changes and reads go on, at once.
        let started = ContinuousClock.now
        let other = try harness.connect()
        #expect(try await harness.write(text: "small", on: other) > 0)
        #expect(try await harness.readData("text/plain;charset=utf-8").data == Array("small".utf8))
        // Bounded with room for a loaded host's stalls: a server held up by the deaf client
        // would not answer before the calls' own 20 s.
        #expect(ContinuousClock.now - started < .seconds(15))

        // Once the listener has gone, large announcements are taken again.
        deaf = nil
        let takenAgain = await eventually(timeout: .seconds(30)) {
            (try? await harness.call("WriteItems", [.string("wide"), Harness.inlineItems(items), Harness.options(transient)])) != nil
        }
        #expect(takenAgain, "a large announcement is taken again once the listener has gone")
    }

    /// A new ``DeafClient`` and its unique name, told by the names the bus lists once it has
    /// joined (it reads nothing, not even the answer to its `Hello`).
    static func deafClient(on harness: Harness) async throws -> (client: DeafClient, name: String) {
        let before = Set(try await names(harness))
        let client = try DeafClient(address: harness.bus.address)
        var joined: String?
        _ = try await eventually {
            joined = Set(try await names(harness)).subtracting(before).first
            return joined != nil
        }
        return (client, try #require(joined))
    }

    /// Sends `count` `ReadData` calls of `general`'s item from `deaf` (the bus name `name`)
    /// and returns what the bus holds for it once that stops growing.
    static func askWithoutReading(_ count: Int, _ deaf: DeafClient, _ name: String, _ harness: Harness) async throws -> UInt64 {
        for _ in 0..<count {
            try deaf.send(try Message.methodCall(
                destination: Harness.busName, path: Harness.path, interface: Harness.interface, method: "ReadData",
                arguments: [.string("general"), .uint32(0), .string("application/octet-stream"), .uint64(0)]))
        }
        // What the bus holds for it grows while the server answers, until every call has its
        // answer (its data, or a refusal) queued there, after the answers to `Hello` and the
        // `NameAcquired` signal. Should the bus count otherwise, the count that stops growing
        // for 5 s is taken instead: a stall of the server for seconds is not mistaken for its end.
        var held: (messages: UInt64, outgoing: UInt64, incoming: UInt64) = (0, 0, 0)
        var steady = 0
        let deadline = ContinuousClock.now + .seconds(60)
        while held.messages < UInt64(count) + 2, steady < 25, ContinuousClock.now < deadline {
            try await Task.sleep(for: .milliseconds(200))
            let now = try await Self.held(by: name, harness)
            steady = now.outgoing == held.outgoing && now.outgoing > 0 ? steady + 1 : 0
            held = now
        }
        return held.outgoing
    }

    /// What dbus-daemon holds for the connection `name` (`GetConnectionStats`): messages and
    /// bytes queued to it and unread, and bytes from it not yet delivered. Asked with the
    /// patience of a test on a loaded machine, where the library's own question is brief.
    static func held(by name: String, _ harness: Harness) async throws -> (messages: UInt64, outgoing: UInt64, incoming: UInt64) {
        let reply = try await harness.client.call(try Message.methodCall(
            destination: "org.freedesktop.DBus", path: "/org/freedesktop/DBus",
            interface: "org.freedesktop.DBus.Debug.Stats", method: "GetConnectionStats", arguments: [.string(name)]), timeout: .seconds(20))
        let stats = reply.arguments().first?.dictionaryEntries ?? []
        func number(_ key: String) throws -> UInt64 {
            let value = stats.first { $0.key.stringValue == key }?.value.variantValue
            guard let number = value?.uint32Value.map(UInt64.init) ?? value?.uint64Value else {
                throw TestSupportError("the bus's statistics of \(name) have no \(key)")
            }
            return number
        }
        return (try number("OutgoingMessages"), try number("OutgoingBytes"), try number("IncomingBytes"))
    }

    static func names(_ harness: Harness) async throws -> [String] {
        let reply = try await harness.client.call(try Message.methodCall(
            destination: "org.freedesktop.DBus", path: "/org/freedesktop/DBus", interface: "org.freedesktop.DBus", method: "ListNames"))
        return (reply.arguments().first?.stringArrayValue ?? []).filter { $0.hasPrefix(":") }
    }
}
