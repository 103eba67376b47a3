import DBus
import Testing
import TestSupport

/// Which received signals a subscription gets: the rule's fields and `arg0`, checked by the
/// connection as well as by the bus.
struct MatchRuleTests {
    @Test(.timeLimit(.minutes(5)))
    func onlySignalsFittingEveryFieldOfTheRuleArrive() async throws {
        let bus = try await TestBus()
        let sender = try Connection.connect(address: bus.address)
        let listener = try Connection.connect(address: bus.address)
        defer { sender.close(); listener.close() }
        let rule = MatchRule(path: "/org/example/A", interface: "org.example.Match", member: "Fired", arg0: "wanted")
        let signals = try await listener.signals(matching: rule)
        // A broader subscription on the same connection: the bus now delivers every signal of
        // the sender, and the connection alone must tell which fit the narrow rule.
        let everything = try await listener.signals(matching: MatchRule(sender: sender.uniqueName))
        let sent: [(path: String, interface: String, member: String, arguments: [DBusValue])] = [
            ("/org/example/A", "org.example.Match", "Fired", [.string("unwanted"), .uint64(1)]),
            ("/org/example/A", "org.example.Match", "Fired", [.string("wanted!"), .uint64(2)]),
            ("/org/example/A", "org.example.Match", "Fired", [.objectPath("/wanted"), .uint64(3)]),
            ("/org/example/A", "org.example.Match", "Fired", []),
            ("/org/example/B", "org.example.Match", "Fired", [.string("wanted"), .uint64(4)]),
            ("/org/example/A", "org.example.Other", "Fired", [.string("wanted"), .uint64(5)]),
            ("/org/example/A", "org.example.Match", "Other", [.string("wanted"), .uint64(6)]),
            ("/org/example/A", "org.example.Match", "Fired", [.string("wanted"), .uint64(7), .strings(["x"])]),
            ("/org/example/A", "org.example.Match", "Fired", [.string("wanted")]),
        ]
        for signal in sent {
            try sender.emit(path: signal.path, interface: signal.interface, name: signal.member, arguments: signal.arguments)
        }
        var received: [[DBusValue]] = []
        for await signal in signals {
            received.append(signal.arguments())
            if received.count == 2 { break }
        }
        #expect(received == [[.string("wanted"), .uint64(7), .strings(["x"])], [.string("wanted")]])
        var all = 0
        for await _ in everything {
            all += 1
            if all == sent.count { break }
        }
        #expect(all == sent.count)
    }

    /// A quote is escaped wherever it is, also as the first scalar of a character with a
    /// combining mark (the bus reads the quote's byte as one): the rule is accepted and matches
    /// the name exactly.
    @Test(.timeLimit(.minutes(5)), arguments: ["it's", "a'\u{301}b", "''", "'"])
    func quotesInAnArgumentAreEscaped(name: String) async throws {
        #expect(MatchRule(arg0: name).string == "type='signal',arg0='" + name.unicodeScalars.map { $0 == "'" ? "'\\''" : String($0) }.joined() + "'")
        let bus = try await TestBus()
        let sender = try Connection.connect(address: bus.address)
        let listener = try Connection.connect(address: bus.address)
        defer { sender.close(); listener.close() }
        let signals = try await listener.signals(matching: MatchRule(interface: "org.example.Match", member: "Fired", arg0: name))
        try sender.emit(path: "/org/example/A", interface: "org.example.Match", name: "Fired", arguments: [.string(name + "x")])
        try sender.emit(path: "/org/example/A", interface: "org.example.Match", name: "Fired", arguments: [.string(name)])
        var received: [DBusValue] = []
        for await signal in signals {
            received = signal.arguments()
            break
        }
        #expect(received == [.string(name)])
    }
}
