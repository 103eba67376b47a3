import DBus
import Testing
import TestSupport

/// The `a{sv}` write options of `WriteItems` and `WriteItemsFd`: `if-change-count` and `append`
/// now; the contract's other keys are refused until they are implemented.
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

    @Test func notYetSupportedOptionsAreRefused() async throws {
        let h = try await Harness()
        try await h.write(text: "kept")
        let before = try await h.snapshot()
        let options: [(String, DBusValue)] = [
            ("expires-in-ms", .uint64(60_000)), ("concealed", .boolean(true)), ("transient", .boolean(true)), ("owner-only", .boolean(true)),
            ("concealed", .boolean(false)), ("expires-in-ms", .uint64(0)),
        ]
        for option in options {
            let error = await h.expectFailure("InvalidArgument", "WriteItems", writeItems([option]))
            #expect(error?.message.contains(option.0) == true, "the message names the option: \(String(describing: error))")
            await h.expectFailure("InvalidArgument", "WriteItemsFd", [.string("general"), Harness.descriptorItems([[("text/plain", try Descriptors.pipe(holding: [1]))]]), Harness.options([option])])
        }
        #expect(try await h.snapshot() == before)
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
