import Foundation
import Observation
import DragFixtures
import Testing
import TestSupport

@testable import Pasteboard

/// `draggable` and `DropDestination`: a drag is one change of the drag pasteboard, a
/// destination is targeted from the types alone, and a drop delivers a non-empty array of the
/// targeted drag, byte-exact, between two processes (this one and `pasteboard-drag-peer`).
@Suite("Drag and drop")
@MainActor
struct DragAndDropTests {
    // MARK: Between two processes

    @Test("another process drags cards; this one is targeted, drops them, and the drag ends as dropped")
    func peerDragsCards() async throws {
        let world = try await World()
        let drag = world.pasteboard(.drag)
        let destination = DropDestination(payloadType: DragCard.self, pasteboard: drag)
        #expect(destination.pasteboard.name == .drag)
        await destination.refresh()
        #expect(!destination.isTargeted, "nothing is being dragged yet")

        let peer = try DragPeer(world, "drag-cards", "Call the plumber", "Water the plants")
        let count = try await peer.dragCount()
        #expect(await eventually(timeout: .seconds(15)) { destination.isTargeted })
        #expect(try await drag.changeCount == count, "one change per drag")

        var received: [[DragCard]] = []
        let accepted = try await destination.drop { cards in
            received.append(cards)
            return true
        }
        #expect(accepted)
        #expect(received == [[DragCard(title: "Call the plumber"), DragCard(title: "Water the plants")]])
        #expect(!destination.isTargeted, "a finished drop leaves the destination untargeted")
        try await peer.expectLine("outcome dropped")
        #expect(try await peer.finish() == 0)
        #expect(try await drag.changeCount == count + 1, "the drop emptied the drag pasteboard, in one change")
        #expect(try await drag.types == nil)
    }

    @Test("a 64 MiB file dragged from another process arrives byte-exact, through file descriptors", .timeLimit(.minutes(5)))
    func peerDragsLargeFile() async throws {
        let world = try await World()
        let drag = world.pasteboard(.drag)
        let monitor = CallMonitor.isAvailable ? try await CallMonitor(world, probe: drag) : nil
        let bytes = randomBytes(64 << 20)
        let source = try temporaryFile(bytes)
        defer { try? FileManager.default.removeItem(at: source) }
        let destination = DropDestination(payloadType: DragBlob.self, pasteboard: drag)

        let peer = try DragPeer(world, "drag-file", source.path)
        _ = try await peer.dragCount()
        #expect(await eventually(timeout: .seconds(30)) { destination.isTargeted })
        var files: [URL] = []
        #expect(try await destination.drop { blobs in
            files = blobs.map(\.file)
            return true
        })
        defer { files.forEach { try? FileManager.default.removeItem(at: $0) } }
        #expect(files.count == 1)
        let received = try Data(contentsOf: try #require(files.first))
        #expect(received.count == bytes.count)
        #expect(received == bytes, "byte-exact")
        try await peer.expectLine("outcome dropped")
        #expect(try await peer.finish() == 0)
        if let monitor {
            #expect(await eventually { monitor.members.contains("WriteItemsFd") && monitor.members.contains("ReadFd") }, "\(monitor.members)")
            #expect(!monitor.members.contains("ReadData"), "nothing of the file was read inline: \(monitor.members)")
        }
    }

    @Test("another process cancels its drag: this destination turns untargeted, and a drop returns false")
    func peerCancels() async throws {
        let world = try await World()
        let drag = world.pasteboard(.drag)
        let destination = DropDestination(payloadType: DragCard.self, pasteboard: drag)
        let peer = try DragPeer(world, "drag-cards", "never mind")
        let count = try await peer.dragCount()
        #expect(await eventually(timeout: .seconds(15)) { destination.isTargeted })

        peer.cancel()
        try await peer.expectLine("outcome cancelled")
        #expect(try await peer.finish() == 0)
        #expect(await eventually { !destination.isTargeted })
        #expect(try await !destination.drop { _ in Issue.record("the action ran"); return true })
        #expect(try await drag.changeCount == count + 1, "the cancel was one change, and the drop made none")
    }

    @Test("this process drags; another process is targeted, drops, and receives the cards")
    func peerDrops() async throws {
        let world = try await World()
        let drag = world.pasteboard(.drag)
        let session = try await draggable(contentsOf: [DragCard(title: "owl"), DragCard(title: "swift")], pasteboard: drag)
        let written = try await drag.changeCount
        #expect(session.changeCount == written)

        let peer = try DragPeer(world, "drop-cards")
        try await peer.expectLine("targeted")
        try await peer.expectLine("card owl")
        try await peer.expectLine("card swift")
        try await peer.expectLine("accepted true")
        try await peer.expectLine("untargeted")
        #expect(try await peer.finish() == 0)
        #expect(try await ending(of: session) == .dropped)
        #expect(try await session.cancel() == false, "a dropped drag cannot be cancelled")
        #expect(try await drag.changeCount == session.changeCount + 1)
    }

    // MARK: Targeting

    @Test("a drag of something the destination cannot load never targets it, and reads no data", .enabled(if: CallMonitor.isAvailable))
    func unloadableNeverTargets() async throws {
        let world = try await World()
        let drag = world.pasteboard(.drag)
        let monitor = try await CallMonitor(world, probe: drag)
        let destination = DropDestination(payloadType: DragCard.self, pasteboard: drag)
        let states = Collected<Bool>()
        let recorder = TargetRecorder(destination) { states.append($0) }
        defer { recorder.stop() }

        try await draggable("plain text is not a card", pasteboard: drag)
        try await draggable(Data([0x89, 0x50, 0x4E, 0x47]), pasteboard: drag)
        await destination.refresh()
        #expect(!destination.isTargeted)
        #expect(try await !destination.drop { _ in Issue.record("the action ran"); return true })

        // The destination follows all the same: a card targets it.
        try await draggable(DragCard(title: "a card"), pasteboard: drag)
        #expect(await eventually { destination.isTargeted })
        // The recorder hears of a change in a task of its own: wait for it to have written.
        #expect(await eventually { !states.all.isEmpty })
        #expect(states.all.first == true, "targeted only by the card: \(states.all)")

        let marker = monitor.members.filter { $0 == "ChangeCount" }.count
        _ = try await drag.changeCount
        #expect(await eventually { monitor.members.filter { $0 == "ChangeCount" }.count > marker })
        let reads: Set<String> = ["ReadData", "ReadBest", "ReadFd", "Items"]
        #expect(monitor.members.filter(reads.contains) == [], "targeting reads no data: \(monitor.members)")
    }

    @Test("a cancelled drag untargets the destination; a drop then returns false and changes nothing")
    func cancelledDrag() async throws {
        let world = try await World()
        let drag = world.pasteboard(.drag)
        let destination = DropDestination(payloadType: DragCard.self, pasteboard: drag)
        let session = try await draggable(DragCard(title: "dropped nowhere"), pasteboard: drag)
        #expect(await eventually { destination.isTargeted })

        #expect(try await session.cancel())
        #expect(try await session.cancel(), "the same answer again")
        #expect(try await ending(of: session) == .cancelled)
        let afterCancel = try await drag.changeCount
        #expect(afterCancel == session.changeCount + 1)
        #expect(try await drag.types == nil)
        // Whether or not the destination has seen the cancel yet, the drop finds nothing.
        #expect(try await !destination.drop { _ in Issue.record("the action ran"); return true })
        #expect(await eventually { !destination.isTargeted })
        #expect(try await !destination.drop { _ in Issue.record("the action ran"); return true })
        #expect(try await drag.changeCount == afterCancel, "nothing stored changed")
    }

    @Test("a drag replaced by another ends as cancelled, and cancelling it leaves the new drag alone")
    func replacedDrag() async throws {
        let world = try await World()
        let drag = world.pasteboard(.drag)
        let destination = DropDestination(payloadType: DragCard.self, pasteboard: drag)
        let first = try await draggable(DragCard(title: "first"), pasteboard: drag)
        #expect(await eventually { destination.isTargeted })
        let second = try await draggable(DragCard(title: "second"), pasteboard: drag)
        #expect(second.changeCount == first.changeCount + 1)
        #expect(try await ending(of: first) == .cancelled)
        #expect(try await first.cancel() == false)
        #expect(try await drag.changeCount == second.changeCount, "the first drag's cancel did not touch the second")

        await destination.refresh()
        var received: [DragCard] = []
        #expect(try await destination.drop { cards in received = cards; return true })
        #expect(received == [DragCard(title: "second")])
        #expect(try await ending(of: second) == .dropped)
    }

    @Test("a drag replaced between targeting and the drop: the drop returns false and leaves the new drag alone")
    func replacedBeforeDrop() async throws {
        let world = try await World()
        let drag = world.pasteboard(.drag)
        let destination = DropDestination(payloadType: DragCard.self, pasteboard: drag)
        let first = try await draggable(DragCard(title: "first"), pasteboard: drag)
        #expect(await eventually { destination.isTargeted })
        await destination.refresh()

        // Another program's drag replaces it while this actor is held, so that the destination
        // cannot have seen the change when the drop begins: it still targets the first drag.
        let file = try temporaryFile(try JSONEncoder().encode(DragCard(title: "second")), extension: "json")
        defer { try? FileManager.default.removeItem(at: file) }
        let pid = try spawnDetached(try Paths.product("pbctl"), ["--address", world.address, "-p", "drag", "copy", file.path, "-t", UTType.dragCard.identifier])
        #expect(reap(pid) == 0)
        // No suspension before the drop, or the destination could catch up.
        #expect(try await !destination.drop { _ in Issue.record("the action ran"); return true })
        #expect(try await drag.changeCount == first.changeCount + 1, "one change, the new drag's: nothing else stored")
        #expect(try await ending(of: first) == .cancelled)

        // The new drag is targeted in its turn, and drops.
        await destination.refresh()
        var received: [DragCard] = []
        #expect(try await destination.drop { cards in received = cards; return true })
        #expect(received == [DragCard(title: "second")])
    }

    @Test("an action that refuses the values: the drop returns false, and the drag is finished")
    func refusedDrop() async throws {
        let world = try await World()
        let drag = world.pasteboard(.drag)
        let destination = DropDestination(payloadType: String.self, pasteboard: drag)
        let session = try await draggable("refused", pasteboard: drag)
        #expect(await eventually { destination.isTargeted })
        var received: [String] = []
        var location: CGPoint?
        let accepted = try await destination.drop(at: CGPoint(x: 12, y: 34)) { values, at in
            received = values
            location = at
            return false
        }
        #expect(!accepted)
        #expect(received == ["refused"])
        #expect(location == CGPoint(x: 12, y: 34))
        #expect(try await ending(of: session) == .dropped)
        #expect(try await drag.types == nil)
    }

    @Test("a drop made at once after the drag, before the destination has heard of it, asks the server and drops it")
    func dropBeforeTheSignal() async throws {
        let world = try await World()
        let drag = world.pasteboard(.drag)
        let session = try await draggable("just dragged", pasteboard: drag)
        // Made after the drag and dropped on without a pause: its follower has not run yet
        // (the test holds the main actor until `drop` first waits), so nothing is targeted.
        let destination = DropDestination(payloadType: String.self, pasteboard: drag)
        #expect(!destination.isTargeted)
        var received: [String] = []
        // The two-argument action without `at:`: the location is `.zero`.
        let accepted = try await destination.drop { values, location in
            received = values
            return location == .zero
        }
        #expect(accepted)
        #expect(received == ["just dragged"])
        #expect(try await ending(of: session) == .dropped)

        // Nothing dragged: asking the server finds nothing, and the action does not run.
        let empty = DropDestination(payloadType: String.self, pasteboard: drag)
        #expect(try await !empty.drop { _ in Issue.record("ran with nothing dragged"); return true })
    }

    @Test("a drag whose data cannot be decoded: the drop throws what is wrong, the action does not run")
    func undecodableDrop() async throws {
        let world = try await World()
        let drag = world.pasteboard(.drag)
        let destination = DropDestination(payloadType: DragCard.self, pasteboard: drag)
        expectSuccess(try await world.pbctl("-p", "drag", "copy", "-t", UTType.dragCard.identifier, input: "not JSON"))
        #expect(await eventually { destination.isTargeted })
        await #expect(throws: (any Error).self) {
            try await destination.drop { _ in Issue.record("the action ran"); return true }
        }
        #expect(try await drag.types == nil, "the drag is finished all the same")
    }

    @Test("a value that exports nothing cannot be dragged, and the drag pasteboard is left alone")
    func nothingToDrag() async throws {
        let world = try await World()
        let drag = world.pasteboard(.drag)
        try await drag.setString("before")
        let before = try await drag.changeCount
        await #expect(throws: TransferError.self) {
            try await draggable(NothingToDrag(text: "hidden"), pasteboard: drag)
        }
        await #expect(throws: TransferError.self) {
            try await draggable(contentsOf: [DragCard](), pasteboard: drag)
        }
        #expect(try await drag.changeCount == before)
    }

    @Test("a drag stays out of the pasteboard's history")
    func dragIsTransient() async throws {
        let world = try await World()
        let drag = world.pasteboard(.drag)
        try await draggable(DragCard(title: "fleeting"), pasteboard: drag)
        let history = try await drag.proxy.history(drag.name.rawValue)
        #expect(history.allSatisfy { !$0.types.contains(UTType.dragCard.pasteboardType) }, "\(history)")
    }

    @Test("waiting for the outcome stops when the waiting task is cancelled; the drag goes on")
    func cancelledWait() async throws {
        let world = try await World()
        let drag = world.pasteboard(.drag)
        let session = try await draggable(DragCard(title: "still here"), pasteboard: drag)
        let wait = Task { try await session.outcome }
        wait.cancel()
        await #expect(throws: CancellationError.self) { try await wait.value }
        #expect(try await drag.changeCount == session.changeCount, "the drag is still on the pasteboard")
        #expect(try await session.cancel())
        #expect(try await ending(of: session) == .cancelled)
    }

    @Test("a released destination is freed, and stops following")
    func release() async throws {
        let world = try await World()
        weak var released: DropDestination<DragCard>?
        do {
            let destination = DropDestination(payloadType: DragCard.self, pasteboard: world.pasteboard(.drag))
            released = destination
            try await draggable(DragCard(title: "x"), pasteboard: world.pasteboard(.drag))
            #expect(await eventually { destination.isTargeted })
        }
        #expect(released == nil)
    }
}

// MARK: - Types (DragCard and DragBlob are in DragFixtures, shared with the peer)

/// Exports nothing: its only representation's condition is false.
struct NothingToDrag: Codable, Transferable {
    var text: String

    static var transferRepresentation: some TransferRepresentation {
        CodableRepresentation(contentType: .dragCard).exportingCondition { _ in false }
    }
}

// MARK: - The peer

/// `pasteboard-drag-peer` on a world's bus, followed line by line.
final class DragPeer: Sendable {
    private let child: ChildProcess

    init(_ world: World, _ arguments: String...) throws {
        child = try ChildProcess(try Paths.product("pasteboard-drag-peer"), ["--address", world.address] + arguments)
    }

    /// The lines written so far.
    var lines: [String] {
        String(decoding: child.stdout, as: UTF8.self).split(separator: "\n").map(String.init)
    }

    /// Waits (generously) until the peer has written `line`.
    func expectLine(_ line: String, sourceLocation: SourceLocation = #_sourceLocation) async throws {
        guard await eventually(timeout: .seconds(60), { self.lines.contains(line) }) else {
            Issue.record("the peer never wrote \"\(line)\": \(lines), stderr: \(String(decoding: child.stderr, as: UTF8.self))", sourceLocation: sourceLocation)
            throw TestSupportError("no \(line)")
        }
    }

    /// The change count of the peer's drag, once it has begun.
    func dragCount() async throws -> Int {
        guard await eventually(timeout: .seconds(60), { self.lines.contains { $0.hasPrefix("dragging ") } }),
            let line = lines.first(where: { $0.hasPrefix("dragging ") }), let count = Int(line.dropFirst("dragging ".count))
        else {
            throw TestSupportError("the peer did not begin its drag: \(lines), stderr: \(String(decoding: child.stderr, as: UTF8.self))")
        }
        return count
    }

    /// Sends `cancel` to a dragging peer.
    func cancel() {
        child.send(Data("cancel\n".utf8))
    }

    /// Waits for the peer to exit; its status.
    func finish() async throws -> Int32 {
        try await child.wait(timeout: .seconds(60))
    }
}

/// Records every value `isTargeted` takes, through Observation.
@MainActor
final class TargetRecorder<Payload: Transferable> {
    private var active = true

    init(_ destination: DropDestination<Payload>, record: @escaping @MainActor (Bool) -> Void) {
        observe(destination, record: record)
    }

    func stop() { active = false }

    private func observe(_ destination: DropDestination<Payload>, record: @escaping @MainActor (Bool) -> Void) {
        guard active else { return }
        withObservationTracking {
            _ = destination.isTargeted
        } onChange: { [weak self] in
            Task { @MainActor in
                guard let self else { return }
                record(destination.isTargeted)
                self.observe(destination, record: record)
            }
        }
    }
}

/// How `session` ended, waiting up to `timeout` (generous: this is not a measure of speed, only
/// a way to fail rather than hang when a drag never ends).
func ending(of session: DragSession, timeout: Duration = .seconds(60)) async throws -> DragSession.Outcome {
    try await withThrowingTaskGroup(of: DragSession.Outcome?.self) { group in
        group.addTask { try await session.outcome }
        group.addTask {
            try await Task.sleep(for: timeout)
            return nil
        }
        defer { group.cancelAll() }
        guard let first = try await group.next(), let outcome = first else {
            throw TestSupportError("the drag at change \(session.changeCount) did not end within \(timeout)")
        }
        return outcome
    }
}
