import Foundation
import DragFixtures
import Pasteboard

// The other process of the drag-and-drop tests (Tests/PasteboardTests/DragAndDropTests.swift):
// it drags, or drops, on the bus whose address it is given, and reports on stdout, one line at
// a time, so that the test can follow it. Only the tests use it.
//
//   pasteboard-drag-peer --address BUS drag-cards TITLE...   drag one card per title
//   pasteboard-drag-peer --address BUS drag-file PATH         drag a file (a FileRepresentation)
//   pasteboard-drag-peer --address BUS drop-cards             wait until targeted, then drop
//
// A dragging peer prints `dragging COUNT`, cancels the drag when it reads `cancel` on stdin,
// and prints `outcome dropped` or `outcome cancelled` when the drag ends. A dropping peer
// prints `targeted`, then `card TITLE` per card dropped, `accepted true`, and `untargeted`
// once the drag pasteboard no longer holds anything it can load.

/// Writes one line to stdout at once (stdout is a pipe: `print` would hold it in a buffer).
func say(_ line: String) {
    FileHandle.standardOutput.write(Data((line + "\n").utf8))
}

func fail(_ message: String) -> Never {
    FileHandle.standardError.write(Data(("pasteboard-drag-peer: " + message + "\n").utf8))
    exit(1)
}

/// Polls `condition` every 10 ms for up to 30 s.
@MainActor
func waitUntil(_ condition: @MainActor () -> Bool) async -> Bool {
    let deadline = ContinuousClock.now + .seconds(30)
    while !condition() {
        guard ContinuousClock.now < deadline else { return false }
        try? await Task.sleep(for: .milliseconds(10))
    }
    return true
}

@MainActor
func drag(_ start: () async throws -> DragSession) async throws {
    let session = try await start()
    say("dragging \(session.changeCount)")
    // Reads commands on a thread of its own: a blocking read must not hold a task's thread.
    Thread {
        while let line = readLine() {
            guard line == "cancel" else { continue }
            Task { _ = try? await session.cancel() }
        }
    }.start()
    switch try await session.outcome {
    case .dropped: say("outcome dropped")
    case .cancelled: say("outcome cancelled")
    }
}

@MainActor
func dropCards(_ pasteboard: Pasteboard) async throws {
    let destination = DropDestination(payloadType: DragCard.self, pasteboard: pasteboard)
    guard await waitUntil({ destination.isTargeted }) else { fail("never targeted") }
    say("targeted")
    let accepted = try await destination.drop { cards in
        for card in cards { say("card \(card.title)") }
        return true
    }
    say("accepted \(accepted)")
    guard await waitUntil({ !destination.isTargeted }) else { fail("still targeted after the drop") }
    say("untargeted")
}

@main
struct DragPeer {
    @MainActor
    static func main() async {
        var arguments = Array(CommandLine.arguments.dropFirst())
        guard arguments.count >= 3, arguments.removeFirst() == "--address" else {
            fail("usage: pasteboard-drag-peer --address BUS drag-cards TITLE... | drag-file PATH | drop-cards")
        }
        let pasteboard = Pasteboard(name: .drag, address: arguments.removeFirst())
        let command = arguments.removeFirst()
        do {
            switch command {
            case "drag-cards":
                try await drag { try await draggable(contentsOf: arguments.map(DragCard.init(title:)), pasteboard: pasteboard) }
            case "drag-file":
                guard let path = arguments.first else { fail("drag-file needs a path") }
                try await drag { try await draggable(DragBlob(file: URL(fileURLWithPath: path)), pasteboard: pasteboard) }
            case "drop-cards":
                try await dropCards(pasteboard)
            default:
                fail("unknown command \(command)")
            }
        } catch {
            fail("\(error)")
        }
        exit(0)
    }
}
