import DBus
import Testing
import TestSupport

/// ``CountedMessage``: copies that differ from their template only in the number, wherever
/// the leading string puts it.
struct CountedMessageTests {
    static func changed(_ name: String, _ count: UInt64, _ types: [String]) throws -> Message {
        try Message.signal(path: "/org/example/Counted", interface: "org.example.Counted", name: "Changed",
                           arguments: [.string(name), .uint64(count), .strings(types)])
    }

    @Test(arguments: 0...17)
    func theNumberIsReplacedWhateverTheNameLength(length: Int) throws {
        let name = String(repeating: "n", count: length)
        let counted = try #require(CountedMessage(try Self.changed(name, 7, ["text/plain", "image/png"])))
        for count: UInt64 in [0, 1, 8, 0x0102_0304_0506_0708, .max] {
            let copy = try #require(counted.copy(count: count))
            #expect(copy.arguments() == [.string(name), .uint64(count), .strings(["text/plain", "image/png"])])
            #expect(copy.signature == "stas")
            #expect(copy.member == "Changed")
        }
    }

    @Test func copiesAreIndependentOfEachOtherAndOfTheTemplate() throws {
        let template = try Self.changed("general", 3, [])
        let counted = try #require(CountedMessage(template))
        let first = try #require(counted.copy(count: 10))
        let second = try #require(counted.copy(count: 20))
        #expect(first.arguments()[1] == .uint64(10))
        #expect(second.arguments()[1] == .uint64(20))
        #expect(template.arguments()[1] == .uint64(3))
    }

    @Test func onlyAStringFollowedByAnUnsigned64BitNumberQualifies() throws {
        let signal = { (arguments: [DBusValue]) in
            try Message.signal(path: "/org/example/Counted", interface: "org.example.Counted", name: "Other", arguments: arguments)
        }
        #expect(CountedMessage(try signal([])) == nil)
        #expect(CountedMessage(try signal([.string("a")])) == nil)
        #expect(CountedMessage(try signal([.string("a"), .int64(1)])) == nil)
        #expect(CountedMessage(try signal([.uint64(1), .string("a")])) == nil)
        #expect(CountedMessage(try signal([.objectPath("/a"), .uint64(1)])) == nil)
        #expect(CountedMessage(try signal([.string("a"), .uint64(1)])) != nil)
        // A number that reads the same in both byte orders cannot tell which order to write.
        #expect(CountedMessage(try signal([.string("a"), .uint64(0)])) == nil)
    }

    @Test(.timeLimit(.minutes(5)))
    func aCopyTravelsTheBusWithItsNumber() async throws {
        let bus = try await TestBus()
        let sender = try Connection.connect(address: bus.address)
        let listener = try Connection.connect(address: bus.address)
        defer { sender.close(); listener.close() }
        let signals = try await listener.signals(matching: MatchRule(interface: "org.example.Counted", member: "Changed"))
        let counted = try #require(CountedMessage(try Self.changed("travelling", 1, ["a/b"])))
        for count: UInt64 in 2...4 {
            sender.send([try #require(counted.copy(count: count))])
        }
        var received: [[DBusValue]] = []
        for await signal in signals {
            received.append(signal.arguments())
            if received.count == 3 { break }
        }
        #expect(received == (2...4).map { [.string("travelling"), .uint64($0), .strings(["a/b"])] })
    }
}
