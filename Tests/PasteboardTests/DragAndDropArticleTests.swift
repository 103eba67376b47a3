import Foundation
import Observation
import Testing
import TestSupport

@testable import Pasteboard

// The examples of `Pasteboard.docc/DragAndDrop.md`, compiled and run against a private bus: the
// same declarations and calls, with the session bus's `drag` pasteboard replaced by the world's.
// Keep the two in step.

extension UTType {
    static let card = UTType(exportedAs: "com.example.card", conformingTo: .json)
}

/// The article's types, in a namespace of their own.
enum DragAndDropArticle {
    struct Card: Codable, Equatable, Transferable {
        var title: String

        static var transferRepresentation: some TransferRepresentation {
            CodableRepresentation(contentType: .card)
            ProxyRepresentation(exporting: \.title)
        }
    }

    @MainActor
    @Observable
    final class Board {
        var cards: [Card] = []
        let dropArea: DropDestination<Card>

        /// The article's `DropDestination(payloadType: Card.self)` uses `drag` on the session
        /// bus; here it is given the test's.
        init(pasteboard: Pasteboard) {
            dropArea = DropDestination(payloadType: Card.self, pasteboard: pasteboard)
        }

        /// What the drop area's drop handler calls.
        func drop(at location: CGPoint) async throws -> Bool {
            try await dropArea.drop(at: location) { cards, _ in
                self.cards.append(contentsOf: cards)
                return true
            }
        }
    }
}

@Suite("Drag and drop article")
@MainActor
struct DragAndDropArticleTests {
    typealias Card = DragAndDropArticle.Card

    @Test("drag a card onto the board; text never targets it")
    func dragOntoBoard() async throws {
        let world = try await World()
        let drag = world.pasteboard(.drag)
        let board = DragAndDropArticle.Board(pasteboard: drag)

        try await draggable("plain text", pasteboard: drag)
        await board.dropArea.refresh()
        #expect(!board.dropArea.isTargeted)

        let session = try await draggable(Card(title: "Call the plumber"), pasteboard: drag)
        #expect(await eventually { board.dropArea.isTargeted })
        #expect(try await board.drop(at: CGPoint(x: 40, y: 120)))
        #expect(board.cards == [Card(title: "Call the plumber")])
        #expect(try await ending(of: session) == .dropped)

        // Everyone else gets the title.
        let several = try await draggable(contentsOf: [Card(title: "a"), Card(title: "b")], pasteboard: drag)
        let titles = DropDestination(payloadType: String.self, pasteboard: drag)
        #expect(await eventually { titles.isTargeted })
        var received: [String] = []
        #expect(try await titles.drop { values in received = values; return true })
        #expect(received == ["a", "b"])
        #expect(try await ending(of: several) == .dropped)
    }

    @Test("know how the drag ended; when the drag is gone the drop returns false")
    func cancelAndGone() async throws {
        let world = try await World()
        let drag = world.pasteboard(.drag)
        let board = DragAndDropArticle.Board(pasteboard: drag)

        let session = try await draggable(Card(title: "Water the plants"), pasteboard: drag)
        #expect(await eventually { board.dropArea.isTargeted })
        // The person pressed Escape:
        try await session.cancel()
        #expect(try await ending(of: session) == .cancelled)

        let accepted = try await board.drop(at: CGPoint(x: 40, y: 120))
        #expect(!accepted)
        #expect(board.cards == [])
    }
}
