import DBus
import Foundation
import Synchronization
import Testing
import TestSupport

/// A writer's `org.pasteboardd.Provider1` object: answers `Provide` from a table, counting calls,
/// at once, after `delay`, or never (to test the deadline).
final class TestProvider: DBusObject {
    let introspectionXML = "<node/>"
    let data: [String: [UInt8]]
    let answers: Bool
    let delay: Double
    let calls = Mutex<[[DBusValue]]>([])
    /// The serial of each call, as the server numbered it.
    let serials = Mutex<[UInt32]>([])

    init(_ data: [String: [UInt8]], answers: Bool = true, delaySeconds: Double = 0) {
        self.data = data
        self.answers = answers
        delay = delaySeconds
    }

    func handle(_ call: MethodCall) {
        guard call.member == "Provide", call.signature == "stus" else { return call.fail(.unknownMethod("no \(call.member)")) }
        calls.withLock { $0.append(call.arguments) }
        serials.withLock { $0.append(call.message.serial) }
        guard answers else { return }
        guard let bytes = data[call.arguments[3].stringValue ?? ""] else { return call.fail(.failed("no such type")) }
        guard delay > 0 else { return call.reply([.bytes(bytes)]) }
        DispatchQueue.global().asyncAfter(deadline: .now() + delay) { call.reply([.bytes(bytes)]) }
    }

    func properties(of interface: String) async throws(DBusError) -> [(name: String, value: DBusValue)] { [] }
}

/// `WritePromised` and the `Provide` callback (contract §5).
struct PromiseTests {
    func promise(_ h: Harness, _ itemTypes: [[String]], by writer: Connection, to name: String = "general") async throws -> UInt64 {
        let reply = try await h.call("WritePromised", [.string(name), .array(element: "as", itemTypes.map { .strings($0) }), Harness.options([])], on: writer)
        return try #require(reply.first?.uint64Value)
    }

    @Test func dataIsAskedOnceOnFirstReadAndKept() async throws {
        let h = try await Harness()
        let writer = try h.connect()
        let provider = TestProvider(["text/plain;charset=utf-8": Array("promised".utf8), "text/html": Array("<b>p</b>".utf8)])
        try writer.export(provider, at: "/org/pasteboardd/Provider1")
        let signals = try await h.recordSignals()
        #expect(try await promise(h, [["text/plain;charset=utf-8", "text/html"]], by: writer) == 1)
        #expect(await signals.wait(for: 1).first?.changed?.types == ["text/plain;charset=utf-8", "text/html"])

        // Listed with size -1 until provided.
        let before = try await h.items()
        #expect(before.items.first?.sizes == [-1, -1])
        #expect(try await h.canRead(["text/plain"]))
        #expect(provider.calls.withLock { $0.isEmpty })

        #expect(try await h.readData("text/plain;charset=utf-8") == (1, Array("promised".utf8)))
        #expect(try await h.readBest(["text/plain"]).data == Array("promised".utf8))
        #expect(try await h.readFdBytes("text/plain;charset=utf-8") == (1, Array("promised".utf8)))
        let calls = provider.calls.withLock { $0 }
        #expect(calls.count == 1)
        #expect(calls.first == [.string("general"), .uint64(1), .uint32(0), .string("text/plain;charset=utf-8")])
        #expect(try await h.items().items.first?.sizes == [8, -1])
    }

    /// Provided data counts toward `max-item-bytes` (the sum of an item's types) and
    /// `max-pasteboard-bytes` like written data: what would go over is refused, not kept, and
    /// the type stays listed.
    @Test func providedDataIsBoundByTheLimitsOfWrittenData() async throws {
        let h = try await Harness(limits: ["max-item-bytes=100", "max-pasteboard-bytes=150"])
        let writer = try h.connect()
        let sixty = [UInt8](repeating: 6, count: 60)
        let provider = TestProvider(["text/plain": sixty, "text/html": sixty, "application/x-a": sixty, "application/x-big": [UInt8](repeating: 1, count: 101)])
        try writer.export(provider, at: "/org/pasteboardd/Provider1")

        // Two types of one item: 60 + 60 is over 100.
        #expect(try await promise(h, [["text/plain", "text/html"]], by: writer) == 1)
        #expect(try await h.readData("text/plain") == (1, sixty))
        let item = await h.expectFailure("ProviderFailed", "ReadData", [.string("general"), .uint32(0), .string("text/html"), .uint64(0)])
        #expect(item?.message.contains("max-item-bytes") == true, "\(String(describing: item))")
        #expect(try await h.items().items.first?.sizes == [60, -1])
        #expect(try await h.types().types == ["text/plain", "text/html"])

        // One type over the limit alone.
        #expect(try await promise(h, [["application/x-big"]], by: writer) == 2)
        await h.expectFailure("ProviderFailed", "ReadData", [.string("general"), .uint32(0), .string("application/x-big"), .uint64(0)])

        // Three items of 60: the third would make the pasteboard 180, over 150.
        #expect(try await promise(h, [["application/x-a"], ["application/x-a"], ["application/x-a"]], by: writer) == 3)
        #expect(try await h.readData("application/x-a", item: 0) == (3, sixty))
        #expect(try await h.readData("application/x-a", item: 1) == (3, sixty))
        let board = await h.expectFailure("ProviderFailed", "ReadData", [.string("general"), .uint32(2), .string("application/x-a"), .uint64(0)])
        #expect(board?.message.contains("max-pasteboard-bytes") == true, "\(String(describing: board))")
        #expect(try await h.items().items.map(\.sizes) == [[60], [60], [-1]])
    }

    /// Two types of one item provided at once are counted together: one of them passes, the
    /// other is refused, though neither was kept when the other was checked.
    @Test func dataProvidedAtOnceIsCountedTogether() async throws {
        let h = try await Harness(limits: ["max-item-bytes=100"])
        let writer = try h.connect()
        let sixty = [UInt8](repeating: 6, count: 60)
        let provider = TestProvider(["text/plain": sixty, "text/html": sixty], delaySeconds: 0.3)
        try writer.export(provider, at: "/org/pasteboardd/Provider1")
        #expect(try await promise(h, [["text/plain", "text/html"]], by: writer) == 1)

        func read(_ type: String) async -> DBusError? {
            do {
                _ = try await h.call("ReadData", [.string("general"), .uint32(0), .string(type), .uint64(0)])
                return nil
            } catch { return error }
        }
        async let plain = read("text/plain")
        async let html = read("text/html")
        let refusals = await [plain, html].compactMap { $0 }
        #expect(refusals.count == 1, "\(refusals)")
        #expect(refusals.first?.name == Harness.errorPrefix + "ProviderFailed")
        #expect(refusals.first?.message.contains("max-item-bytes") == true)
        #expect(provider.calls.withLock { $0.count } == 2)
        #expect(try await h.items().items.first?.sizes.sorted() == [-1, 60])
    }

    @Test func aWriterThatLeftOrNeverAnswersGivesProviderFailed() async throws {
        let h = try await Harness(limits: ["provider-timeout-ms=3000"])
        let silent = try h.connect()
        let provider = TestProvider([:], answers: false)
        try silent.export(provider, at: "/org/pasteboardd/Provider1")
        _ = try await promise(h, [["text/plain"]], by: silent, to: "silent")
        let started = ContinuousClock.now
        let error = await h.expectFailure("ProviderFailed", "ReadData", [.string("silent"), .uint32(0), .string("text/plain"), .uint64(0)])
        #expect(!provider.calls.withLock { $0.isEmpty }, "the server never asked the provider")
        #expect(error?.message.contains("provider-timeout-ms") == true, "\(String(describing: error))")
        // A 3 s timeout, bounded with room for a host that stalls for seconds (seen in CI): a
        // read that never timed out would wait for the call's own 20 s.
        #expect(ContinuousClock.now - started < .seconds(15))
        // The type stays listed.
        #expect(try await h.types("silent") == (1, ["text/plain"]))

        let gone = try h.connect()
        _ = try await promise(h, [["text/plain"]], by: gone, to: "gone")
        gone.close()
        await gone.waitUntilDisconnected()
        let left = await h.expectFailure("ProviderFailed", "ReadData", [.string("gone"), .uint32(0), .string("text/plain"), .uint64(0)])
        #expect(left?.message.contains("left the bus") == true, "\(String(describing: left))")
    }

    /// While a read waits for a provider that does not answer, the server answers everyone
    /// else; and a writer that leaves while it is being asked ends the wait at once, as such.
    /// The timeout is a minute away, so that only the leaving can end the read: a loaded host
    /// that stalls for seconds cannot make the checks pass or fail by the clock.
    @Test func othersAreAnsweredWhileAProviderIsAsked() async throws {
        let h = try await Harness(limits: ["provider-timeout-ms=60000"])
        let leaving = try h.connect()
        let asked = TestProvider([:], answers: false)
        try leaving.export(asked, at: "/org/pasteboardd/Provider1")
        _ = try await promise(h, [["text/plain"]], by: leaving, to: "leaving")
        let finished = Flag()
        async let reading: DBusError? = {
            defer { finished.set() }
            return await h.expectFailure("ProviderFailed", "ReadData", [.string("leaving"), .uint32(0), .string("text/plain"), .uint64(0)])
        }()
        #expect(await eventually(timeout: .seconds(20)) { !asked.calls.withLock { $0.isEmpty } }, "the server never asked the provider")
        // Once the server is inside Provide, a server blocked by the provider would answer
        // nothing until the read had ended, and only the writer leaving can end it.
        #expect(try await h.changeCount("leaving") == 1)
        #expect(try await h.types("leaving") == (1, ["text/plain"]))
        #expect(!finished.isSet, "the read ended before the writer left")
        leaving.close()
        let midway = await reading
        #expect(midway?.message.contains("left the bus without answering") == true, "\(String(describing: midway))")
        #expect(midway?.message.contains("provider-timeout-ms") == false, "\(String(describing: midway))")
    }

    /// Promised contents are contents: they survive `kill -9` and enter the history. A promise
    /// not yet provided is asked of its writer after the restart (still on the bus); once the
    /// writer has left, reads fail with `ProviderFailed` while the types stay listed.
    @Test func unprovidedPromisesSurviveACrashAndEnterTheHistory() async throws {
        let h = try await Harness()
        let writer = try h.connect()
        let provider = TestProvider(["text/plain": Array("p".utf8)])
        try writer.export(provider, at: "/org/pasteboardd/Provider1")
        try await h.write(text: "plain")
        #expect(try await promise(h, [["text/plain"]], by: writer) == 2)
        let history = try await h.call("History", [.string("general"), .uint32(0)])
        #expect(history.first?.arrayValue?.compactMap { $0.structureFields?.first?.uint64Value } == [2, 1])

        h.server.kill9()
        try await h.server.restart()
        #expect(try await h.types() == (2, ["text/plain"]))
        #expect(try await h.items().items.first?.sizes == [-1])
        #expect(provider.calls.withLock { $0.isEmpty })

        // Restored after a later write, and still not provided.
        try await h.write(text: "later")
        #expect(try await h.call("Restore", [.string("general"), .uint64(2)]).first?.uint64Value == 4)
        h.server.kill9()
        try await h.server.restart()
        writer.close()
        await writer.waitUntilDisconnected()
        #expect(try await h.types() == (4, ["text/plain"]))
        let failed = await h.expectFailure("ProviderFailed", "ReadData", [.string("general"), .uint32(0), .string("text/plain"), .uint64(0)])
        #expect(failed?.message.contains("left the bus") == true, "\(String(describing: failed))")
        #expect(provider.calls.withLock { $0.isEmpty })
    }

    /// A new bus (a new session) hands out the same unique names again: a promise stored on an
    /// earlier one is never asked of whoever holds its writer's name now.
    @Test func aPromiseFromAnEarlierBusIsNotAskedOfANewcomer() async throws {
        let h = try await Harness()
        let writer = try h.connect()
        try writer.export(TestProvider(["text/plain": Array("p".utf8)]), at: "/org/pasteboardd/Provider1")
        #expect(try await promise(h, [["text/plain"]], by: writer) == 1)
        #expect(await h.server.terminate() == 0)

        let later = try await TestBus()
        let server = try await TestServer(bus: later, stateDirectory: h.server.stateDirectory, store: h.server.store)
        defer { server.send(SIGTERM) }  // asked to stop; its deinit kills what is left
        let reader = try Connection.connect(address: later.address)
        defer { reader.close() }
        // Every name the new bus gives out answers Provide, the old writer's among them.
        var impostors: [Connection] = []
        defer { impostors.forEach { $0.close() } }
        let impostor = TestProvider(["text/plain": Array("forged".utf8)])
        for _ in 0..<8 {
            let connection = try Connection.connect(address: later.address)
            try connection.export(impostor, at: "/org/pasteboardd/Provider1")
            impostors.append(connection)
        }
        let types = try await reader.call(destination: Harness.busName, path: Harness.path, interface: Harness.interface, method: "Types", arguments: [.string("general")])
        #expect(types.last?.stringArrayValue == ["text/plain"])
        do {
            _ = try await reader.call(destination: Harness.busName, path: Harness.path, interface: Harness.interface, method: "ReadData", arguments: [.string("general"), .uint32(0), .string("text/plain"), .uint64(0)])
            Issue.record("a promise from an earlier bus was read")
        } catch {
            #expect(error.name == Harness.errorPrefix + "ProviderFailed", "\(error)")
            #expect(error.message.contains("earlier session"), "\(error)")
        }
        #expect(impostor.calls.withLock { $0.isEmpty })
    }

    @Test func transientPromisesStayOffTheDisk() async throws {
        let h = try await Harness()
        let writer = try h.connect()
        try writer.export(TestProvider(["text/plain": Array("p".utf8)]), at: "/org/pasteboardd/Provider1")
        let reply = try await h.call("WritePromised", [.string("general"), .array(element: "as", [.strings(["text/plain"])]), Harness.options([("transient", .boolean(true))])], on: writer)
        #expect(reply.first?.uint64Value == 1)
        #expect(try await h.call("History", [.string("general"), .uint32(0)]).first?.arrayValue?.isEmpty == true)
        h.server.kill9()
        try await h.server.restart()
        #expect(try await h.types() == (h.server.sharesCounts ? 1 : 2, []))
    }

    @Test func malformedPromisesAreRefused() async throws {
        let h = try await Harness()
        try await h.write(text: "kept")
        let before = try await h.snapshot()
        await h.expectFailure("InvalidArgument", "WritePromised", [.string("general"), .array(element: "as", [.strings([])]), Harness.options([])])
        await h.expectFailure("InvalidType", "WritePromised", [.string("general"), .array(element: "as", [.strings(["bad type"])]), Harness.options([])])
        await h.expectFailure("InvalidArgument", "WritePromised", [.string("general"), .array(element: "as", [.strings(["a/b", "A/B"])]), Harness.options([])])
        await h.expectFailure("Conflict", "WritePromised", [.string("general"), .array(element: "as", [.strings(["a/b"])]), Harness.options([("if-change-count", .uint64(9))])])
        #expect(try await h.snapshot() == before)
    }
}
