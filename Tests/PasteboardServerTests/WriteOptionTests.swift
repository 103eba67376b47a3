import DBus
import Testing
import TestSupport

/// The `a{sv}` write options of `WriteItems` and `WriteItemsFd`: `if-change-count` and `append`,
/// and the checking of every option's value type. What `expires-in-ms`, `concealed`,
/// `transient` and `owner-only` do is tested in `ExpiryTests`, `ConcealedTests`,
/// `TransientTests` and `OwnerOnlyTests`.
struct WriteOptionTests {
    func writeItems(_ options: [(String, DBusValue)], name: String = "general", data: [UInt8] = [1]) -> [DBusValue] {
        [.string(name), Harness.inlineItems([[("text/plain", data)]]), Harness.options(options)]
    }

    @Test func ifChangeCountWritesOnlyOnAMatch() async throws {
        let h = try await Harness()
        try await h.write(text: "one")
        try await h.write(text: "two")
        #expect(try await h.write([[("text/plain", "three".bytes)]], options: [("if-change-count", .uint64(2))]) == 3)
        let error = await h.expectFailure("Conflict", "WriteItems", writeItems([("if-change-count", .uint64(2))]))
        #expect(error?.message.contains("3") == true, "the message names the current count: \(String(describing: error))")
        await h.expectFailure("Conflict", "WriteItems", writeItems([("if-change-count", .uint64(4))]))
        #expect(try await h.snapshot() == .init(count: 3, types: ["text/plain"], items: [[.init(type: "text/plain", data: "three".bytes)]]))
    }

    @Test func ifChangeCountZeroMeansNeverWritten() async throws {
        let h = try await Harness()
        #expect(try await h.write([[("text/plain", "first".bytes)]], to: "fresh", options: [("if-change-count", .uint64(0))]) == 1)
        await h.expectFailure("Conflict", "WriteItems", writeItems([("if-change-count", .uint64(0))], name: "fresh"))
        // Removed is not never-written: the count survives.
        try await h.remove("fresh")
        await h.expectFailure("Conflict", "WriteItems", writeItems([("if-change-count", .uint64(0))], name: "fresh"))
        #expect(try await h.write([[("text/plain", "again".bytes)]], to: "fresh", options: [("if-change-count", .uint64(2))]) == 3)
    }

    @Test func ifChangeCountAppliesToWriteItemsFd() async throws {
        let h = try await Harness()
        try await h.write(text: "x")
        #expect(try await h.writeFd([[("text/plain", try Descriptors.pipe(holding: "fd".bytes))]], options: [("if-change-count", .uint64(1))]) == 2)
        await h.expectFailure("Conflict", "WriteItemsFd", [.string("general"), Harness.descriptorItems([[("text/plain", try Descriptors.pipe(holding: "no".bytes))]]), Harness.options([("if-change-count", .uint64(1))])])
        #expect(try await h.readData("text/plain") == (2, "fd".bytes))
    }

    @Test func appendAddsItemsAfterTheCurrentOnes() async throws {
        let h = try await Harness()
        try await h.write([[("text/plain", "a".bytes)]])
        #expect(try await h.write([[("text/plain", "b".bytes)], [("image/png", [1])]], options: [("append", .boolean(true))]) == 2)
        #expect(try await h.writeFd([[("text/html", try Descriptors.pipe(holding: "<c>".bytes))]], options: [("append", .boolean(true))]) == 3)
        #expect(try await h.items().items == [
            .init(types: ["text/plain"], sizes: [1]), .init(types: ["text/plain"], sizes: [1]),
            .init(types: ["image/png"], sizes: [1]), .init(types: ["text/html"], sizes: [3]),
        ])
        #expect(try await h.readData("text/plain", item: 0).data == "a".bytes)
        #expect(try await h.readData("text/plain", item: 1).data == "b".bytes)
        #expect(try await h.readData("text/html", item: 3).data == "<c>".bytes)
        #expect(try await h.types() == (3, ["text/plain", "image/png", "text/html"]))
        // append=false replaces, as no option does.
        #expect(try await h.write([[("text/rtf", [2])]], options: [("append", .boolean(false))]) == 4)
        #expect(try await h.items().items == [.init(types: ["text/rtf"], sizes: [1])])
    }

    @Test func appendToANeverWrittenNameCreatesIt() async throws {
        let h = try await Harness()
        #expect(try await h.write([[("text/plain", "a".bytes)]], to: "new", options: [("append", .boolean(true)), ("if-change-count", .uint64(0))]) == 1)
        #expect(try await h.listPasteboards() == ["new"])
        #expect(try await h.write([[("text/plain", "b".bytes)]], to: "new", options: [("append", .boolean(true)), ("if-change-count", .uint64(1))]) == 2)
        #expect(try await h.items("new").items.count == 2)
    }

    @Test func unknownAndMistypedOptionsAreRefused() async throws {
        let h = try await Harness()
        try await h.write(text: "kept")
        let before = try await h.snapshot()
        let refused: [[(String, DBusValue)]] = [
            [("bogus", .boolean(true))],
            [("", .boolean(true))],
            [("Append", .boolean(true))],
            [("append", .string("true"))],
            [("append", .uint32(1))],
            [("if-change-count", .int64(1))],
            [("if-change-count", .uint32(1))],
            [("if-change-count", .string("1"))],
            [("append", .boolean(true)), ("append", .boolean(true))],
            [("append", .boolean(true)), ("bogus", .uint64(1))],
        ]
        for options in refused {
            await h.expectFailure("InvalidArgument", "WriteItems", writeItems(options))
            await h.expectFailure("InvalidArgument", "WriteItemsFd", [.string("general"), Harness.descriptorItems([[("text/plain", try Descriptors.pipe(holding: [1]))]]), Harness.options(options)])
        }
        #expect(try await h.snapshot() == before)
    }

    @Test func mistypedValuesOfTheOtherOptionsAreRefused() async throws {
        let h = try await Harness()
        try await h.write(text: "kept")
        let before = try await h.snapshot()
        let signals = try await h.recordSignals()
        let refused: [(key: String, options: [(String, DBusValue)])] = [
            ("concealed", [("concealed", .string("true"))]),
            ("concealed", [("concealed", .uint32(1))]),
            ("concealed", [("concealed", .byte(1))]),
            ("transient", [("transient", .string("yes"))]),
            ("transient", [("transient", .int32(1))]),
            ("owner-only", [("owner-only", .string("true"))]),
            ("owner-only", [("owner-only", .uint64(1))]),
            ("expires-in-ms", [("expires-in-ms", .int32(60_000))]),
            ("expires-in-ms", [("expires-in-ms", .int64(60_000))]),
            ("expires-in-ms", [("expires-in-ms", .uint32(60_000))]),
            ("expires-in-ms", [("expires-in-ms", .double(60))]),
            ("expires-in-ms", [("expires-in-ms", .string("60000"))]),
            ("expires-in-ms", [("expires-in-ms", .boolean(true))]),
            ("expires-in-ms", [("expires-in-ms", .uint64(0))]),
            ("concealed", [("concealed", .boolean(true)), ("concealed", .boolean(true))]),
            // One bad option refuses the whole write, the good ones with it.
            ("expires-in-ms", [("concealed", .boolean(true)), ("expires-in-ms", .int32(1))]),
            ("owner-only", [("transient", .boolean(true)), ("owner-only", .string("yes")), ("append", .boolean(true))]),
        ]
        for (key, options) in refused {
            let error = await h.expectFailure("InvalidArgument", "WriteItems", writeItems(options))
            #expect(error?.message.contains(key) == true, "the message names the option: \(String(describing: error))")
            await h.expectFailure("InvalidArgument", "WriteItemsFd", [.string("general"), Harness.descriptorItems([[("text/plain", try Descriptors.pipe(holding: [1]))]]), Harness.options(options)])
        }
        #expect(try await h.snapshot() == before)
        // Nothing was announced, and nothing of a refused option stuck: the contents are as
        // durable and as open to other processes as before.
        #expect(signals.announcements.isEmpty, "\(signals.announcements)")
        h.server.kill9()
        try await h.server.restart()
        #expect(try await h.snapshot() == before)
        let paste = try await OtherProcess.pbctl(h, "paste")
        #expect(paste.status == 0 && paste.out == "kept", "\(paste)")
    }

    @Test func falseFlagsWriteOrdinaryContents() async throws {
        let h = try await Harness()
        let signals = try await h.recordSignals()
        let off: [(String, DBusValue)] = [("concealed", .boolean(false)), ("transient", .boolean(false)), ("owner-only", .boolean(false))]
        #expect(try await h.write([[("text/plain", "open".bytes)]], options: off) == 1)
        #expect(try await h.writeFd([[("text/html", try Descriptors.pipe(holding: "<p>".bytes))]], options: off + [("append", .boolean(true))]) == 2)
        #expect(await signals.announcements(2) == [Announcement("general", 1, ["text/plain"]), Announcement("general", 2, ["text/plain", "text/html"])])
        let before = try await h.snapshot()
        h.server.kill9()
        try await h.server.restart()
        #expect(try await h.snapshot() == before)
        let paste = try await OtherProcess.pbctl(h, "paste", "-t", "text/html", "--item", "1")
        #expect(paste.status == 0 && paste.out == "<p>", "\(paste)")
    }

    @Test func optionsMustBeAStringToVariantDictionary() async throws {
        // An a{st} instead of a{sv} is a wrong signature.
        let h = try await Harness()
        await h.expectFailure("InvalidArgument", "WriteItems", [
            .string("general"), Harness.inlineItems([[("text/plain", [1])]]),
            .dictionary(key: "s", value: "t", [(.string("if-change-count"), .uint64(0))]),
        ])
        #expect(try await h.changeCount() == 0)
    }
}
