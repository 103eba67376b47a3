import Foundation
import Observation
import Synchronization

/// The model behind a drop target, as SwiftUI's `dropDestination(for:action:isTargeted:)`
/// behaves: targeted exactly while something the payload type can import is being dragged,
/// following the drag pasteboard live without reading any data, and dropping with a
/// non-empty array.
///
/// ```swift
/// let destination = DropDestination(payloadType: Todo.self)
/// // highlight the toolkit's drop area while destination.isTargeted (it is @Observable);
/// // when the person releases the drag over it:
/// let accepted = try await destination.drop { todos in
///     list.append(contentsOf: todos)
///     return true
/// }
/// ```
///
/// ``isTargeted`` is decided as ``PasteButton/isEnabled`` is: from the types each `Changed`
/// signal of the drag pasteboard carries, matched by conformance against the payload's
/// importable representations (`CanRead` for a change that carries none). A drop reads the
/// drag that the destination is targeting, and only that one: should the drag be cancelled or
/// replaced before or while it loads, the drop returns `false`, the action does not run, and
/// nothing on the pasteboard is changed.
///
/// Like ``PasteButton``, it may be made and used from any isolation; the drag pasteboard is
/// followed on the main actor, so observers hear of ``isTargeted`` there.
@Observable
public final class DropDestination<Payload: Transferable>: Sendable {
    /// Whether the drag pasteboard holds something the payload type can import: a drop now
    /// would find values to deliver.
    public var isTargeted: Bool {
        access(keyPath: \.isTargeted)
        return targetedChangeCount != nil
    }

    /// The pasteboard drags arrive on (`drag` by default).
    public let pasteboard: Pasteboard

    /// The drag pasteboard's change count while targeted: the drag a drop takes.
    @ObservationIgnored private let targeted = Mutex<Int?>(nil)
    @ObservationIgnored private let availability: ImportAvailability<Payload>

    private var targetedChangeCount: Int? { targeted.withLock { $0 } }

    /// - Parameters:
    ///   - payloadType: What the destination accepts.
    ///   - pasteboard: Where drags arrive: ``Pasteboard/Pasteboard/drag`` on the session bus
    ///     by default; ``draggable(_:pasteboard:)`` must write to the same one.
    public init(payloadType: Payload.Type, pasteboard: Pasteboard = .drag) {
        self.pasteboard = pasteboard
        availability = ImportAvailability(pasteboard: pasteboard)
        availability.start { [weak self] state in
            self?.target(state.canImport ? state.changeCount : nil)
        }
    }

    /// Drops the targeted drag here: loads every item the payload type can import, and runs
    /// `action` with them when there is at least one.
    ///
    /// - Parameters:
    ///   - isolation: Where `action` runs: the caller's actor (nothing to pass).
    ///   - action: Receives the values, never an empty array, and returns whether it accepted
    ///     them.
    /// - Returns: What `action` returned; `false` without running it when nothing importable
    ///   was being dragged, or the drag was cancelled or replaced before its values were
    ///   loaded.
    /// - Throws: What loading throws (`TransferError`, `PasteboardError`, a connection error)
    ///   or what `action` throws. The drag is finished all the same.
    @discardableResult
    public func drop(
        isolation: isolated (any Actor)? = #isolation, action: ([Payload]) async throws -> Bool
    ) async throws -> Bool {
        try await drop(at: .zero) { values, _ in try await action(values) }
    }

    /// Drops the targeted drag at `location` (in the toolkit's coordinates, `.zero` when not
    /// given), which the action receives as SwiftUI's does; see ``drop(isolation:action:)``.
    ///
    /// A drag written a moment ago whose `Changed` has not arrived yet is dropped all the same:
    /// when nothing is targeted, the destination asks the server (`Types`, no data) before it
    /// gives up.
    ///
    /// Once the values are loaded, the drop is finished whatever the action does: the drag
    /// pasteboard is emptied if it still holds this drag (one change, which tells the source's
    /// ``DragSession/outcome`` that it was dropped, and turns every destination untargeted).
    @discardableResult
    public func drop(
        at location: CGPoint = .zero, isolation: isolated (any Actor)? = #isolation,
        action: ([Payload], CGPoint) async throws -> Bool
    ) async throws -> Bool {
        if targetedChangeCount == nil { await availability.refresh() }
        guard let expected = targetedChangeCount else { return false }
        // The items of the targeted drag: a cancelled drag left nothing, a new one has another
        // count. Reads expect this count, so a change while loading fails them with `Stale`.
        let items = try await pasteboard.pasteboardItems ?? []
        guard let first = items.first, first.changeCount == expected else { return false }
        let values: [Payload]
        do {
            values = try await Pasteboard.loadTransferables(type: Payload.self, from: items)
        } catch let error as PasteboardError where error.code == .stale {
            return false
        } catch {
            await finish(expected)
            throw error
        }
        guard !values.isEmpty else {
            await finish(expected)
            return false
        }
        let accepted: Bool
        do {
            accepted = try await action(values, location)
        } catch {
            await finish(expected)
            throw error
        }
        await finish(expected)
        return accepted
    }

    /// Re-reads the state from the server (normally unnecessary: changes arrive by signal).
    public func refresh() async {
        await availability.refresh()
    }

    // MARK: Following the drag pasteboard

    /// Every change of the target is made on the main actor, one at a time, where observers
    /// hear of it; the lock is for readers elsewhere.
    @MainActor
    private func target(_ changeCount: Int?) {
        let wasTargeted = targeted.withLock { $0 != nil }
        guard wasTargeted != (changeCount != nil) else { return targeted.withLock { $0 = changeCount } }
        withMutation(keyPath: \.isTargeted) {
            targeted.withLock { $0 = changeCount }
        }
    }

    /// Ends the dropped drag: empties the drag pasteboard if it still holds it. Best effort:
    /// the drop has happened, and a pasteboard that cannot be reached now will be replaced by
    /// the next drag anyway.
    private func finish(_ changeCount: Int) async {
        guard (try? await pasteboard.clearContents(ifChangeCount: changeCount)) != nil else { return }
        // Untargeted at once rather than when the emptying's signal arrives, unless a newer
        // drag is targeted already.
        await MainActor.run {
            if targetedChangeCount == changeCount { target(nil) }
        }
    }
}
