import Foundation
import Testing
import TestSupport

@testable import Pasteboard

/// `Pasteboard.WriteOptions` (secrets and expiry) and `history(limit:)` / `restore(changeCount:)`,
/// against a real server, with the built `pbctl` as another process looking on.
@Suite("Pasteboard write options and history")
struct WriteOptionsAndHistoryTests {
    @Test("a concealed write is readable, announced without types, and never in the history")
    func concealed() async throws {
        let world = try await World()
        let pasteboard = world.pasteboard()
        let recorder = ChangeRecorder(pasteboard.changes)
        let start = try await recorder.waitUntilSubscribed(by: pasteboard)

        #expect(try await pasteboard.setString("hunter2", options: WriteOptions(isConcealed: true)))
        let change = await recorder.first { $0.changeCount > start && !$0.mayHaveMissedChanges }
        #expect(change?.types == [], "a concealed change is announced without its types")
        #expect(try await pasteboard.string() == "hunter2")
        #expect(try await world.pbctl("paste").out == "hunter2")
        // The server's own word: the item is marked concealed.
        #expect(try await world.pbctl("info", "--json").out.contains("\"concealed\""))

        // Only the plain contents written before (the recorder's markers), the last first.
        let history = try await pasteboard.history()
        #expect(history.first?.changeCount == start)
        #expect(history.allSatisfy { $0.changeCount <= start && $0.types == [.utf8PlainText] })
    }

    @Test("after clearContents, a concealed addition makes the whole contents concealed")
    func concealedAddition() async throws {
        let world = try await World()
        let pasteboard = world.pasteboard()
        try await pasteboard.clearContents()
        #expect(try await pasteboard.setString("user@example.com"))
        #expect(try await pasteboard.history().count == 1)
        #expect(try await pasteboard.setData(Data("pw".utf8), forType: .plainText, options: WriteOptions(isConcealed: true)))
        #expect(try await pasteboard.types == [.utf8PlainText, .plainText], "one item, two types")
        #expect(try await pasteboard.history().map(\.changeCount) == [2], "the current contents are concealed now")
    }

    @Test("after clearContents, a plain addition after a concealed one keeps the contents concealed and their deadline")
    func concealedThenPlain() async throws {
        let world = try await World()
        let pasteboard = world.pasteboard()
        try await pasteboard.setString("earlier")
        try await pasteboard.clearContents()
        let deadline = Date(timeIntervalSinceNow: 6)
        #expect(try await pasteboard.setString("pw", options: .concealed(for: 6)))
        // Rewrites the first item (one item, two types): the secret is in it. Each step holds
        // while the deadline has not come: an answer received before it was given before it
        // (a busy machine may take the test past it, and then the contents are rightly gone).
        let html = try await pasteboard.setData(Data("<i>pw</i>".utf8), forType: .html)
        #expect(html || Date() >= deadline)
        let types = try await pasteboard.types
        #expect(types == [.utf8PlainText, .html] || Date() >= deadline, "\(String(describing: types))")
        let history = try await pasteboard.history().map(\.changeCount)
        #expect(history == [1], "still concealed: only the plain copy before")
        let info = try await world.pbctl("info", "--json").out
        #expect(info.contains("\"concealed\"") || Date() >= deadline, "\(info)")
        // A later deadline does not push back the earlier one.
        let more = try await pasteboard.writeObjects(["more"], options: WriteOptions(expirationDate: .distantFuture))
        #expect(more || Date() >= deadline)
        #expect(try await eventually(timeout: .seconds(40)) { try await pasteboard.types == nil }, "cleared at the first addition's deadline")
    }

    @Test("a transient write is readable and announced with its types, but not in the history")
    func transient() async throws {
        let world = try await World()
        let pasteboard = world.pasteboard()
        #expect(try await pasteboard.writeObjects(["passing through"], options: WriteOptions(isTransient: true)))
        #expect(try await pasteboard.string() == "passing through")
        #expect(try await pasteboard.types == [.utf8PlainText])
        #expect(try await pasteboard.history().isEmpty)
    }

    @Test("an expiration date clears the contents when it comes, as one change")
    func expiration() async throws {
        let world = try await World()
        let pasteboard = world.pasteboard()
        let written = try await pasteboard.changeCount
        let deadline = Date(timeIntervalSinceNow: 4)
        #expect(try await pasteboard.setString("short-lived", options: WriteOptions(expirationDate: deadline)))
        // Each holds while the deadline has not come (an answer received before it was given
        // before it; a busy machine may take the test past it).
        let read = try await pasteboard.string()
        #expect(read == "short-lived" || Date() >= deadline, "\(String(describing: read))")
        let history = try await pasteboard.history().map(\.changeCount)
        #expect(history == [written + 1] || Date() >= deadline, "listed while current: \(history)")

        let cleared = try await eventually(timeout: .seconds(40)) { try await pasteboard.types == nil }
        #expect(cleared)
        #expect(try await pasteboard.changeCount == written + 2, "the expiry is exactly one change")
        #expect(try await pasteboard.history().isEmpty, "expiring contents leave the history with their deadline")
    }

    @Test("a date already past clears the contents at once, and concealed(for:) sets both")
    func pastDate() async throws {
        let world = try await World()
        let pasteboard = world.pasteboard()
        try await pasteboard.setString("gone", options: WriteOptions(expirationDate: Date(timeIntervalSinceNow: -60)))
        #expect(try await eventually { try await pasteboard.types == nil })
        #expect(try await pasteboard.changeCount == 2)

        let made = Date()
        let options = WriteOptions.concealed(for: 30)
        #expect(options.isConcealed)
        let seconds = try #require(options.expirationDate).timeIntervalSince(made)
        #expect(seconds >= 30 && seconds < 35)
        #expect(WriteOptions.milliseconds(until: Date(timeIntervalSinceNow: -1)) == 1)
        #expect(WriteOptions.milliseconds(until: .distantFuture) > 1_000_000_000)
    }

    @Test("history lists generations newest first with their dates and types; restore brings one back")
    func historyAndRestore() async throws {
        let world = try await World()
        let pasteboard = world.pasteboard()
        let before = Date()
        try await pasteboard.setString("first")
        try await pasteboard.setData(Data([0x89, 0x50, 0x4E, 0x47]), forType: .png)
        try await pasteboard.setString("third")

        let history = try await pasteboard.history()
        #expect(history.map(\.changeCount) == [3, 2, 1])
        #expect(history.map(\.types) == [[.utf8PlainText], [.png], [.utf8PlainText]])
        #expect(history.allSatisfy { $0.date >= before.addingTimeInterval(-1) && $0.date <= Date().addingTimeInterval(1) })
        #expect(try await pasteboard.history(limit: 2).map(\.changeCount) == [3, 2])
        // The same as pbctl's view of it.
        #expect(try await world.pbctl("history").out.split(separator: "\n").count == 3)

        #expect(try await pasteboard.restore(changeCount: 2) == 4)
        #expect(try await pasteboard.data(forType: .png) == Data([0x89, 0x50, 0x4E, 0x47]))
        #expect(try await pasteboard.history().first?.changeCount == 4)
    }

    @Test("restore refuses a count that is not in the history, and a negative one, changing nothing")
    func restoreRefusals() async throws {
        let world = try await World()
        let pasteboard = world.pasteboard()
        try await pasteboard.setString("only")
        let missing = await #expect(throws: PasteboardError.self) { try await pasteboard.restore(changeCount: 99) }
        #expect(missing?.code == .noSuchItem)
        let negative = await #expect(throws: PasteboardError.self) { try await pasteboard.restore(changeCount: -3) }
        #expect(negative?.code == .invalidArgument)
        #expect(try await pasteboard.changeCount == 1)
        #expect(try await pasteboard.string() == "only")
    }

    @Test("restore ends the additions after clearContents: the next setString replaces")
    func restoreEndsTheSession() async throws {
        let world = try await World()
        let pasteboard = world.pasteboard()
        try await pasteboard.setString("one")
        try await pasteboard.clearContents()
        try await pasteboard.setString("two")
        try await pasteboard.setData(Data("<b>two</b>".utf8), forType: .html)
        try await pasteboard.restore(changeCount: 1)
        try await pasteboard.setString("three")
        #expect(try await pasteboard.pasteboardItems?.count == 1)
        #expect(try await pasteboard.types == [.utf8PlainText])
    }
}

private typealias WriteOptions = Pasteboard.WriteOptions
