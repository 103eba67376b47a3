import PasteboardModel
import Synchronization

/// Data promised by `WritePromised`: asked of the writer on the first read, then kept and
/// served to every later reader.
///
/// Concurrent first reads share one request to the writer. A failed request is forgotten, so
/// a later read asks again (the type stays listed meanwhile).
final class Promise: Sendable {
    /// The writer's unique bus name, which answers `org.pasteboardd.Provider1.Provide`.
    let provider: String
    /// The id of the bus that name is on (`GetId`): a later bus hands out the same names to
    /// other connections, so a promise stored by an earlier session's server is never asked
    /// of whoever holds its name now.
    let bus: String
    let name: PasteboardName
    /// The change count `WritePromised` returned.
    let count: UInt64
    /// The item's position among those of the `WritePromised` call.
    let item: UInt32
    let type: PasteboardType

    private enum State {
        case pending
        case resolving(Task<Payload, any Error>)
        case resolved(Payload)
    }
    private let state = Mutex<State>(.pending)
    /// Whether the provided data is in the store too (``keep(_:)``).
    private let isKept = Atomic<Bool>(false)

    /// The size of the data, where known before it is fetched: large data another server wrote,
    /// kept in chunks in the shared database.
    let size: UInt64?

    init(provider: String, bus: String, name: PasteboardName, count: UInt64, item: UInt32, type: PasteboardType, size: UInt64? = nil) {
        self.provider = provider
        self.bus = bus
        self.name = name
        self.count = count
        self.item = item
        self.type = type
        self.size = size
    }

    /// The size of data provided for it and admitted within the limits, from the moment it was
    /// admitted (``PasteboardService/admitProvided(_:size:)``) until it is resolved or refused.
    private let admittedSize = Mutex<UInt64?>(nil)

    /// The size to count for it: its data's once resolved, else what was admitted of it.
    var countedSize: UInt64? {
        resolved?.size ?? admittedSize.withLock { $0 }
    }

    /// Records that data of `size` bytes was admitted for it; nil: withdrawn (the fetch failed).
    func setAdmitted(_ size: UInt64?) {
        admittedSize.withLock { $0 = size }
    }

    /// Whether `item` holds this promise.
    func isHeld(by item: Item) -> Bool {
        item.representations.contains { if case .promised(let held) = $0.payload { held === self } else { false } }
    }

    /// The data, once provided.
    var resolved: Payload? {
        state.withLock { if case .resolved(let payload) = $0 { payload } else { nil } }
    }

    /// The provided data once it is stored as the promise's contents (inline, or in a blob file
    /// of the store): the rows of a later change then hold it, not the promise.
    var kept: Payload? {
        isKept.load(ordering: .acquiring) ? resolved : nil
    }

    /// Records that `payload`, the data provided, is stored (or about to be, with every row of
    /// this promise): inline, or in a blob file of the store, never in memory only.
    func keep(_ payload: Payload) {
        state.withLock { $0 = .resolved(payload) }
        isKept.store(true, ordering: .releasing)
    }

    /// The data: kept from an earlier read, or fetched now with `fetch` (once for all readers
    /// waiting at the same time).
    func resolve(using fetch: @escaping @Sendable () async throws -> Payload) async throws(PasteboardError) -> Payload {
        let task: Task<Payload, any Error> = state.withLock { state in
            switch state {
            case .resolved(let payload):
                return Task { payload }
            case .resolving(let task):
                return task
            case .pending:
                let task = Task { try await fetch() }
                state = .resolving(task)
                return task
            }
        }
        do {
            let payload = try await task.value
            state.withLock { $0 = .resolved(payload) }
            return payload
        } catch {
            state.withLock { state in
                if case .resolving = state { state = .pending }
            }
            if let error = error as? PasteboardError { throw error }
            throw .providerFailed("the writer did not provide \(type): \(error)")
        }
    }
}
