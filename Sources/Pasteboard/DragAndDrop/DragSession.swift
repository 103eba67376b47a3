import Synchronization

/// One drag: values written to the `drag` pasteboard as a single change, from the moment
/// ``draggable(_:pasteboard:)`` returns until a destination drops them, the source cancels, or
/// another drag replaces them.
///
/// ```swift
/// // When the person starts dragging a row:
/// let session = try await draggable(todo)
/// // If they press Escape: session.cancel()
/// switch try await session.outcome {
/// case .dropped: break               // a destination took it (and emptied the drag pasteboard)
/// case .cancelled: showSlideBack()
/// }
/// ```
///
/// A drag is the pasteboard at ``changeCount``; it ends with the next change of that
/// pasteboard. The session tells the two ends apart by what that change is:
///
/// - emptied by a ``DropDestination`` finishing the drop (it clears the drag pasteboard only
///   while it still holds this drag): ``Outcome/dropped``;
/// - emptied by ``cancel()``, or replaced by anything else written there (another drag):
///   ``Outcome/cancelled``.
///
/// As with SwiftUI's `draggable`, the source does not learn whether the destination's action
/// accepted the values: a drop that the action refused is still a drop that ended the drag.
/// Emptying the drag pasteboard by other means (`pbctl -p drag clear`) also reads as a drop.
public final class DragSession: Sendable {
    /// How a drag ended.
    public enum Outcome: Sendable, Hashable {
        /// A destination finished a drop of it.
        case dropped
        /// ``DragSession/cancel()`` ended it, or another write to the drag pasteboard (a new
        /// drag) replaced it.
        case cancelled
    }

    /// The pasteboard the drag is on (`drag`, unless another was given).
    public let pasteboard: Pasteboard
    /// The drag pasteboard's change count holding this drag: a destination drops this drag
    /// only while the pasteboard is still at this count.
    public let changeCount: Int

    /// The clear that ``cancel()`` started, once it has.
    private let cancelling: Cancelling
    /// The outcome, once the drag pasteboard has moved past ``changeCount``.
    private let ended = Resolution<Outcome>()
    /// Watches the drag pasteboard until then.
    private let watching: Task<Void, Never>

    /// - Parameter signals: The drag pasteboard's `Changed` signals, subscribed to before the
    ///   drag was written, so that the change that ends it cannot be missed.
    init(pasteboard: Pasteboard, changeCount: Int, signals: AsyncStream<PasteboardProxy.Change>) {
        self.pasteboard = pasteboard
        self.changeCount = changeCount
        let cancelling = Cancelling()
        self.cancelling = cancelling
        let ended = ended
        watching = Task {
            ended.resolve(await Self.watch(pasteboard: pasteboard, after: changeCount, signals: signals, cancelling: cancelling))
        }
    }

    /// Stops watching: nobody can ask for the outcome any more. The drag itself stays on the
    /// pasteboard until it is dropped or replaced.
    deinit {
        watching.cancel()
    }

    /// How the drag ended, once it has: waits until a destination drops it, ``cancel()`` is
    /// called, or another write replaces it.
    ///
    /// - Throws: `CancellationError` when the waiting task is cancelled first (the view that
    ///   waited went away, say); the drag goes on, and can be awaited again.
    public var outcome: Outcome {
        get async throws { try await ended.value }
    }

    /// Ends the drag without a drop (the person pressed Escape, or released it over nothing):
    /// empties the drag pasteboard if it still holds this drag, in one change, and leaves it
    /// alone otherwise (a destination dropped it first, or another drag replaced it).
    ///
    /// A destination that was targeted turns untargeted, and a drop it attempts afterwards
    /// returns `false`.
    ///
    /// - Returns: Whether this call ended the drag; false when it had already ended. Calling it
    ///   again gives the first call's answer.
    @discardableResult
    public func cancel() async throws -> Bool {
        let pasteboard = pasteboard
        let changeCount = changeCount
        let clear = cancelling.task.withLock { existing in
            if let existing { return existing }
            let task = Task { try await pasteboard.clearContents(ifChangeCount: changeCount) != nil }
            existing = task
            return task
        }
        return try await clear.value
    }

    // MARK: Watching for the end

    /// The outcome, from the first change past `count`: on `signals`, or, should the connection
    /// be lost first, on the reconnecting change sequence (which reports the current state).
    private static func watch(
        pasteboard: Pasteboard, after count: Int, signals: AsyncStream<PasteboardProxy.Change>, cancelling: Cancelling
    ) async -> Outcome {
        for await change in signals where change.count > UInt64(count) {
            return await verdict(of: change.count, types: change.types, pasteboard: pasteboard, cancelling: cancelling)
        }
        var changes = pasteboard.changes
        changes.startsWithCurrentState = true
        for await change in changes where change.changeCount > count {
            let types = change.types.map(\.pasteboardType)
            return await verdict(of: UInt64(change.changeCount), types: types, pasteboard: pasteboard, cancelling: cancelling)
        }
        return .cancelled  // only when the session went away, and nobody can ask any more
    }

    /// What the change that ended the drag means: contents that replaced it are a cancel;
    /// emptying it is this session's cancel if its clear succeeded (then that clear was the
    /// change), else a destination's drop.
    private static func verdict(of count: UInt64, types: [String], pasteboard: Pasteboard, cancelling: Cancelling) async -> Outcome {
        guard types.isEmpty else { return .cancelled }
        if let clear = cancelling.task.withLock({ $0 }), (try? await clear.value) == true {
            return .cancelled
        }
        // A concealed write's signal carries no types either: ask, when the answer still
        // belongs to that change.
        if case let (now, current)? = try? await pasteboard.proxy.types(pasteboard.name.rawValue), now == count, !current.isEmpty {
            return .cancelled
        }
        return .dropped
    }

    /// The clear ``cancel()`` started, shared with the watching task.
    private final class Cancelling: Sendable {
        let task = Mutex<Task<Bool, any Error>?>(nil)
    }
}
