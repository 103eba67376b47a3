import DBus
import PasteboardModel
@testable import PasteboardServer
import Testing

/// `WriteItems` and `ReadData` are read straight from the message on the bus thread
/// (``InlineWrite``, ``ReadRequest``) and from decoded values on the service queue: both ways
/// must give the same values, or the same error, for any arguments a client may send.
struct HotCallTests {
    static func items(_ items: [[(String, [UInt8])]]) -> DBusValue {
        .array(element: "a{say}", items.map { item in .dictionary(key: "s", value: "ay", item.map { (.string($0.0), .bytes($0.1)) }) })
    }

    static func options(_ entries: [(String, DBusValue)]) -> DBusValue {
        .dictionary(key: "s", value: "v", entries.map { (.string($0.0), .variant($0.1)) })
    }

    /// Valid writes, and writes wrong in one or several ways at once.
    static let writes: [(String, [[(String, [UInt8])]], [(String, DBusValue)])] = [
        ("general", [[("text/plain", Array("hi".utf8)), ("text/html", [])]], []),
        ("Notes – drafts", [[("text/plain", [1])], [("image/png", [2, 3]), ("public.png", [4])]], [("expires-in-ms", .uint64(5)), ("concealed", .boolean(true))]),
        ("general", [], [("append", .boolean(false)), ("if-change-count", .uint64(0)), ("transient", .boolean(true)), ("owner-only", .boolean(false))]),
        ("general", [[]], []),
        ("", [[("", [1])]], [("nonsense", .boolean(true))]),
        ("a\tb", [[("text/plain", [1])]], []),
        (String(repeating: "n", count: 256), [[("text/plain", [1])]], []),
        ("general", [[("not a type", [1])]], [("nonsense", .boolean(true))]),
        ("general", [[("text/plain", [1])], [("not a type", [1])]], [("append", .string("yes"))]),
        ("general", [[("text/plain", [1])]], [("append", .variant(.boolean(true)))]),
        ("general", [[("text/plain", [1])]], [("append", .boolean(true)), ("append", .boolean(false))]),
        ("general", [[("text/plain", [1])]], [("expires-in-ms", .uint64(0))]),
        ("general", [[("text/plain", [1])]], [("if-change-count", .int64(3))]),
        ("general", [[("text/plain", [1]), ("text/plain", [2])]], []),
    ]

    @Test(arguments: writes.indices)
    func aWriteReadStraightIsTheWriteDecoded(index: Int) throws {
        let (name, items, options) = Self.writes[index]
        let message = try Message.methodCall(
            destination: nil, path: "/org/pasteboardd/Pasteboard1", interface: "org.pasteboardd.Pasteboard1", method: "WriteItems",
            arguments: [.string(name), Self.items(items), Self.options(options)])
        let straight = Result { () throws(PasteboardError) in try InlineWrite.read(message) }
        let decoded = Result { () throws(PasteboardError) in try InlineWrite(message.arguments()) }
        switch (straight, decoded) {
        case (.success(let read?), .success(let expected)):
            #expect(read == expected)
        case (.failure(let error), .failure(let expected)):
            #expect(error == expected)
        default:
            Issue.record("read straight: \(straight); decoded: \(decoded)")
        }
    }

    @Test func aWriteOverTheLimitsIsNotCopied() throws {
        func message(_ sizes: [Int]) throws -> Message {
            try Message.methodCall(
                destination: nil, path: "/org/pasteboardd/Pasteboard1", interface: "org.pasteboardd.Pasteboard1", method: "WriteItems",
                arguments: [.string("general"), Self.items(sizes.map { [("text/plain", [UInt8](repeating: 7, count: $0))] }), Self.options([])])
        }
        #expect(try InlineWrite.read(message([10, 5]), largest: 10, total: 15)?.items.map { $0.map(\.bytes.count) } == [[10], [5]])
        #expect(try InlineWrite.read(message([11]), largest: 10, total: 15) == nil)
        #expect(try InlineWrite.read(message([10, 6]), largest: 10, total: 15) == nil)
        // Still checked: a bad option is an error, not a write too large for the bus thread.
        let badOption = try Message.methodCall(
            destination: nil, path: "/org/pasteboardd/Pasteboard1", interface: "org.pasteboardd.Pasteboard1", method: "WriteItems",
            arguments: [.string("general"), Self.items([[("text/plain", [UInt8](repeating: 7, count: 20))]]), Self.options([("odd", .boolean(true))])])
        #expect(throws: PasteboardError.self) { try InlineWrite.read(badOption, largest: 10) }
    }

    @Test(arguments: [
        ("general", 0, "text/plain", 0), ("", 0, "text/plain", 0), ("general", 9, "", 3), ("a\u{7F}", 1, "bad type", 1),
    ] as [(String, UInt32, String, UInt64)])
    func aReadReadStraightIsTheReadDecoded(name: String, item: UInt32, type: String, expect: UInt64) throws {
        let message = try Message.methodCall(
            destination: nil, path: "/org/pasteboardd/Pasteboard1", interface: "org.pasteboardd.Pasteboard1", method: "ReadData",
            arguments: [.string(name), .uint32(item), .string(type), .uint64(expect)])
        let straight = Result { () throws(PasteboardError) in try ReadRequest(message) }
        let decoded = Result { () throws(PasteboardError) in try ReadRequest(message.arguments()) }
        switch (straight, decoded) {
        case (.success(let read), .success(let expected)):
            #expect(read.name == expected.name && read.item == expected.item && read.type == expected.type && read.expect == expected.expect)
        case (.failure(let error), .failure(let expected)):
            #expect(error == expected)
        default:
            Issue.record("read straight: \(straight); decoded: \(decoded)")
        }
    }
}

extension InlineWrite: Equatable {
    public static func == (lhs: InlineWrite, rhs: InlineWrite) -> Bool {
        lhs.name == rhs.name && lhs.options == rhs.options
            && lhs.items.map { $0.map(\.type) } == rhs.items.map { $0.map(\.type) }
            && lhs.items.map { $0.map(\.bytes) } == rhs.items.map { $0.map(\.bytes) }
    }
}
