import Foundation
import Pasteboard
import Synchronization
import Testing
import TestSupport

/// `writePromised(_:provider:)`: the library answers the server's `Provide` calls itself.
struct PromisedDataTests {
    @Test func anotherProcessReadsDataProducedOnDemand() async throws {
        let world = try await World()
        let asked = Mutex<[String]>([])
        let count = try await world.pasteboard().writePromised([[.utf8PlainText, .html]]) { item, type in
            asked.withLock { $0.append("\(item) \(type.pasteboardType)") }
            return Data(type == .html ? "<b>late</b>".utf8 : "late".utf8)
        }
        #expect(count == 1)
        #expect(asked.withLock { $0.isEmpty }, "nothing is produced before a read")
        let items = try #require(try await world.pasteboard().pasteboardItems)
        #expect(items.first?.sizesByType.map(\.size) == [-1, -1])

        // Another process pastes: the server asks this process, once, and keeps the answer.
        let pasted = try await world.pbctl("paste")
        #expect(pasted.status == 0)
        #expect(pasted.out == "late")
        #expect(try await world.pbctl("paste").out == "late")
        #expect(asked.withLock { $0 } == ["0 text/plain;charset=utf-8"])
        // This process reads through the same connection that provides.
        #expect(try await world.pasteboard().data(forType: .html) == Data("<b>late</b>".utf8))
        #expect(asked.withLock { $0.count } == 2)
    }

    @Test func aFailingProviderGivesProviderFailed() async throws {
        let world = try await World()
        struct Broken: Error {}
        try await world.pasteboard().writePromised([[.png]]) { _, _ in throw Broken() }
        let pasted = try await world.pbctl("paste", "-t", "image/png")
        #expect(pasted.status == 1)
        #expect(pasted.err.contains("did not provide"))
        await #expect(throws: PasteboardError.self) {
            _ = try await world.pasteboard().data(forType: .png)
        }
    }
}
