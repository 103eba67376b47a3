import Synchronization

/// Follows whether a pasteboard holds something `Payload` can import, live, without reading
/// any data: what enables a ``PasteButton`` and targets a ``DropDestination``.
///
/// The answer comes from the types each `Changed` signal carries, matched by conformance
/// against the payload's importable representations; a change that carries no types (a
/// concealed write) is settled by asking the server with `CanRead`. The first state is the
/// pasteboard's once subscribed, so a change made while the owner is being set up is never
/// missed.
///
/// The owner keeps the follower and hands ``start(_:)`` a closure that holds the owner weakly;
/// the following task holds the follower weakly, so releasing the owner releases the follower,
/// whose `deinit` stops the task.
@MainActor
final class ImportAvailability<Payload: Transferable> {
    /// One state of the pasteboard, as far as the payload type is concerned.
    struct State: Equatable {
        /// The pasteboard's change count this state belongs to.
        var changeCount: Int
        /// Whether some item offers a type the payload can import.
        var canImport: Bool
    }

    /// The pasteboard followed.
    let pasteboard: Pasteboard
    /// The latest state seen (counts never go backwards; see ``update(changeCount:types:)``).
    private(set) var state = State(changeCount: 0, canImport: false)

    private var onChange: (@MainActor @Sendable (State) -> Void)?
    private let watcher = WatcherTask()

    /// Made from any isolation: its owner (a ``PasteButton``, a ``DropDestination``) may be.
    nonisolated init(pasteboard: Pasteboard) {
        self.pasteboard = pasteboard
    }

    deinit {
        watcher.cancel()
    }

    /// Starts following, on the main actor; `onChange` gets every new state there (hold the
    /// owner weakly in it). Called from any isolation.
    nonisolated func start(_ onChange: @escaping @MainActor @Sendable (State) -> Void) {
        let pasteboard = pasteboard
        watcher.start { [weak self] in
            // Only the weak reference is kept while following: releasing the owner ends it.
            guard let follower = self.map({ availability in
                availability.onChange = onChange
                return WeakReference(availability)
            }) else { return }
            await Self.follow(follower, pasteboard: pasteboard)
        }
    }

    /// Re-reads the state from the server (normally unnecessary: changes arrive by signal).
    /// `Types` and `CanRead` only: still no data is read.
    func refresh() async {
        guard case let (count, types)? = try? await pasteboard.proxy.types(pasteboard.name.rawValue) else {
            await update(changeCount: state.changeCount, types: [])
            return
        }
        await update(changeCount: Int(clamping: count), types: types)
    }

    private static func follow(_ follower: WeakReference<ImportAvailability>, pasteboard: Pasteboard) async {
        var changes = pasteboard.changes
        changes.startsWithCurrentState = true
        for await change in changes {
            guard let current = follower.value else { return }
            await current.update(changeCount: change.changeCount, types: change.types.map(\.pasteboardType))
        }
    }

    /// Decides from `types`, or with `CanRead` when there are none, and reports the state
    /// unless a later one has been reported meanwhile (a refresh and a signal can cross).
    ///
    /// `CanRead` answers for the contents at the time it is answered, which may be a later
    /// change than `changeCount`: the count is read again after it, and an answer that belongs
    /// to a later change is dropped, since that change's own signal is on its way. (Otherwise a
    /// state could pair one change's count with the next one's contents, and a drop would
    /// expect the wrong drag.)
    private func update(changeCount: Int, types: [String]) async {
        let canImport: Bool
        if !types.isEmpty {
            canImport = Payload.importMatch(offering: types) != nil
        } else {
            let readable = Payload.importableContentTypes
            canImport = (try? await pasteboard.canReadItem(withDataConformingToTypes: readable)) ?? false
            if canImport, let now = try? await pasteboard.changeCount, now != changeCount { return }
        }
        // Once as the current state and once as its signal, a change may come twice: told once,
        // or a drag a drop has finished would be targeted again until the next change.
        let new = State(changeCount: changeCount, canImport: canImport)
        guard changeCount >= state.changeCount, new != state else { return }
        state = new
        onChange?(state)
    }
}

/// The task following the pasteboard, cancelled when its owner goes away.
final class WatcherTask: Sendable {
    private let task = Mutex<Task<Void, Never>?>(nil)

    func start(_ body: @escaping @Sendable @MainActor () async -> Void) {
        task.withLock { $0 = Task { @MainActor in await body() } }
    }

    func cancel() {
        task.withLock { $0?.cancel() }
    }
}

/// A weak reference to a main-actor object, passable to its background work.
@MainActor
final class WeakReference<Object: AnyObject> {
    weak var value: Object?
    init(_ value: Object) { self.value = value }
}
