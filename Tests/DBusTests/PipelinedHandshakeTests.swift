import CDBus
@testable import DBus
import Foundation
import Synchronization
import Testing
import TestSupport

/// ``PipelinedHandshake``: a connection that does not wait for `Hello` sends the whole
/// authentication at once, reads the bus's answers without reading past them, and turns a
/// bus's refusal into the first call's error. Real buses and a scripted one.
struct PipelinedHandshakeTests {

    // MARK: Addresses

    @Test func plainUnixAddressesAreTaken() throws {
        let path = try #require(UnixSocketAddress(parsing: "unix:path=/tmp/bus"))
        #expect(path.path == Array("/tmp/bus".utf8) && !path.abstract && path.guid == nil)
        let escaped = try #require(UnixSocketAddress(parsing: "unix:path=/tmp/a%20b%2c,guid=00ff"))
        #expect(escaped.path == Array("/tmp/a b,".utf8) && escaped.guid == "00ff")
        let abstract = try #require(UnixSocketAddress(parsing: "unix:abstract=/tmp/dbus-x,guid=1"))
        #expect(abstract.path == Array("/tmp/dbus-x".utf8) && abstract.abstract && abstract.guid == "1")
        #expect(UnixSocketAddress(parsing: "unix:path=/" + String(repeating: "p", count: 98))?.path.count == 99)
        #expect(UnixSocketAddress(parsing: "unix:abstract=" + String(repeating: "a", count: 98))?.path.count == 98)
    }

    @Test(arguments: [
        "unix:tmpdir=/tmp", "unix:runtime=yes", "tcp:host=localhost,port=4000", "unix:path=/a;unix:path=/b",
        "unix:path=/a,path=/b", "unix:path=/a,abstract=b", "unix:path=%zz", "unix:path=/a%4", "unix:", "unix:path=",
        "unix:path=/a,foo=bar", "unix:path", "unix:path=/a%00b", "UNIX:path=/a", "",
        // Bytes that must be escaped, which libdbus refuses unescaped; names over its limits.
        "unix:path=/a b", "unix:path=/tmp/é", "unix:path=/a=b", "unix:abstract=@x",
        "unix:path=/" + String(repeating: "p", count: 99), "unix:abstract=" + String(repeating: "a", count: 99),
    ])
    func otherAddressesAreLeftToLibdbus(_ address: String) {
        #expect(UnixSocketAddress(parsing: address) == nil)
    }

    // MARK: The answers

    @Test func answersAreReadUpToTheirEndAndNoFurther() throws {
        let (ours, bus) = try socketPair()
        defer { close(ours); close(bus) }
        let answers = HandshakeAnswers(guid: "0123")
        #expect(answers.take(from: ours) == .waiting)
        write(bus, "OK 0123\r\n")
        #expect(answers.take(from: ours) == .waiting)
        write(bus, "AGREE_UN")
        #expect(answers.take(from: ours) == .waiting)
        write(bus, "IX_FD\r\nl\u{1}the first reply")
        #expect(answers.take(from: ours) == .done)
        #expect(readAvailable(ours) == Array("l\u{1}the first reply".utf8))
    }

    /// A line cut midway is read off and kept, so that the socket no longer reads as readable
    /// (the loop's `poll` then waits instead of spinning), and is finished by what comes next,
    /// even when its end is split between `\r` and `\n`.
    @Test func aLineCutMidwayIsKeptUntilItsEnd() throws {
        let (ours, bus) = try socketPair()
        defer { close(ours); close(bus) }
        let answers = HandshakeAnswers(guid: "0123")
        for part in ["OK 01", "23\r", "\nAG", "REE_UNIX_FD\r"] {
            write(bus, part)
            #expect(answers.take(from: ours) == .waiting)
            #expect(!readable(ours), "\(part.debugDescription) was left on the socket")
        }
        write(bus, "\nl\u{1}")
        #expect(answers.take(from: ours) == .done)
        #expect(readAvailable(ours) == Array("l\u{1}".utf8))
    }

    /// A line that never ends is refused once it is longer than any answer, however it comes.
    @Test func aLineThatNeverEndsIsRefused() throws {
        let (ours, bus) = try socketPair()
        defer { close(ours); close(bus) }
        let answers = HandshakeAnswers(guid: nil)
        var progress = HandshakeAnswers.Progress.waiting
        for _ in 0..<10 where progress == .waiting {
            write(bus, String(repeating: "x", count: 40))
            progress = answers.take(from: ours)
        }
        #expect(progress == .refused("the bus did not answer the handshake as D-Bus does"))
    }

    @Test(arguments: [
        ("REJECTED EXTERNAL\r\n", "refused the authentication (REJECTED EXTERNAL)"),
        ("OK 4567\r\nAGREE_UNIX_FD\r\n", "guid 4567 is not the one its address names (0123)"),
        ("OK 0123\r\nERROR not here\r\n", "does not pass file descriptors (ERROR not here)"),
        (String(repeating: "x", count: 300), "did not answer the handshake as D-Bus does"),
    ])
    func refusalsSayWhy(_ sent: String, _ reason: String) throws {
        let (ours, bus) = try socketPair()
        defer { close(ours); close(bus) }
        write(bus, sent)
        guard case .refused(let message) = HandshakeAnswers(guid: "0123").take(from: ours) else {
            Issue.record("\(sent.debugDescription) was taken")
            return
        }
        #expect(message.contains(reason), "\(message)")
    }

    @Test func aBusThatLeavesMidwayIsARefusal() throws {
        let (ours, bus) = try socketPair()
        defer { close(ours) }
        write(bus, "OK 0123\r\n")
        close(bus)
        let answers = HandshakeAnswers(guid: nil)
        #expect(answers.take(from: ours) == .waiting)
        #expect(answers.take(from: ours) == .refused("the bus closed the connection during the handshake"))
    }

    @Test func settlingWaitsOnlyUntilItsDeadline() throws {
        let (ours, bus) = try socketPair()
        defer { close(ours); close(bus) }
        let start = ContinuousClock.now
        #expect(HandshakeAnswers(guid: nil).settle(on: ours, until: Clock.now + 200_000_000) == .refused("the bus did not answer the handshake in time"))
        #expect(ContinuousClock.now - start >= .milliseconds(190))
    }

    // MARK: Against buses

    /// The whole authentication leaves in one write, `Hello` right behind it, before the bus
    /// has answered anything: a bus that never answers does not hold up the connection.
    @Test(arguments: [false, true])
    func theHandshakeLeavesAtOnce(abstract: Bool) async throws {
        let bus = try ScriptedBus(abstract: abstract, answer: nil)
        let start = ContinuousClock.now
        let connection = try Connection.connect(address: bus.address, awaitingName: false)
        #expect(ContinuousClock.now - start < .seconds(5))
        let expected = [0] + Array("AUTH EXTERNAL \(PipelinedHandshake.hexadecimal(String(geteuid())))\r\nNEGOTIATE_UNIX_FD\r\nBEGIN\r\n".utf8)
        let received = try await bus.received(atLeast: expected.count + 16)
        #expect(Array(received.prefix(expected.count)) == expected)
        // Then a message, little-endian, a method call: Hello.
        #expect(Array(received[expected.count..<(expected.count + 2)]) == [UInt8(ascii: "l"), 1])
        connection.close()
    }

    /// A bus that refuses the authentication, or leaves during it (its socket then reads as
    /// ended and hung up at once), fails the first call, saying so.
    @Test(arguments: [
        ("REJECTED EXTERNAL\r\n", false, "the bus refused the authentication (REJECTED EXTERNAL)"),
        ("REJECTED EXTERNAL\r\n", true, "the bus refused the authentication (REJECTED EXTERNAL)"),
        (nil, true, "the bus closed the connection during the handshake"),
    ] as [(String?, Bool, String)])
    func aRefusalFailsTheFirstCall(_ answer: String?, _ leaves: Bool, _ reason: String) async throws {
        // One that leaves does so once the call has come (the handshake, `Hello` and the call
        // are over 250 bytes): the client is then reading, not writing into a closed socket.
        let bus = try ScriptedBus(abstract: false, answer: answer, leaves: leaves, after: leaves ? 250 : 1)
        let connection = try Connection.connect(address: bus.address, awaitingName: false)
        await #expect {
            _ = try await connection.call(destination: "org.freedesktop.DBus", path: "/org/freedesktop/DBus", interface: "org.freedesktop.DBus", method: "GetId", timeout: .seconds(20))
        } throws: { error in
            (error as? DBus.DBusError)?.message.contains(reason) == true
        }
        #expect(!connection.isConnected)
    }

    /// A real bus: with the guid its address names, calls go through; with another, the first
    /// call fails, as libdbus's own handshake refuses to connect.
    @Test func theBusGuidIsChecked() async throws {
        let bus = try await TestBus()
        // The guid of the bus's socket (not the bus's GetId), as libdbus's own handshake has it.
        var error = CDBus.DBusError()
        dbus_error_init(&error)
        let probe = try #require(dbus_connection_open_private(bus.address, &error))
        #expect(dbus_bus_register(probe, &error) != 0)
        let guid = try #require(dbus_connection_get_server_id(probe).map { String(cString: $0) })
        dbus_connection_close(probe)
        dbus_connection_unref(probe)
        dbus_error_free(&error)

        let right = try Connection.connect(address: bus.address + ",guid=" + guid, awaitingName: false)
        let names = try await right.call(destination: "org.freedesktop.DBus", path: "/org/freedesktop/DBus", interface: "org.freedesktop.DBus", method: "ListNames", timeout: .seconds(20))
        #expect(names.first?.stringArrayValue?.contains("org.freedesktop.DBus") == true)
        right.close()

        let other = String(repeating: "0", count: 32)
        #expect(throws: DBus.DBusError.self) { try Connection.connect(address: bus.address + ",guid=" + other) }
        let wrong = try Connection.connect(address: bus.address + ",guid=" + other, awaitingName: false)
        await #expect {
            _ = try await wrong.call(destination: "org.freedesktop.DBus", path: "/org/freedesktop/DBus", interface: "org.freedesktop.DBus", method: "GetId", timeout: .seconds(20))
        } throws: { error in
            (error as? DBus.DBusError)?.message.contains("is not the one its address names") == true
        }
    }

    // MARK: Helpers

    private func socketPair() throws -> (Int32, Int32) {
        var fds: [Int32] = [0, 0]
        guard socketpair(AF_UNIX, Int32(SOCK_STREAM.rawValue), 0, &fds) == 0 else { throw TestSupportError("socketpair failed") }
        return (fds[0], fds[1])
    }

    private func write(_ fd: Int32, _ text: String) {
        let bytes = Array(text.utf8)
        #expect(Glibc.write(fd, bytes, bytes.count) == bytes.count)
    }

    private func readable(_ fd: Int32) -> Bool {
        var probe = pollfd(fd: fd, events: Int16(POLLIN), revents: 0)
        return poll(&probe, 1, 0) > 0
    }

    private func readAvailable(_ fd: Int32) -> [UInt8] {
        var buffer = [UInt8](repeating: 0, count: 1024)
        let count = recv(fd, &buffer, buffer.count, Int32(MSG_DONTWAIT))
        return count > 0 ? Array(buffer[..<count]) : []
    }
}

/// A listening socket standing in for a bus: it accepts one connection, records what comes,
/// answers the handshake with `answer` (or never) once `after` bytes have come, and then
/// `leaves` (closes) or stays.
private final class ScriptedBus: @unchecked Sendable {
    let address: String
    private let listener: Int32
    private let directory: String
    private let bytes = Mutex<[UInt8]>([])
    private let done = Atomic<Bool>(false)

    init(abstract: Bool, answer: String?, leaves: Bool = false, after: Int = 1) throws {
        directory = try Paths.temporaryDirectory("pasteboardd-scripted-bus")
        let name = abstract ? "pasteboardd-scripted-bus-\(getpid())-\(UInt32.random(in: 0 ... .max))" : directory + "/bus"
        let socketAddress = UnixSocketAddress(path: Array(name.utf8), abstract: abstract, guid: nil)
        listener = socket(AF_UNIX, Int32(SOCK_STREAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0)
        guard listener >= 0, socketAddress.bind(listener), listen(listener, 4) == 0 else {
            throw TestSupportError("the scripted bus could not listen on \(name)")
        }
        address = abstract ? "unix:abstract=" + name : "unix:path=" + name
        let thread = Thread { [self] in serve(answer, leaves: leaves, after: after) }
        thread.start()
    }

    deinit {
        done.store(true, ordering: .releasing)
        shutdown(listener, Int32(SHUT_RDWR))
        close(listener)
        try? FileManager.default.removeItem(atPath: directory)
    }

    /// What the client sent, once there are at least `count` bytes (waiting up to 20 s).
    func received(atLeast count: Int) async throws -> [UInt8] {
        let deadline = ContinuousClock.now + .seconds(20)
        while bytes.withLock({ $0.count }) < count {
            guard ContinuousClock.now < deadline else { throw TestSupportError("the client sent \(bytes.withLock { $0.count }) bytes, not \(count)") }
            try await Task.sleep(for: .milliseconds(5))
        }
        return bytes.withLock { $0 }
    }

    private func serve(_ answer: String?, leaves: Bool, after: Int) {
        let client = accept(listener, nil, nil)
        guard client >= 0 else { return }
        defer { close(client) }
        var answered = false
        var buffer = [UInt8](repeating: 0, count: 4096)
        while !done.load(ordering: .acquiring) {
            var probe = pollfd(fd: client, events: Int16(POLLIN), revents: 0)
            guard poll(&probe, 1, 100) >= 0 else { return }
            guard probe.revents != 0 else { continue }
            let count = read(client, &buffer, buffer.count)
            guard count > 0 else { return }
            let total = bytes.withLock { bytes in
                bytes += buffer[..<count]
                return bytes.count
            }
            guard !answered, total >= after else { continue }
            answered = true
            if let answer {
                _ = answer.utf8CString.withUnsafeBufferPointer { send(client, $0.baseAddress, $0.count - 1, Int32(MSG_NOSIGNAL)) }
            }
            if leaves { return }
        }
    }
}
