import DBus
import Foundation
import Testing
import TestSupport

/// The limits set with `--limit`: what goes over is refused with `TooLarge` or `QuotaExceeded`
/// and changes nothing.
struct LimitTests {
    static func bytes(_ count: Int, seed: Int = 1) -> [UInt8] {
        (0..<count).map { UInt8(truncatingIfNeeded: $0 &* seed &+ seed) }
    }

    @Test func maxInlineBytesBoundsWriteItems() async throws {
        let h = try await Harness(limits: ["max-inline-bytes=1024"])
        #expect(try await h.write([[("application/x-a", Self.bytes(1024))]]) == 1)
        let before = try await h.snapshot()
        let error = await h.expectFailure("TooLarge", "WriteItems", [.string("general"), Harness.inlineItems([[("application/x-a", Self.bytes(1025))]]), Harness.options([])])
        #expect(error?.message.contains("WriteItemsFd") == true, "the message says what to do: \(String(describing: error))")
        await h.expectFailure("TooLarge", "WriteItems", [.string("general"), Harness.inlineItems([[("text/plain", [1])], [("text/html", [2]), ("application/x-a", Self.bytes(4096))]]), Harness.options([("append", .boolean(true))])])
        await h.expectFailure("TooLarge", "WriteItems", [.string("fresh"), Harness.inlineItems([[("application/x-a", Self.bytes(1025))]]), Harness.options([])])
        #expect(try await h.snapshot() == before)
        #expect(try await h.changeCount("fresh") == 0)
        #expect(try await h.listPasteboards() == ["general"])
    }

    /// `max-transfers` bounds the transfers in progress over all clients, and one client
    /// process may hold a quarter of them over all its connections: a process starting
    /// transfers it never feeds (each waits for the idle timeout) leaves room for the others,
    /// however many connections it opens. Refusals come at once, and change nothing.
    @Test(.timeLimit(.minutes(5)))
    func maxTransfersIsSharedAmongClientProcesses() async throws {
        // Idle transfers time out after two minutes, not 30 s: a loaded machine has all that
        // time for the calls and pbctl starts below, and a refusal that waited for a transfer
        // would still take far longer than the bound set on it.
        let h = try await Harness(limits: ["max-transfers=8", "transfer-idle-timeout-ms=120000"])
        try await h.write(text: "kept")
        let before = try await h.snapshot()
        // Two idle transfers from this process, on two connections: its quarter of eight.
        var pipes: [(read: UnixFileDescriptor, write: UnixFileDescriptor)] = []
        var started: [Task<UInt64, any Error>] = []
        var connections: [Connection] = []
        for index in 0..<2 {
            let connection = try h.connect()
            connections.append(connection)
            let pipe = try Descriptors.pipe()
            pipes.append(pipe)
            // The task holds the read end only: the write end closes with `pipes`.
            let readEnd = pipe.read
            started.append(Task { try await h.writeFd([[("text/plain", readEnd)]], to: "idle-\(index)", on: connection, timeout: .seconds(60)) })
        }
        // Each is admitted once the server reads from its pipe: a byte written is taken.
        for pipe in pipes {
            try Descriptors.writeAll(pipe.write, [0x61])
            #expect(await eventually { Descriptors.unread(pipe.write) == 0 }, "an idle transfer was admitted")
        }
        let start = ContinuousClock.now
        // A third connection of the same process is the same client.
        let third = try h.connect()
        let refused = await h.expectFailure("QuotaExceeded", "WriteItemsFd", [.string("general"), Harness.descriptorItems([[("text/plain", try Descriptors.pipe(holding: [1]))]]), Harness.options([])], on: third)
        #expect(refused?.message.contains("this process") == true, "\(String(describing: refused))")
        // A call wrong in itself is refused for what is wrong with it, full as the quota is.
        await h.expectFailure("InvalidType", "WriteItemsFd", [.string("general"), Harness.descriptorItems([[("not a type", try Descriptors.pipe(holding: [1]))]]), Harness.options([])], on: third)
        let uncarried = try HostileInputTests.writeItemsFd(naming: 3)
        do throws(DBus.DBusError) {
            _ = try await third.call(uncarried, timeout: .seconds(10))
            Issue.record("a WriteItemsFd naming a descriptor it did not carry succeeded")
        } catch {
            #expect(error.name == Harness.errorPrefix + "InvalidArgument" && error.message.contains("did not carry"), "\(error)")
        }

        // Other processes still get through, up to max-transfers over all: six `pbctl copy`
        // whose input has not ended (over pbctl's inline cutoff, so it streams it).
        let head = Data(repeating: 0xfe, count: (1 << 20) + 1)
        var copies: [ChildProcess] = []
        for index in 0..<6 {
            let copy = try ChildProcess(try Paths.product("pbctl"), ["--address", h.bus.address, "-p", "stream-\(index)", "copy", "-t", "application/x-stream"])
            copies.append(copy)
            copy.write(head)
        }
        // pbctl sends its first mebibyte before it reads more: a second one taken means the
        // server admitted the transfer and is reading it.
        for copy in copies { copy.write(head) }
        #expect(copies.allSatisfy { $0.exitStatus == nil }, "\(copies.map { String(decoding: $0.stderr, as: UTF8.self) })")
        let late = try await runProgram(try Paths.product("pbctl"), ["--address", h.bus.address, "-p", "late", "copy", "-t", "application/x-stream"], input: head)
        #expect(late.status == 65 && late.err.contains("max-transfers"), "\(late)")
        // Well under the idle timeout a refusal that waited for a transfer would take.
        #expect(ContinuousClock.now - start < .seconds(60))
        #expect(try await h.snapshot() == before)
        #expect(try await h.changeCount("late") == 0)

        // Their writers closed, the transfers complete and free their places.
        pipes.removeAll()
        for task in started { _ = try await task.value }
        for (index, copy) in copies.enumerated() {
            copy.send(Data())
            let status = try await copy.wait(timeout: .seconds(30))
            #expect(status == 0, "\(String(decoding: copy.stderr, as: UTF8.self))")
            #expect(try await h.items("stream-\(index)").items == [.init(types: ["application/x-stream"], sizes: [Int64(head.count * 2)])])
        }
        #expect(try await h.writeFd([[("text/plain", try Descriptors.pipe(holding: "late".bytes))]], to: "late", on: third) == 1)
        withExtendedLifetime(connections) {}
    }

    /// A transfer's slot is free by the time it is answered: a client that sends its next
    /// `WriteItemsFd` on the answer to the last, holding one at a time, is never refused
    /// (here it may hold one: a quarter of two). A race: with the slot given back after the
    /// answer, it failed only when the transfer's thread lost the processor between the two,
    /// one run in three here.
    @Test(.timeLimit(.minutes(5)))
    func aClientHoldingOneTransferAtATimeIsNeverRefused() async throws {
        let h = try await Harness(limits: ["max-transfers=2"])
        let directory = FileManager.default.temporaryDirectory.path
        var refusals: [String] = []
        for round in 0..<150 {
            // Answered on the service queue (a file), on a task (a pipe), and failed on the
            // transfer thread (a directory reads as nothing).
            do {
                _ = try await h.writeFd([[("text/plain", try Descriptors.file([UInt8(round & 0x7f)]))]], to: "file")
                _ = try await h.writeFd([[("text/plain", try Descriptors.pipe(holding: [1, 2]))]], to: "pipe")
            } catch {
                refusals.append("\(round): \(error)")
            }
            let fd = open(directory, O_RDONLY | O_DIRECTORY | O_CLOEXEC)
            try #require(fd >= 0)
            let failed = await h.expectFailure("InvalidArgument", "WriteItemsFd", [.string("dir"), Harness.descriptorItems([[("text/plain", UnixFileDescriptor(owning: fd))]]), Harness.options([])])
            if failed?.name != Harness.errorPrefix + "InvalidArgument" { refusals.append("\(round): \(String(describing: failed))") }
            if refusals.count > 3 { break }
        }
        #expect(refusals.isEmpty, "\(refusals)")
        #expect(try await h.changeCount("file") == 150)
        #expect(try await h.changeCount("dir") == 0)
    }

    @Test func maxInlineBytesBoundsReadDataAndReadBest() async throws {
        let h = try await Harness(limits: ["max-inline-bytes=1024"])
        let big = Self.bytes(5000, seed: 7)
        let file = Self.bytes(200_000, seed: 3)
        #expect(try await h.writeFd([[("application/x-big", try Descriptors.pipe(holding: big)), ("text/plain", try Descriptors.pipe(holding: "small".bytes))], [("application/x-file", try Descriptors.file(file))]]) == 1)
        #expect(try await h.items().items == [.init(types: ["application/x-big", "text/plain"], sizes: [5000, 5]), .init(types: ["application/x-file"], sizes: [200_000])])
        let error = await h.expectFailure("TooLarge", "ReadData", [.string("general"), .uint32(0), .string("application/x-big"), .uint64(0)])
        #expect(error?.message.contains("ReadFd") == true, "the message says what to do: \(String(describing: error))")
        await h.expectFailure("TooLarge", "ReadBest", [.string("general"), .uint32(0), .strings(["application/x-big"]), .uint64(0)])
        await h.expectFailure("TooLarge", "ReadBest", [.string("general"), .uint32(0), .strings(["application/octet-stream"]), .uint64(0)])
        await h.expectFailure("TooLarge", "ReadData", [.string("general"), .uint32(1), .string("application/x-file"), .uint64(0)])
        await h.expectFailure("TooLarge", "ReadBest", [.string("general"), .uint32(1), .strings(["application/x-file"]), .uint64(1)])
        // The small representation of the same item is readable, and ReadFd has no limit.
        #expect(try await h.readData("text/plain") == (1, "small".bytes))
        #expect(try await h.readBest(["text/plain"]) == (1, "text/plain", "small".bytes))
        #expect(try await h.readFdBytes("application/x-big") == (1, big))
        #expect(try await h.readFdBytes("application/x-file", item: 1) == (1, file))
        #expect(try await h.changeCount() == 1)
    }

    @Test func maxItemBytesBoundsEachItem() async throws {
        let h = try await Harness(limits: ["max-item-bytes=100"])
        #expect(try await h.write([[("text/plain", Self.bytes(50)), ("text/html", Self.bytes(50))], [("image/png", Self.bytes(100))]]) == 1)
        let before = try await h.snapshot()
        await h.expectFailure("TooLarge", "WriteItems", [.string("general"), Harness.inlineItems([[("text/plain", Self.bytes(60)), ("text/html", Self.bytes(41))]]), Harness.options([])])
        await h.expectFailure("TooLarge", "WriteItems", [.string("general"), Harness.inlineItems([[("text/plain", [1])], [("image/png", Self.bytes(101))]]), Harness.options([("append", .boolean(true))])])
        await h.expectFailure("TooLarge", "WriteItemsFd", [.string("general"), Harness.descriptorItems([[("image/png", try Descriptors.pipe(holding: Self.bytes(101)))]]), Harness.options([])])
        await h.expectFailure("TooLarge", "WriteItemsFd", [.string("general"), Harness.descriptorItems([[("image/png", try Descriptors.file(Self.bytes(70))), ("text/plain", try Descriptors.file(Self.bytes(70)))]]), Harness.options([])])
        #expect(try await h.snapshot() == before)
    }

    @Test func maxItemBytesStopsAStreamThatNeverEnds() async throws {
        let h = try await Harness(limits: ["max-item-bytes=1M"])
        // A writer that would go on forever: the server stops reading at the limit.
        let (reader, feeder) = try PipeFeeder.start(count: nil) { _ in [UInt8](repeating: 0x55, count: 65536) }
        let error = await h.expectFailure("TooLarge", "WriteItemsFd", [.string("general"), Harness.descriptorItems([[("application/x-endless", reader)]]), Harness.options([])])
        #expect(error?.message.contains("max-item-bytes") == true)
        #expect(try await h.changeCount() == 0)
        #expect(feeder.written >= 1 << 20)
    }

    @Test func maxItemsBoundsTheItemsOfAPasteboard() async throws {
        let h = try await Harness(limits: ["max-items=2"])
        #expect(try await h.write([[("text/plain", [1])], [("text/plain", [2])]]) == 1)
        let before = try await h.snapshot()
        await h.expectFailure("QuotaExceeded", "WriteItems", [.string("general"), Harness.inlineItems([[("text/plain", [1])], [("text/plain", [2])], [("text/plain", [3])]]), Harness.options([])])
        await h.expectFailure("QuotaExceeded", "WriteItems", [.string("general"), Harness.inlineItems([[("text/plain", [3])]]), Harness.options([("append", .boolean(true))])])
        await h.expectFailure("QuotaExceeded", "WriteItemsFd", [.string("general"), Harness.descriptorItems([[("text/plain", try Descriptors.pipe(holding: [3]))]]), Harness.options([("append", .boolean(true))])])
        #expect(try await h.snapshot() == before)
        // Replacing with as many is fine.
        #expect(try await h.write([[("text/plain", [4])], [("text/plain", [5])]]) == 2)
    }

    @Test func maxPasteboardsBoundsTheListedNames() async throws {
        let h = try await Harness(limits: ["max-pasteboards=2"])
        try await h.write(text: "a", to: "a")
        try await h.clear("b")
        let before = try await h.snapshot("a")
        await h.expectFailure("QuotaExceeded", "WriteItems", [.string("c"), Harness.inlineItems([[("text/plain", [1])]]), Harness.options([])])
        await h.expectFailure("QuotaExceeded", "ClearContents", [.string("c")])
        await h.expectFailure("QuotaExceeded", "WriteItemsFd", [.string("c"), Harness.descriptorItems([[("text/plain", try Descriptors.pipe(holding: [1]))]]), Harness.options([])])
        #expect(try await h.changeCount("c") == 0)
        #expect(try await h.listPasteboards().sorted() == ["a", "b"])
        // Names already listed can still be written; reading a new name costs nothing.
        #expect(try await h.write(text: "a2", to: "a") == 2)
        #expect(try await h.write(text: "b2", to: "b") == 2)
        #expect(try await h.types("d") == (0, []))
        #expect(before.count == 1)
        // Removing one makes room.
        try await h.remove("b")
        #expect(try await h.write(text: "c", to: "c") == 1)
        #expect(try await h.listPasteboards().sorted() == ["a", "c"])
    }

    @Test func maxPasteboardBytesBoundsTheSumOfItems() async throws {
        let h = try await Harness(limits: ["max-pasteboard-bytes=150"])
        #expect(try await h.write([[("text/plain", Self.bytes(100))]]) == 1)
        let before = try await h.snapshot()
        await h.expectFailure("QuotaExceeded", "WriteItems", [.string("general"), Harness.inlineItems([[("text/plain", Self.bytes(100))], [("text/plain", Self.bytes(51))]]), Harness.options([])])
        await h.expectFailure("QuotaExceeded", "WriteItems", [.string("general"), Harness.inlineItems([[("text/plain", Self.bytes(51))]]), Harness.options([("append", .boolean(true))])])
        #expect(try await h.snapshot() == before)
        #expect(try await h.write([[("text/plain", Self.bytes(50))]], options: [("append", .boolean(true))]) == 2)
    }

    @Test func maxTypesPerItemBoundsAnItem() async throws {
        let h = try await Harness(limits: ["max-types-per-item=2"])
        #expect(try await h.write([[("text/plain", [1]), ("text/html", [2])]]) == 1)
        await h.expectFailure("TooLarge", "WriteItems", [.string("general"), Harness.inlineItems([[("text/plain", [1]), ("text/html", [2]), ("text/rtf", [3])]]), Harness.options([])])
        #expect(try await h.changeCount() == 1)
    }

    /// Type names count too: items of empty data under long names would otherwise hold
    /// megabytes that no byte limit sees. Summed over the pasteboard, appends included, and the
    /// refused write changes nothing.
    @Test func maxTypeBytesBoundsTheTypeNames() async throws {
        let h = try await Harness(limits: ["max-type-bytes=100"])
        let long = "application/x-" + String(repeating: "n", count: 35)  // 49 bytes, and one more
        #expect(try await h.write([[(long + "1", []), (long + "2", [])]]) == 1)  // 100 bytes
        let before = try await h.snapshot()
        let error = await h.expectFailure("QuotaExceeded", "WriteItems", [.string("general"), Harness.inlineItems([[("text/plain", [1])]]), Harness.options([("append", .boolean(true))])])
        #expect(error?.message.contains("max-type-bytes") == true, "\(String(describing: error))")
        await h.expectFailure("QuotaExceeded", "WritePromised", [.string("other"), .array(element: "as", [.strings([long + "1", long + "2", long + "3"])]), Harness.options([])])
        #expect(try await h.snapshot() == before)
        #expect(try await h.changeCount("other") == 0)
        #expect(try await h.write([[("text/plain", Array(repeating: 7, count: 1000))]]) == 2)
    }

    @Test func maxRequestTypesBoundsWhatAReadAsksFor() async throws {
        let h = try await Harness(limits: ["max-request-types=3"])
        try await h.write([[("text/html", [1])]])
        let three = ["image/png", "text/rtf", "text/plain"]
        let four = three + ["text/html"]
        #expect(try await h.availableType(three) == "text/plain")
        #expect(try await h.canRead(three))
        #expect(try await h.readBest(three).type == "text/html")
        for (method, arguments) in [
            ("AvailableType", [DBusValue.string("general"), .strings(four)]),
            ("CanRead", [.string("general"), .strings(four)]),
            ("ReadBest", [.string("general"), .uint32(0), .strings(four), .uint64(0)]),
        ] {
            let error = await h.expectFailure("InvalidArgument", method, arguments)
            #expect(error?.message.contains("max-request-types") == true, "\(String(describing: error))")
        }
        let limits = try #require(try await h.property("Limits").dictionaryEntries)
        #expect(limits.first { $0.key == .string("max-request-types") }?.value == .uint64(3))
    }

    /// A call of hundreds of thousands of elements is refused at the first one past its bound,
    /// before the rest is decoded (the message says "more than": the full check would count
    /// them all), and the first thing wrong still wins: the name, then a write's options.
    @Test func hugeArraysAreRefusedAtTheirBound() async throws {
        let h = try await Harness()
        try await h.write(text: "kept")
        let before = try await h.snapshot()
        let many = 200_000
        let types = DBusValue.strings((0..<many).map { "application/x-\($0)" })
        let asked = await h.expectFailure("InvalidArgument", "AvailableType", [.string("general"), types])
        #expect(asked?.message.contains("more than 1024 types") == true, "\(String(describing: asked))")
        let items = Harness.inlineItems((0..<many).map { _ in [("text/plain", [])] })
        let written = await h.expectFailure("QuotaExceeded", "WriteItems", [.string("general"), items, Harness.options([])])
        #expect(written?.message.contains("more than 1024 items") == true, "\(String(describing: written))")
        let wide = Harness.inlineItems([(0..<many).map { ("application/x-\($0)", []) }])
        let widened = await h.expectFailure("TooLarge", "WriteItems", [.string("general"), wide, Harness.options([])])
        #expect(widened?.message.contains("more than 64 types") == true, "\(String(describing: widened))")
        let promised = DBusValue.array(element: "as", [types])
        await h.expectFailure("TooLarge", "WritePromised", [.string("general"), promised, Harness.options([])])
        await h.expectFailure("InvalidName", "WriteItems", [.string(""), items, Harness.options([])])
        await h.expectFailure("InvalidArgument", "WriteItems", [.string("general"), items, Harness.options([("odd", .boolean(true))])])
        #expect(try await h.snapshot() == before)
        #expect(try await h.changeCount() == 1)
    }

    @Test func invalidLimitSettingsStopTheServerAtStart() async throws {
        let bus = try await TestBus()
        let state = try Paths.temporaryDirectory()
        defer { try? FileManager.default.removeItem(atPath: state) }
        for setting in ["bogus=1", "max-items", "max-items=lots", "max-items=-1"] {
            let result = try await runProgram(try Paths.product("pasteboardd"), ["--address", bus.address, "--state-dir", state, "--limit", setting], timeout: .seconds(10))
            #expect(result.status != 0, "\(setting): \(result)")
            #expect(!result.err.isEmpty, "\(setting): nothing on stderr")
        }
        let unknown = try await runProgram(try Paths.product("pasteboardd"), ["--address", bus.address, "--state-dir", state, "--limit", "bogus=1"], timeout: .seconds(10))
        #expect(unknown.err.contains("max-item-bytes"), "the message lists the limits: \(unknown.err)")
    }
}
