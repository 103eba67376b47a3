import CDBus
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
            // Long enough for the calls sent behind it to be in the socket when it ends, on a
            // machine loaded by every suite at once (300 ms once was not).
            usleep(1_500_000)
            call.reply([])
        case "Emit":
            call.reply([], then: {
                [try! Message.signal(path: "/org/example/Piling", interface: "org.example.Piling", name: "Said", arguments: call.arguments)]
            })
        default:
            call.fail(.unknownMethod("no \(call.member)"))
        }
    }

    func properties(of interface: String) async throws(DBus.DBusError) -> [(name: String, value: DBusValue)] { [] }
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
        // Each left by itself (kept as its bytes, each is written by the loop, alone).
        #expect(served.server.gatheredMessages == served.server.gatheredWrites)
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
        #expect(served.server.gatheredMessages > served.server.gatheredWrites, "no write held several answers")
    }

    @Test func aPeerCallAmongThemIsAnsweredAfterTheCallsBeforeIt() async throws {
        let blocked = Task { try await served.client.call(destination: "org.example.Piling", path: "/org/example/Piling", interface: "org.example.Piling", method: "Block") }
        try await Task.sleep(for: .milliseconds(50))
        // A client of raw bytes: its calls reach the server in one piece, and their answers are
        // read in the order the server sent them. The `Ping`'s answer must not overtake the
        // answers held before it (libdbus used to answer it itself, at once).
        let path = String(bus.address.dropFirst("unix:path=".count))
        let socket = try #require(connectUnixSocket(path))
        defer { close(socket) }
        _ = UnixFileDescriptor.writeAll(socket, Array("\0AUTH EXTERNAL \(PipelinedHandshake.hexadecimal(String(getuid())))\r\nBEGIN\r\n".utf8)[...], socket: true)
        var calls = [try Message.methodCall(destination: "org.freedesktop.DBus", path: "/org/freedesktop/DBus", interface: "org.freedesktop.DBus", method: "Hello")]
        for index in 0..<6 {
            calls.append(try Message.methodCall(destination: "org.example.Piling", path: "/org/example/Piling", interface: "org.example.Piling", method: "Emit", arguments: [.string("\(index)")]))
        }
        calls.append(try Message.methodCall(destination: "org.example.Piling", path: "/org/example/Piling", interface: "org.freedesktop.DBus.Peer", method: "Ping"))
        var bytes: [UInt8] = []
        for (index, call) in calls.enumerated() {
            dbus_message_set_serial(call.raw, UInt32(index + 1))
            var marshalled: UnsafeMutablePointer<CChar>?
            var count: Int32 = 0
            try #require(dbus_message_marshal(call.raw, &marshalled, &count) != 0)
            bytes += UnsafeRawBufferPointer(start: marshalled, count: Int(count))
            dbus_free(marshalled)
        }
        _ = UnixFileDescriptor.writeAll(socket, bytes[...], socket: true)

        // The answers to serials 2 to 8, in the order they came.
        var answered: [UInt32] = []
        var received: [UInt8] = []
        let deadline = ContinuousClock.now + .seconds(20)
        while answered.count < 7, ContinuousClock.now < deadline {
            var ready = pollfd(fd: socket, events: Int16(POLLIN), revents: 0)
            guard poll(&ready, 1, 100) == 1 else { continue }
            var buffer = [UInt8](repeating: 0, count: 65536)
            let count = buffer.withUnsafeMutableBytes { recv(socket, $0.baseAddress, $0.count, 0) }
            guard count > 0 else { break }
            received += buffer[..<count]
            // The handshake's answers, then whole messages.
            while let end = received.firstIndex(of: UInt8(ascii: "\n")), received.first != UInt8(ascii: "l") {
                received.removeFirst(end + 1)
            }
            for message in GatheredWriteBytesTests.messages(taking: &received) where message.replySerial >= 2 {
                answered.append(message.replySerial)
            }
        }
        _ = try await blocked.value
        #expect(Set(answered) == Set(2...8))
        #expect(answered.last == 8, "the Ping (8) was answered in the order \(answered)")
    }

    /// `Peer` is answered by the connection's dispatcher now, not libdbus: on any path, as
    /// libdbus did, and with its error for a method it lacks.
    @Test func peerCallsAreAnsweredOnAnyPath() async throws {
        let peer = "org.freedesktop.DBus.Peer"
        for path in ["/org/example/Piling", "/no/object/here"] {
            #expect(try await served.client.call(destination: "org.example.Piling", path: path, interface: peer, method: "Ping") == [])
            let id = try await served.client.call(destination: "org.example.Piling", path: path, interface: peer, method: "GetMachineId")
            #expect(id.first?.stringValue?.count == 32)
        }
        await #expect {
            _ = try await served.client.call(destination: "org.example.Piling", path: "/", interface: peer, method: "Pong")
        } throws: { ($0 as? DBus.DBusError)?.name == "org.freedesktop.DBus.Error.UnknownMethod" }
    }

    @Test func signalsKeepTheirOrderWhenTheSocketFillsUp() async throws {
        let count = 6000
        let stream = try await served.client.signals(matching: MatchRule(interface: "org.example.Burst", member: "Numbered"))
        let filler = DBusValue.bytes([UInt8](repeating: 0x2a, count: 200))
        // The bus reads nothing for a while: the server's socket fills, and what does not fit
        // waits in libdbus, which writes it once the bus reads again.
        bus.pause()
        for start in stride(from: 0, to: count, by: 100) {
            served.server.send(try (start..<start + 100).map { index throws(DBus.DBusError) in
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

/// ``GatheredWrite`` on its own, against a socketpair: what it writes, and what it leaves to
/// libdbus.
struct GatheredWriteBytesTests {
    static func signal(_ word: String, bytes: Int = 0) throws -> Message {
        try Message.signal(path: "/org/example/Piling", interface: "org.example.Piling", name: "Said", arguments: [.string(word), .bytes([UInt8](repeating: 7, count: bytes))])
    }

    /// The messages read back from `socket`, as libdbus reads them off the wire.
    static func messages(in socket: Int32) -> [Message] {
        var bytes: [UInt8] = []
        var buffer = [UInt8](repeating: 0, count: 65536)
        while true {
            let count = buffer.withUnsafeMutableBytes { recv(socket, $0.baseAddress, $0.count, Int32(MSG_DONTWAIT)) }
            guard count > 0 else { break }
            bytes += buffer[..<count]
        }
        return messages(taking: &bytes)
    }

    /// The whole messages at the start of `bytes`, taken out of it.
    static func messages(taking bytes: inout [UInt8]) -> [Message] {
        var messages: [Message] = []
        var offset = 0
        while offset < bytes.count {
            let length = bytes[offset...].withUnsafeBufferPointer { buffer in
                buffer.withMemoryRebound(to: CChar.self) { dbus_message_demarshal_bytes_needed($0.baseAddress, Int32($0.count)) }
            }
            guard length > 0, offset + Int(length) <= bytes.count else { break }
            var error = CDBus.DBusError()
            dbus_error_init(&error)
            let raw = bytes[offset..<(offset + Int(length))].withUnsafeBufferPointer { buffer in
                buffer.withMemoryRebound(to: CChar.self) { dbus_message_demarshal($0.baseAddress, length, &error) }
            }
            dbus_error_free(&error)
            guard let raw else { break }
            messages.append(Message(taking: raw))
            offset += Int(length)
        }
        bytes.removeFirst(offset)
        return messages
    }

    func withSocketPair(_ body: (Int32, Int32) throws -> Void) throws {
        var fds: [Int32] = [0, 0]
        try #require(socketpair(AF_UNIX, Int32(SOCK_STREAM.rawValue), 0, &fds) == 0)
        defer { fds.forEach { close($0) } }
        try body(fds[0], fds[1])
    }

    @Test func signalsAreWrittenWholeAndNumberedInOrder() throws {
        try withSocketPair { writer, reader in
            var gathered = GatheredWrite()
            var next: UInt32 = 40
            let sent = [try Self.signal("one"), try Self.signal("two", bytes: 3000), try Self.signal("three")]
            #expect(gathered.write(sent[...], to: writer) { next += 1; return next } == 3)
            let read = Self.messages(in: reader)
            #expect(read.map(\.serial) == [41, 42, 43])
            #expect(read.map { $0.arguments().first } == [.string("one"), .string("two"), .string("three")])
            #expect(read[1].arguments().last == .bytes([UInt8](repeating: 7, count: 3000)))
            // The messages themselves are left unnumbered, as libdbus would need them.
            #expect(sent.allSatisfy { $0.serial == 0 })
        }
    }

    @Test func whatIsNotForThisPathIsLeftToLibdbus() throws {
        try withSocketPair { writer, reader in
            var gathered = GatheredWrite()
            var next: UInt32 = 0
            let serial = { () -> UInt32 in next += 1; return next }
            // A call libdbus made (a signature argument is left to its validation) is numbered
            // by libdbus.
            let call = try Message.methodCall(destination: "org.example.Piling", path: "/", interface: "org.example.Piling", method: "Emit", arguments: [.signature("s")])
            #expect(call.wire == nil)
            let (a, b, c, d, e) = (try Self.signal("a"), try Self.signal("b"), try Self.signal("c"), try Self.signal("d"), try Self.signal("e"))
            // A call first: nothing is written. A call after two signals: the two are.
            #expect(gathered.write([call, a, b][...], to: writer, serial: serial) == 0)
            #expect(gathered.write([a, b, call][...], to: writer, serial: serial) == 2)
            // One libdbus made is not worth it alone; one kept as its bytes is written alone.
            let made = try Message.signal(path: "/", interface: "org.example.Piling", name: "Said", arguments: [.signature("g"), .byte(1)])
            #expect(made.wire == nil && c.wire != nil)
            #expect(gathered.write([made][...], to: writer, serial: serial) == 0)
            #expect(gathered.write([c][...], to: writer, serial: serial) == 1)
            // Nor more than fits in one buffer of the kernel's.
            let large = try Self.signal("large", bytes: GatheredWrite.maximumBytes)
            #expect(gathered.write([large, d][...], to: writer, serial: serial) == 0)
            // A descriptor travels beside the bytes, which this path does not send.
            let file = try UnixFileDescriptor.memoryFile(name: "gathered")
            let carrying = try Message.signal(path: "/", interface: "org.example.Piling", name: "Handed", arguments: [.unixFD(file)])
            #expect(gathered.write([carrying, e][...], to: writer, serial: serial) == 0)
            #expect(Self.messages(in: reader).map { $0.arguments().first } == [.string("a"), .string("b"), .string("c")])
        }
    }

    @Test func aFullSocketRefusesTheWholeWrite() throws {
        try withSocketPair { writer, reader in
            var gathered = GatheredWrite()
            var next: UInt32 = 0
            _ = fcntl(writer, F_SETFL, O_NONBLOCK)
            let filler = [UInt8](repeating: 1, count: 4096)
            while filler.withUnsafeBytes({ send(writer, $0.baseAddress, $0.count, Int32(MSG_DONTWAIT)) }) > 0 {}
            let pair = [try Self.signal("a"), try Self.signal("b")]
            #expect(gathered.write(pair[...], to: writer) { next += 1; return next } == 0)
            // Nothing of theirs went: the socket holds the filler only.
            var buffer = [UInt8](repeating: 0, count: 65536)
            var total = 0
            while true {
                let count = buffer.withUnsafeMutableBytes { recv(reader, $0.baseAddress, $0.count, Int32(MSG_DONTWAIT)) }
                guard count > 0 else { break }
                #expect(buffer[..<count].allSatisfy { $0 == 1 })
                total += count
            }
            #expect(total > 0 && total % filler.count == 0)
        }
    }
}
