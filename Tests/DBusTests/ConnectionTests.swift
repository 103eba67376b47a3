@testable import DBus
import Foundation
import Synchronization
import Testing
import TestSupport

/// An object that echoes, fails on request, and hands back descriptors, for exercising the
/// binding without any pasteboard code.
final class EchoObject: DBusObject {
    let introspectionXML = """
        <node><interface name="org.example.Echo"><method name="Echo"><arg type="v" direction="in"/><arg type="v" direction="out"/></method></interface></node>
        """
    /// How many `Hang` calls have arrived: a test waits for its call to reach the peer.
    let hung = Mutex(0)

    func handle(_ call: MethodCall) {
        switch (call.member, call.signature) {
        case ("Echo", _):
            call.reply(call.arguments)
        case ("Fail", "s"):
            call.fail(DBusError(name: "org.example.Error.Requested", message: call.arguments[0].stringValue ?? ""))
        case ("Hang", _):
            hung.withLock { $0 += 1 }  // never answers
        case ("Emit", "s"):
            let signal = try! Message.signal(path: "/org/example/Echo", interface: "org.example.Echo", name: "Said", arguments: call.arguments)
            call.reply([], followedBy: [signal])
        default:
            call.fail(.unknownMethod("no \(call.member)"))
        }
    }

    func properties(of interface: String) async throws(DBusError) -> [(name: String, value: DBusValue)] {
        guard interface == "org.example.Echo" else { throw .unknownInterface("no \(interface)") }
        return [("Greeting", .string("hello")), ("Answer", .uint32(42))]
    }
}

/// A private bus, a connection serving an object under a well-known name, and a client.
struct ServedObject {
    let bus: TestBus
    let server: Connection
    let client: Connection

    init(_ object: any DBusObject, at path: String, name: String) async throws {
        bus = try await TestBus()
        server = try Connection.connect(address: bus.address)
        client = try Connection.connect(address: bus.address)
        try server.export(object, at: path)
        #expect(try await server.requestName(name) == .primaryOwner)
    }
}

struct ConnectionTests {
    let bus: TestBus
    let server: Connection
    let client: Connection
    let echo = EchoObject()

    init() async throws {
        let served = try await ServedObject(echo, at: "/org/example/Echo", name: "org.example.Echo")
        (bus, server, client) = (served.bus, served.server, served.client)
    }

    func echo(_ values: [DBusValue]) async throws -> [DBusValue] {
        try await client.call(destination: "org.example.Echo", path: "/org/example/Echo", interface: "org.example.Echo", method: "Echo", arguments: values)
    }

    @Test func uniqueNamesAreAssigned() {
        #expect(server.uniqueName.hasPrefix(":"))
        #expect(client.uniqueName != server.uniqueName)
        #expect(client.canPassFileDescriptors)
    }

    @Test func everyTypeRoundTrips() async throws {
        let values: [DBusValue] = [
            .byte(7), .boolean(true), .int16(-3), .uint16(65535), .int32(-70000), .uint32(4_000_000_000),
            .int64(-1 << 40), .uint64(.max), .double(2.5), .string("héllo ✓"), .objectPath("/a/b"), .signature("a{sv}"),
            .bytes([0, 1, 2, 255]), .bytes([]), .strings([]), .strings(["a", "b"]),
            .dictionary(key: "s", value: "v", [(.string("k"), .variant(.uint64(9))), (.string("z"), .variant(.strings(["x"])))]),
            .structure([.uint64(1), .int64(-1), .strings(["t"])]),
            .array(element: "(txas)", []),
            .array(element: "v", [.variant(.byte(1)), .variant(.string("v"))]), .array(element: "t", [.uint64(1), .uint64(2)]),
            .array(element: "aay", [.array(element: "ay", [.bytes([1])])]), .array(element: "g", [.signature("as")]),
            .variant(.variant(.int32(1))),
        ]
        let back = try await echo(values)
        #expect(back == values)
    }

    /// The loop reads a large message over many reads, then dispatches each message as soon as
    /// it is whole: small calls sent right behind a large one, some with descriptors, are all
    /// answered with what they carried.
    @Test func smallCallsBehindALargeOneAreAnsweredInOrder() async throws {
        let big = (0..<(4 << 20)).map { UInt8(truncatingIfNeeded: $0 &* 7) }
        var fds: [Int32] = [0, 0]
        #expect(pipe(&fds) == 0)
        let readEnd = UnixFileDescriptor(owning: fds[0])
        let writeEnd = UnixFileDescriptor(owning: fds[1])
        let answers = try await withThrowingTaskGroup(of: (Int, [DBusValue]).self) { group in
            // On one connection: a large call with a descriptor, then small ones right behind it,
            // every other one with a descriptor too.
            group.addTask { (0, try await self.echo([.bytes(big), .unixFD(writeEnd)])) }
            try await Task.sleep(for: .milliseconds(1))
            for index in 1...20 {
                let values: [DBusValue] = index.isMultiple(of: 2) ? [.uint32(UInt32(index)), .unixFD(readEnd)] : [.uint32(UInt32(index))]
                group.addTask { (index, try await self.echo(values)) }
            }
            var answers: [Int: [DBusValue]] = [:]
            for try await (index, values) in group { answers[index] = values }
            return answers
        }
        #expect(answers[0]?.first?.bytesValue == big)
        for index in 1...20 {
            #expect(answers[index]?.first == .uint32(UInt32(index)))
            #expect((answers[index]?.count ?? 0) == (index.isMultiple(of: 2) ? 2 : 1))
        }
        // The descriptors that came back are the pipe's own ends.
        guard let echoedWrite = answers[0]?.last?.fileDescriptorValue, let echoedRead = answers[2]?.last?.fileDescriptorValue else {
            Issue.record("no descriptors came back")
            return
        }
        var byte: UInt8 = 42
        #expect(write(echoedWrite.rawValue, &byte, 1) == 1)
        var got: UInt8 = 0
        #expect(read(echoedRead.rawValue, &got, 1) == 1)
        #expect(got == 42)
    }

    @Test func bytesCopyExactly() async throws {
        let big = (0..<(3 << 20)).map { UInt8(truncatingIfNeeded: $0 &* 31) }
        let back = try await echo([.bytes(big)])
        #expect(back.first?.bytesValue == big)
    }

    @Test func errorRepliesKeepTheirNames() async throws {
        do {
            _ = try await client.call(destination: "org.example.Echo", path: "/org/example/Echo", interface: "org.example.Echo", method: "Fail", arguments: [.string("because")])
            Issue.record("Fail returned")
        } catch {
            #expect(error == DBusError(name: "org.example.Error.Requested", message: "because"))
        }
    }

    @Test func unknownObjectsAndMethodsAreRefused() async throws {
        await #expect(throws: DBusError.self) {
            _ = try await client.call(destination: "org.example.Echo", path: "/nowhere", interface: "org.example.Echo", method: "Echo")
        }
        do {
            _ = try await client.call(destination: "org.example.Echo", path: "/org/example/Echo", interface: "org.example.Echo", method: "Nope")
            Issue.record("an unknown method was answered")
        } catch {
            #expect(error.name == "org.freedesktop.DBus.Error.UnknownMethod")
        }
    }

    @Test func fileDescriptorsTravelAndAreOwned() async throws {
        var fds: [Int32] = [0, 0]
        #expect(pipe(&fds) == 0)
        let readEnd = UnixFileDescriptor(owning: fds[0])
        let writeEnd = UnixFileDescriptor(owning: fds[1])
        let back = try await echo([.unixFD(writeEnd)])
        let received = try #require(back.first?.fileDescriptorValue)
        #expect(received.rawValue != writeEnd.rawValue)
        #expect(write(received.rawValue, "hi", 2) == 2)
        var buffer = [UInt8](repeating: 0, count: 2)
        #expect(read(readEnd.rawValue, &buffer, 2) == 2)
        #expect(buffer == Array("hi".utf8))
    }

    /// Sixteen descriptors travel in one message; a seventeenth is refused before sending (the
    /// bus would disconnect the sender), and the connection goes on.
    @Test func aMessageCarriesAtMostSixteenDescriptors() async throws {
        var fds: [Int32] = [0, 0]
        #expect(pipe(&fds) == 0)
        let readEnd = UnixFileDescriptor(owning: fds[0])
        _ = UnixFileDescriptor(owning: fds[1])
        let sixteen = [DBusValue](repeating: .unixFD(readEnd), count: Message.maximumDescriptors)
        #expect(try await echo([.array(element: "h", sixteen)]).first?.arrayValue?.count == 16)
        await #expect {
            _ = try await self.echo([.array(element: "h", sixteen), .unixFD(readEnd)])
        } throws: { error in
            (error as? DBusError)?.name == DBusError.limitsExceededName && (error as? DBusError)?.message.contains("at most 16") == true
        }
        #expect(try await echo([.uint32(7)]).first?.uint32Value == 7)
    }

    /// A message's own copies of its descriptors are closed once the message goes, though
    /// that happens off the thread that let go of it: the write end of a pipe whose read end
    /// only a dropped message held reports the reader gone.
    @Test func aDroppedMessageClosesItsDescriptors() async throws {
        var fds: [Int32] = [0, 0]
        #expect(pipe(&fds) == 0)
        let writeEnd = UnixFileDescriptor(owning: fds[1])
        var message: Message? = try Message.methodCall(
            destination: nil, path: "/org/example/Echo", interface: "org.example.Echo", method: "Echo",
            arguments: [.unixFD(UnixFileDescriptor(owning: fds[0]))])
        #expect(await Self.readerIsGone(writeEnd, waitingMilliseconds: 0) == false)
        #expect(message != nil)
        message = nil
        #expect(await Self.readerIsGone(writeEnd, waitingMilliseconds: 20_000))
    }

    /// Whether every read end of the pipe behind `writeEnd` is closed (the write end polls
    /// `POLLERR`), waiting by suspending rather than holding a thread of the tests' pool.
    private static func readerIsGone(_ writeEnd: UnixFileDescriptor, waitingMilliseconds: Int) async -> Bool {
        await eventually(timeout: .milliseconds(waitingMilliseconds), every: .milliseconds(1)) {
            var entry = pollfd(fd: writeEnd.rawValue, events: Int16(POLLOUT), revents: 0)
            return poll(&entry, 1, 0) == 1 && entry.revents & Int16(POLLERR) != 0
        }
    }

    @Test func signalsArriveAfterTheReplyThatCausedThem() async throws {
        let stream = try await client.signals(matching: MatchRule(interface: "org.example.Echo", member: "Said"))
        _ = try await client.call(destination: "org.example.Echo", path: "/org/example/Echo", interface: "org.example.Echo", method: "Emit", arguments: [.string("one")])
        var iterator = stream.makeAsyncIterator()
        let signal = try #require(await iterator.next())
        #expect(signal.arguments() == [.string("one")])
        #expect(signal.sender == server.uniqueName)
    }

    @Test func introspectionAndPropertiesAreAnswered() async throws {
        let xml = try await client.call(destination: "org.example.Echo", path: "/org/example/Echo", interface: "org.freedesktop.DBus.Introspectable", method: "Introspect")
        #expect(xml.first?.stringValue?.contains("org.example.Echo") == true)
        let parent = try await client.call(destination: "org.example.Echo", path: "/org", interface: "org.freedesktop.DBus.Introspectable", method: "Introspect")
        #expect(parent.first?.stringValue?.contains(#"<node name="example"/>"#) == true)
        let answer = try await client.call(destination: "org.example.Echo", path: "/org/example/Echo", interface: "org.freedesktop.DBus.Properties", method: "Get", arguments: [.string("org.example.Echo"), .string("Answer")])
        #expect(answer == [.variant(.uint32(42))])
        let all = try await client.call(destination: "org.example.Echo", path: "/org/example/Echo", interface: "org.freedesktop.DBus.Properties", method: "GetAll", arguments: [.string("org.example.Echo")])
        #expect(all.first?.dictionaryEntries?.map(\.key) == [.string("Greeting"), .string("Answer")])
        _ = try await client.call(destination: "org.example.Echo", path: "/org/example/Echo", interface: "org.freedesktop.DBus.Peer", method: "Ping")
    }

    @Test func timeoutsFailPendingCalls() async throws {
        let start = ContinuousClock.now
        do {
            _ = try await client.call(try Message.methodCall(destination: "org.example.Echo", path: "/org/example/Echo", interface: "org.example.Echo", method: "Hang"), timeout: .milliseconds(300))
            Issue.record("Hang returned")
        } catch {
            #expect(error.name == "org.freedesktop.DBus.Error.NoReply")
            #expect(error.isTimeout, "\(error)")
        }
        #expect(ContinuousClock.now - start < .seconds(15), "the 300 ms deadline was not enforced")
    }

    /// A peer leaving before it answers is `NoReply` too, from the bus, and no timeout: a
    /// caller tells "it left" from "it did not answer in time" by ``DBusError/isTimeout``, not
    /// by the clock, which a loaded machine makes late.
    @Test func aPeerThatLeavesIsNoTimeout() async throws {
        let hang = try Message.methodCall(destination: "org.example.Echo", path: "/org/example/Echo", interface: "org.example.Echo", method: "Hang")
        async let hanging: DBusError? = { [client] () async -> DBusError? in
            do throws(DBusError) {
                _ = try await client.call(hang, timeout: .seconds(60))
                return nil
            } catch {
                return error
            }
        }()
        // Closed once the call has reached the peer: before, the bus would refuse it for want
        // of the name instead.
        #expect(await eventually { echo.hung.withLock { $0 } > 0 }, "Hang never arrived")
        server.close()
        let error = try #require(await hanging, "Hang returned")
        #expect(error.name == DBusError.noReplyName, "\(error)")
        #expect(!error.isTimeout, "\(error)")
    }

    /// Deadlines hold whatever the order the calls start and end in: the connection keeps only
    /// a bound on the earliest, raised once it has passed.
    @Test func deadlinesHoldInAnyOrder() async throws {
        func hang(_ timeout: Duration) async -> (error: String?, after: Duration) {
            let start = ContinuousClock.now
            do {
                _ = try await client.call(try Message.methodCall(destination: "org.example.Echo", path: "/org/example/Echo", interface: "org.example.Echo", method: "Hang"), timeout: timeout)
                return (nil, ContinuousClock.now - start)
            } catch {
                return (error.name, ContinuousClock.now - start)
            }
        }
        // A call with a short deadline answered, then one with a longer deadline: the bound the
        // first left behind is raised to the second's, which still ends it.
        _ = try await client.call(try Message.methodCall(destination: "org.example.Echo", path: "/org/example/Echo", interface: "org.example.Echo", method: "Echo", arguments: [.variant(.byte(1))]), timeout: .milliseconds(200))
        let later = await hang(.milliseconds(700))
        // Bounds far from the deadlines, which a loaded machine may overrun by seconds, but
        // well under the 25 s a call waits without one.
        #expect(later.error == "org.freedesktop.DBus.Error.NoReply" && later.after < .seconds(15), "\(later)")
        // A long deadline first, a short one behind it: the short one ends first, on time. The
        // long deadline is far out so that a host stalling for seconds cannot pass for the bug.
        async let long = hang(.seconds(12))
        try await Task.sleep(for: .milliseconds(50))
        let short = await hang(.milliseconds(300))
        // Held to the long one's deadline, it would end about 11.95 s after it started.
        #expect(short.error == "org.freedesktop.DBus.Error.NoReply" && short.after < .seconds(8), "\(short)")
        let ended = await long
        #expect(ended.error == "org.freedesktop.DBus.Error.NoReply" && ended.after >= .seconds(12) && ended.after < .seconds(25), "\(ended)")
    }

    /// With many objects exported the path is looked up by name, with few compared in place:
    /// either way a call reaches the object at its path, and a path with none is refused.
    @Test func callsReachTheirObjectAmongMany() async throws {
        for count in [2, 12] {
            let connection = try Connection.connect(address: bus.address)
            defer { connection.close() }
            for index in 0..<count { try connection.export(EchoObject(), at: "/org/example/Many/\(index)") }
            for index in [0, count - 1] {
                let echoed = try await client.call(destination: connection.uniqueName, path: "/org/example/Many/\(index)", interface: "org.example.Echo", method: "Echo", arguments: [.variant(.uint32(UInt32(index)))])
                #expect(echoed == [.variant(.uint32(UInt32(index)))])
            }
            do {
                _ = try await client.call(destination: connection.uniqueName, path: "/org/example/Many/\(count)", interface: "org.example.Echo", method: "Echo", arguments: [.variant(.byte(0))])
                Issue.record("a call to a path with no object succeeded")
            } catch {
                #expect(error.name == "org.freedesktop.DBus.Error.UnknownObject", "\(error)")
            }
        }
    }

    /// A call cancelled at any moment, even while it is being handed to the connection's
    /// thread, ends with `Cancelled` (a call the server never answers would otherwise wait for
    /// its deadline). Cancelled after a random few microseconds, 2,000 times over.
    ///
    /// The calls' deadline is ten minutes away, past the test's time limit: a cancel that was
    /// lost fails the test by that limit. A loaded machine only slows the rounds, which take
    /// a fraction of a second in all by themselves; a watchdog as long as the deadline once
    /// lost the race to a full test run starving the rounds of threads.
    @Test(.timeLimit(.minutes(5)))
    func aCallCancelledAtAnyMomentEnds() async throws {
        var ended = 0
        for round in 0..<2_000 {
            let hang = try Message.methodCall(destination: "org.example.Echo", path: "/org/example/Echo", interface: "org.example.Echo", method: "Hang")
            let call = Task { try await self.client.call(hang, timeout: .seconds(600)) }
            // Spin a few microseconds, more each round, so that the cancel lands on every
            // step of the call's start.
            let spin = ContinuousClock.now + .nanoseconds((round % 50) * 400)
            while ContinuousClock.now < spin {}
            call.cancel()
            if case .failure(let error) = await call.result, (error as? DBusError)?.name == DBusError.cancelledName { ended += 1 }
        }
        #expect(ended == 2_000, "\(2_000 - ended) cancelled calls ended otherwise than as cancelled")
    }

    @Test func closingFailsPendingCallsAndEndsSignals() async throws {
        let doomed = try Connection.connect(address: bus.address)
        let stream = try await doomed.signals(matching: MatchRule(interface: "org.example.Echo"))
        async let pending: [DBusValue] = doomed.call(destination: "org.example.Echo", path: "/org/example/Echo", interface: "org.example.Echo", method: "Hang")
        try await Task.sleep(for: .milliseconds(100))
        doomed.close()
        await doomed.waitUntilDisconnected()
        do {
            _ = try await pending
            Issue.record("a call survived close()")
        } catch let error as DBusError {
            #expect(error.name == "org.freedesktop.DBus.Error.Disconnected")
        }
        var iterator = stream.makeAsyncIterator()
        #expect(await iterator.next() == nil)
    }

    @Test func nameOwnershipIsExclusive() async throws {
        let other = try Connection.connect(address: bus.address)
        #expect(try await other.requestName("org.example.Echo") == .exists)
        #expect(try await other.nameOwner("org.example.Echo") == server.uniqueName)
        #expect(try await other.nameOwner("org.example.Nobody") == nil)
    }

    /// A client that does not wait for `Hello`'s answer (as `pbctl`) may send a descriptor in
    /// its first call. dbus-daemon reads the authentication without room for descriptors and
    /// drops any that come in the same read as `BEGIN`, then disconnects the client for a
    /// message missing its descriptor; so such a call must wait for `Hello`'s answer. The bus is
    /// stopped and started all along, so it often reads `BEGIN` late, with what followed.
    @Test func aDescriptorInTheFirstCallArrivesWhenHelloIsNotAwaited() async throws {
        let stop = Atomic<Bool>(false)
        let bus = self.bus
        let jostler = Thread {
            while !stop.load(ordering: .relaxed) {
                bus.pause()
                usleep(300)
                bus.resume()
                usleep(200)
            }
        }
        jostler.start()
        defer {
            stop.store(true, ordering: .relaxed)
            while !jostler.isFinished { usleep(1_000) }
            bus.resume()
        }
        for round in 0..<200 {
            let quick = try Connection.connect(address: bus.address, awaitingName: false)
            #expect(quick.uniqueName.isEmpty)
            if round.isMultiple(of: 2) {
                // No descriptor: the call goes right behind Hello, read with it or not.
                let back = try await quick.call(destination: "org.example.Echo", path: "/org/example/Echo", interface: "org.example.Echo", method: "Echo", arguments: [.uint32(UInt32(round))])
                #expect(back == [.uint32(UInt32(round))])
                quick.close()
                continue
            }
            var fds: [Int32] = [0, 0]
            #expect(pipe(&fds) == 0)
            let readEnd = UnixFileDescriptor(owning: fds[0])
            let writeEnd = UnixFileDescriptor(owning: fds[1])
            let back = try await quick.call(destination: "org.example.Echo", path: "/org/example/Echo", interface: "org.example.Echo", method: "Echo", arguments: [.unixFD(writeEnd), .uint32(UInt32(round))])
            #expect(back.last == .uint32(UInt32(round)))
            let received = try #require(back.first?.fileDescriptorValue)
            #expect(write(received.rawValue, "x", 1) == 1)
            var byte: UInt8 = 0
            #expect(read(readEnd.rawValue, &byte, 1) == 1)
            quick.close()
        }
    }

    /// A connection driven by its caller has no thread of its own: calls made from other
    /// threads wake the thread waiting in `turn()`, which sends them and dispatches their
    /// replies and signals; once the connection is closed `turn()` says so.
    @Test func aConnectionDrivenByItsCallerAnswersAndEnds() async throws {
        let turnsEnded = Atomic<Bool>(false)
        let driven = try await DrivingThread.connect(to: bus.address, awaitingName: false, ended: { turnsEnded.store(true, ordering: .releasing) })
        #expect(driven.uniqueName.isEmpty)
        // A descriptor first: held until Hello is answered, then sent by the driving thread.
        var fds: [Int32] = [0, 0]
        #expect(pipe(&fds) == 0)
        let readEnd = UnixFileDescriptor(owning: fds[0])
        let echoed = try await driven.call(destination: "org.example.Echo", path: "/org/example/Echo", interface: "org.example.Echo", method: "Echo", arguments: [.unixFD(UnixFileDescriptor(owning: fds[1]))])
        let writeEnd = try #require(echoed.first?.fileDescriptorValue)
        #expect(write(writeEnd.rawValue, "d", 1) == 1)
        var byte: UInt8 = 0
        #expect(read(readEnd.rawValue, &byte, 1) == 1 && byte == UInt8(ascii: "d"))
        let stream = try await driven.signals(matching: MatchRule(interface: "org.example.Echo", member: "Said"))
        for round in 0..<20 {
            let back = try await driven.call(destination: "org.example.Echo", path: "/org/example/Echo", interface: "org.example.Echo", method: "Echo", arguments: [.uint32(UInt32(round))])
            #expect(back == [.uint32(UInt32(round))])
        }
        _ = try await driven.call(destination: "org.example.Echo", path: "/org/example/Echo", interface: "org.example.Echo", method: "Emit", arguments: [.string("driven")])
        var iterator = stream.makeAsyncIterator()
        #expect(await iterator.next()?.arguments() == [.string("driven")])
        let endedEarly = turnsEnded.load(ordering: .acquiring)
        #expect(!endedEarly)
        driven.close()
        await driven.waitUntilDisconnected()
        for _ in 0..<2_000 where !turnsEnded.load(ordering: .acquiring) {
            try await Task.sleep(for: .milliseconds(5))
        }
        let ended = turnsEnded.load(ordering: .acquiring)
        #expect(ended, "turn() did not report the closed connection")
    }

    /// The same message called again while its first call is awaited: libdbus would send it
    /// under the same serial, and the second call take the first one's answer, leaving the
    /// first waiting for ever. The second is refused; the first is answered. (A signature
    /// argument keeps the message libdbus's: see the next test for one kept as its bytes.)
    @Test func aMessageAwaitedIsNotCalledAgain() async throws {
        let message = try Message.methodCall(
            destination: "org.example.Echo", path: "/org/example/Echo", interface: "org.example.Echo", method: "Echo", arguments: [.uint32(7), .signature("u")])
        #expect(message.wire == nil)
        bus.pause()
        let client = self.client
        let first = Task { try await client.call(message, timeout: .seconds(60)) }
        try #require(await eventually { message.serial != 0 }, "the first call never left")
        await #expect {
            _ = try await client.call(message, timeout: .seconds(60))
        } throws: { error in
            (error as? DBusError)?.message.contains("already awaiting its reply") == true
        }
        bus.resume()
        #expect(try await first.value.arguments() == [.uint32(7), .signature("u")])
    }

    /// A call kept as its bytes is written by the loop itself, numbered as it leaves, and never
    /// read back by libdbus: the same message called twice at once is two calls, each answered.
    @Test func aCallKeptAsItsBytesIsNumberedEachTimeItLeaves() async throws {
        let message = try Message.methodCall(
            destination: "org.example.Echo", path: "/org/example/Echo", interface: "org.example.Echo", method: "Echo",
            arguments: [.string("kept"), .dictionary(key: "s", value: "v", [(.string("n"), .variant(.uint64(5)))])])
        #expect(message.wire != nil)
        bus.pause()
        let client = self.client
        let first = Task { try await client.call(message, timeout: .seconds(60)) }
        let second = Task { try await client.call(message, timeout: .seconds(60)) }
        try await Task.sleep(for: .milliseconds(50))
        bus.resume()
        let expected: [DBusValue] = [.string("kept"), .dictionary(key: "s", value: "v", [(.string("n"), .variant(.uint64(5)))])]
        #expect(try await first.value.arguments() == expected)
        #expect(try await second.value.arguments() == expected)
        #expect(message.unreadWire != nil, "libdbus read the call back: it was not written by the loop")
    }

    /// Random values of every kind and nesting, as calls and their echoed replies, through a
    /// real dbus-daemon, which validates every message it routes and disconnects a sender of
    /// an invalid one: what the module sends as its own bytes must pass it, and come back as
    /// it was sent.
    @Test(arguments: 1...4)
    func randomCallsAndRepliesPassTheBus(seed: UInt64) async throws {
        var random = RandomValues(seed: seed)
        var kept = 0
        for _ in 0..<150 {
            let arguments = random.arguments()
            let message = try Message.methodCall(
                destination: "org.example.Echo", path: "/org/example/Echo", interface: "org.example.Echo", method: "Echo", arguments: arguments)
            if message.unreadWire != nil { kept += 1 }
            let reply = try await client.call(message, timeout: .seconds(30))
            #expect(reply.arguments() == arguments, "\(arguments.map(\.signature))")
        }
        #expect(kept > 100)
        #expect(client.isConnected && server.isConnected)
    }

    /// `close()` sends what is queued, messages held for `Hello`'s answer too: a signal carrying
    /// a descriptor, sent and closed while the bus is stopped (so `Hello` is unanswered), reaches
    /// a listener once the bus goes on.
    @Test func closingSendsWhatWaitsForHello() async throws {
        let stream = try await client.signals(matching: MatchRule(interface: "org.example.Echo", member: "Handed"))
        let quick = try Connection.connect(address: bus.address, awaitingName: false)
        bus.pause()
        var fds: [Int32] = [0, 0]
        #expect(pipe(&fds) == 0)
        let readEnd = UnixFileDescriptor(owning: fds[0])
        quick.send([try Message.signal(path: "/org/example/Echo", interface: "org.example.Echo", name: "Handed", arguments: [.unixFD(UnixFileDescriptor(owning: fds[1])), .string("held")])])
        quick.close()
        try await Task.sleep(for: .milliseconds(50))
        bus.resume()
        // Within 10 s, or the held signal was dropped.
        let first = try await withThrowingTaskGroup(of: Message?.self) { group in
            group.addTask {
                var iterator = stream.makeAsyncIterator()
                return await iterator.next()
            }
            group.addTask {
                try await Task.sleep(for: .seconds(10))
                return nil
            }
            let first = try await group.next() ?? nil
            group.cancelAll()
            return first
        }
        let signal = try #require(first, "the signal held for Hello's answer never arrived")
        let arguments = signal.arguments()
        #expect(arguments.last == .string("held"))
        let writeEnd = try #require(arguments.first?.fileDescriptorValue)
        #expect(write(writeEnd.rawValue, "h", 1) == 1)
        var byte: UInt8 = 0
        #expect(read(readEnd.rawValue, &byte, 1) == 1)
        await quick.waitUntilDisconnected()
    }
}
