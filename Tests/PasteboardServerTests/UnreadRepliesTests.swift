import CDBus
@testable import DBus
import Foundation
import Testing
import TestSupport

/// A client that asks for data and never reads the answers must not make the bus stop reading
/// the server's replies to everyone (dbus-daemon holds what a client has not read against the
/// sender's `max_incoming_bytes`).
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

    @Test(.timeLimit(.minutes(2)))
    func aClientThatDoesNotReadIsRefusedMoreData() async throws {
        let harness = try await Harness()
        let megabyte = [UInt8](repeating: 0x61, count: 1 << 20)
        _ = try await harness.write([[("application/octet-stream", megabyte)]])
        let before = Set(try await Self.names(harness))
        let deaf = try DeafClient(address: harness.bus.address)
        var joined: String?
        _ = try await eventually {
            joined = Set(try await Self.names(harness)).subtracting(before).first
            return joined != nil
        }
        let deafName = try #require(joined)

        // 150 MiB asked for, none of it read.
        let held = try await Self.askWithoutReading(150, deaf, deafName, harness)
        #expect(held > 16 << 20, "the server answered the first calls with their data (\(held) bytes held)")
        #expect(held <= (64 << 20) + (2 << 20), "the rest were refused: \(held) bytes held for a client that reads nothing")

        // Everyone else is served, large data included.
        let started = ContinuousClock.now
        #expect(try await harness.changeCount() == 1)
        #expect(try await harness.readData("application/octet-stream").data == megabyte)
        #expect(ContinuousClock.now - started < .seconds(5))
        withExtendedLifetime(deaf) {}
    }

    /// Several clients that do not read: once the bus holds 256 MiB of the server's replies,
    /// a client behind with its reading by more than 1 MiB is refused, far below what one
    /// client may leave unread by itself (64 MiB).
    @Test(.timeLimit(.minutes(2)))
    func manyClientsThatDoNotReadAreRefusedSooner() async throws {
        let harness = try await Harness()
        let megabyte = [UInt8](repeating: 0x62, count: 1 << 20)
        _ = try await harness.write([[("application/octet-stream", megabyte)]])
        var deaf: [DeafClient] = []
        var heldByEach: [UInt64] = []
        for _ in 0..<5 {
            let before = Set(try await Self.names(harness))
            let client = try DeafClient(address: harness.bus.address)
            deaf.append(client)
            var joined: String?
            _ = try await eventually {
                joined = Set(try await Self.names(harness)).subtracting(before).first
                return joined != nil
            }
            heldByEach.append(try await Self.askWithoutReading(70, client, try #require(joined), harness))
        }
        // Four fill their own 64 MiB (give or take the replies on their way when the bus was
        // asked), about 256 MiB together.
        for held in heldByEach.prefix(4) {
            #expect(held > 60 << 20 && held <= 66 << 20, "\(heldByEach)")
        }
        // The fifth is refused once the bus holds over 256 MiB of ours: a few MiB in, where
        // by itself it would have been let leave 64 MiB unread.
        #expect(heldByEach[4] >= 1 << 20 && heldByEach[4] <= 12 << 20, "\(heldByEach)")
        // Everyone else is served, large data included.
        let started = ContinuousClock.now
        #expect(try await harness.readData("application/octet-stream").data == megabyte)
        #expect(ContinuousClock.now - started < .seconds(5))
        withExtendedLifetime(deaf) {}
    }

    /// Sends `count` `ReadData` calls of `general`'s item from `deaf` (the bus name `name`)
    /// and returns what the bus holds for it once that stops growing.
    static func askWithoutReading(_ count: Int, _ deaf: DeafClient, _ name: String, _ harness: Harness) async throws -> UInt64 {
        for _ in 0..<count {
            try deaf.send(try Message.methodCall(
                destination: Harness.busName, path: Harness.path, interface: Harness.interface, method: "ReadData",
                arguments: [.string("general"), .uint32(0), .string("application/octet-stream"), .uint64(0)]))
        }
        // What the bus holds for it grows while the server answers, then stops.
        var held: UInt64 = 0
        var steady = 0
        let deadline = ContinuousClock.now + .seconds(60)
        while steady < 5, ContinuousClock.now < deadline {
            try await Task.sleep(for: .milliseconds(200))
            let now = try await harness.client.heldBytes(of: name).outgoing
            steady = now == held && now > 0 ? steady + 1 : 0
            held = now
        }
        return held
    }

    static func names(_ harness: Harness) async throws -> [String] {
        let reply = try await harness.client.call(try Message.methodCall(
            destination: "org.freedesktop.DBus", path: "/org/freedesktop/DBus", interface: "org.freedesktop.DBus", method: "ListNames"))
        return (reply.arguments().first?.stringArrayValue ?? []).filter { $0.hasPrefix(":") }
    }
}
