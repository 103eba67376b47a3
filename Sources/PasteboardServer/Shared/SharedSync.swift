import Dispatch
import PasteboardModel
import Synchronization

/// The service's side of a shared PostgreSQL store: every change goes to the database before
/// it is saved here (``push(_:)``), and what other servers changed comes back as changes of
/// this one (``PasteboardService/adopt(_:)``), each announced by `Changed` on this bus.
///
/// Contents that stay home (concealed, transient, owner-only) are pushed as their change count
/// alone: the other servers see the pasteboard empty at that count.
///
/// Its methods run on the service queue, which waits for the database (a round trip on the
/// network, never on the bus thread).
final class SharedSync: Sendable {
    let store: SharedStore
    /// Data larger than this per type is refused (`TooLarge`): it would travel inside the
    /// database's rows.
    let maxBytesPerType: UInt64

    init(store: SharedStore, maxBytesPerType: UInt64) {
        self.store = store
        self.maxBytesPerType = maxBytesPerType
    }

    /// A prefix of the `bus` of promises another server took: their writers are on its bus,
    /// which this server cannot call.
    static let remoteBusPrefix = "remote:"

    /// Runs `operation` to its end, the calling thread (the service queue) waiting.
    static func wait<Value: Sendable>(_ operation: @escaping @Sendable () async throws(SharedStoreError) -> Value) throws(SharedStoreError) -> Value {
        let outcome = Mutex<Result<Value, SharedStoreError>?>(nil)
        let done = DispatchSemaphore(value: 0)
        Task {
            do throws(SharedStoreError) {
                let value = try await operation()
                outcome.withLock { $0 = .success(value) }
            } catch {
                outcome.withLock { $0 = .failure(error) }
            }
            done.signal()
        }
        done.wait()
        return try outcome.withLock { $0! }.get()
    }

    /// Commits `changes` to the database, each only if no other server changed its pasteboard
    /// since this one last read it.
    func push(_ changes: [Store.Change]) throws {
        var made: [SharedStore.Row] = []
        for change in changes { made.append(try row(for: change)) }
        let (store, rows) = (store, made)
        try Self.wait { () throws(SharedStoreError) in try await store.commit(rows) }
    }

    /// The database's row of `change`.
    private func row(for change: Store.Change) throws(PasteboardError) -> SharedStore.Row {
        let entry = change.entry
        let staysHome = entry.isVolatile || entry.hasOwnerOnlyItems
        var items: [[SharedStore.Row.Representation]] = []
        if !staysHome {
            for (index, item) in entry.items.enumerated() {
                var representations: [SharedStore.Row.Representation] = []
                for representation in item.representations {
                    representations.append(try Self.representation(representation, item: index, limit: maxBytesPerType, name: change.name))
                }
                items.append(representations)
            }
        }
        return SharedStore.Row(
            name: change.name.rawValue, count: entry.count, listed: entry.isListed, changedAt: entry.changedAt,
            expiresAt: entry.expiresAt, privateTo: staysHome ? store.origin : nil, items: items)
    }

    private static func representation(_ representation: Representation, item: Int, limit: UInt64, name: PasteboardName) throws(PasteboardError) -> SharedStore.Row.Representation {
        var payload = representation.payload
        if case .promised(let promise) = payload {
            guard let resolved = promise.resolved else {
                return .init(type: representation.type.rawValue, data: nil, promiseProvider: promise.provider, promiseBus: promise.bus)
            }
            payload = resolved
        }
        guard payload.size <= limit else {
            throw .tooLarge("item \(item) has \(payload.size) bytes of \(representation.type); a pasteboard shared through PostgreSQL takes at most \(limit) bytes per type (max-inline-bytes)")
        }
        return .init(type: representation.type.rawValue, data: try DescriptorSource.bytes(of: payload), promiseProvider: nil, promiseBus: nil)
    }

    /// The contents of a database row, for this server: what another server's promise holds is
    /// asked of nobody here (its writer is on that server's bus), and contents that stayed on
    /// another server are empty here.
    func entry(from row: SharedStore.Row, payloads: PayloadWriter) throws(PasteboardError) -> PasteboardEntry {
        var entry = PasteboardEntry()
        entry.count = row.count
        entry.isListed = row.listed
        entry.changedAt = row.changedAt
        entry.expiresAt = row.expiresAt
        guard let name = try? PasteboardName(validating: row.name), row.privateTo == nil else { return entry }
        for (index, representations) in row.items.enumerated() {
            var item = Item(representations: [])
            for representation in representations {
                guard let type = try? PasteboardType(validating: representation.type) else { continue }
                let payload: Payload
                if let data = representation.data {
                    payload = try payloads.payload(for: data)
                } else {
                    payload = .promised(Promise(
                        provider: representation.promiseProvider ?? "", bus: Self.remoteBusPrefix + (representation.promiseBus ?? ""),
                        name: name, count: row.count, item: UInt32(index), type: type))
                }
                item.representations.append(Representation(type: type, payload: payload))
            }
            if !item.representations.isEmpty { entry.items.append(item) }
        }
        return entry
    }
}
