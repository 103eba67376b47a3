import Foundation
import Pasteboard
import Testing
import TestSupport

/// A value offered only under a condition that does not hold.
struct Draft: Transferable {
    var text: String
    var isFinished: Bool

    static var transferRepresentation: some TransferRepresentation {
        ProxyRepresentation(exporting: \Draft.text).exportingCondition { $0.isFinished }
    }
}

/// Behaviours the final review mended, kept from coming back.
struct ReviewRegressionTests {
    @Test func writingNothingExportableLeavesThePasteboardAlone() async throws {
        let world = try await World()
        let pasteboard = world.pasteboard()
        try await pasteboard.setString("kept")
        #expect(try await pasteboard.writeObjects([Draft(text: "unfinished", isFinished: false)]) == false)
        #expect(try await pasteboard.changeCount == 1)
        #expect(try await pasteboard.string(forType: .utf8PlainText) == "kept")
        #expect(try await pasteboard.writeObjects([Draft(text: "done", isFinished: true)]))
        #expect(try await pasteboard.string(forType: .utf8PlainText) == "done")
    }

    @Test func overlappingPromisesKeepTheLaterProvider() async throws {
        let world = try await World()
        let pasteboard = world.pasteboard()
        try await pasteboard.writePromised([[.utf8PlainText]]) { _, _ in Data("first".utf8) }
        try await pasteboard.writePromised([[.utf8PlainText]]) { _, _ in Data("second".utf8) }
        let pasted = try await world.pbctl("paste")
        #expect(pasted.status == 0)
        #expect(pasted.out == "second")
    }
}
