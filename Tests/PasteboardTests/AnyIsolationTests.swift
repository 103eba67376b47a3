import Foundation
import Observation
import Synchronization
import Testing
import TestSupport

import Pasteboard

/// `PasteButton` and `DropDestination` used from code that is not on the main actor, as a test,
/// a service or a command-line tool may be: made, read, observed and acted on without `await`
/// on their properties (this file compiling is half of the test).
@Suite("Models from any isolation")
struct AnyIsolationTests {
    @Test("a PasteButton made off the main actor follows the pasteboard, tells its observers, and pastes")
    func pasteButtonOffTheMainActor() async throws {
        let world = try await World()
        let pasteboard = world.pasteboard()
        let button = PasteButton(payloadType: String.self, pasteboard: pasteboard)
        #expect(!button.isEnabled)
        let told = Mutex(0)
        withObservationTracking {
            _ = button.isEnabled
        } onChange: {
            told.withLock { $0 += 1 }
        }
        try await pasteboard.setString("from anywhere", forType: .string)
        #expect(await eventually { button.isEnabled })
        #expect(told.withLock { $0 } == 1, "observers are told of the change")

        var pasted: [String] = []
        #expect(try await button.paste { pasted = $0 })
        #expect(pasted == ["from anywhere"])
        try await pasteboard.clearContents()
        #expect(await eventually { !button.isEnabled })
        #expect(try await !button.paste { _ in Issue.record("ran with nothing to paste") })
    }

    @Test("a DropDestination made off the main actor is targeted by a drag and drops it")
    func dropDestinationOffTheMainActor() async throws {
        let world = try await World()
        let drag = world.pasteboard(.drag)
        let destination = DropDestination(payloadType: String.self, pasteboard: drag)
        #expect(!destination.isTargeted)
        let session = try await draggable("dragged from anywhere", pasteboard: drag)
        #expect(await eventually { destination.isTargeted })
        var dropped: [String] = []
        #expect(try await destination.drop { values in
            dropped = values
            return true
        })
        #expect(dropped == ["dragged from anywhere"])
        #expect(!destination.isTargeted, "a finished drop leaves the destination untargeted")
        #expect(try await ending(of: session) == .dropped)
    }
}
