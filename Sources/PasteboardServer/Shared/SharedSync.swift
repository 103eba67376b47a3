import Dispatch
import PasteboardModel
import Synchronization

#if canImport(Glibc)
import Glibc
#endif

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
    /// This server's `max-pasteboards`, held across the servers: a name newly listed in the
    /// database is refused past it, whichever server listed the others.
    let maxPasteboards: UInt64

    init(store: SharedStore, maxPasteboards: UInt64 = .max) {
        self.store = store
        self.maxPasteboards = maxPasteboards
    }

    /// A prefix of the `bus` of promises another server took: their writers are on its bus,
    /// which this server cannot call.
    static let remoteBusPrefix = "remote:"
    /// The `bus` of large data another server wrote, kept in chunks in the database and read
    /// from there on first use (as a promise), followed by the chunks' name.
    static let chunksBusPrefix = "postgresql-chunks:"
    /// When the database last did not answer within ``patience``: for ``silence`` after it,
    /// changes fail without waiting for it (see ``run(heardAt:_:)``).
    private let silentSince = Mutex<ContinuousClock.Instant?>(nil)
    /// The chunks each local blob file was copied into, by the file's id.
    private let uploaded = Mutex<[String: String]>([:])
    /// The questions asked of other servers (promises of their clients), by request.
    private let asked = Mutex<[String: CheckedContinuation<Answer, Never>]>([:])

    /// What another server answered about a promise of its client.
    enum Answer: Sendable {
        case chunks(String)
        case failed(String)
    }

    /// How long the service queue waits for the database before the change fails: a database
    /// that stops answering (a network gone, not a refusal) must not hold every client.
    static let patience: DispatchTimeInterval = .seconds(10)
    /// How long calls fail at once after the database did not answer within ``patience``.
    static let silence: Duration = .seconds(10)

    /// Runs `operation` on the database for the service queue, which waits at most
    /// ``patience``; after that the connection is given up (and its transaction with it).
    ///
    /// A database that did not answer is not waited for again for as long: every change queued
    /// behind the one that waited would wait its own 10 s, and clients (whose calls time out
    /// after 25 s) would get D-Bus timeouts instead of the contract's error. Within that time
    /// changes fail at once; the first after it tries the database again. Taking in what the
    /// database told after it went silent (`heardAt`: when the notification arrived, or listening
    /// started again) is not refused so, since it has spoken since, and a change skipped would
    /// never be announced; but once one of those calls waits in vain, the rest fail at once too.
    func run<Value: Sendable>(heardAt: ContinuousClock.Instant? = nil, _ operation: @escaping @Sendable () async throws(SharedStoreError) -> Value) throws(SharedStoreError) -> Value {
        if let since = silentSince.withLock({ $0 }), ContinuousClock.now < since + Self.silence, (heardAt.map { $0 <= since } ?? true) {
            throw .unavailable("the PostgreSQL store \(store.location) did not answer within 10 s a moment ago; changes fail at once until it is tried again, within 10 s")
        }
        guard let value = try waitForTask(within: Self.patience, operation) else {
            silentSince.withLock { $0 = .now }
            store.abandonConnection()
            throw .unavailable("the PostgreSQL store \(store.location) did not answer within 10 s")
        }
        silentSince.withLock { $0 = nil }
        return value
    }

    /// Copies the large data of `items` into the database ahead of their commit, on the
    /// calling (transfer) thread: the commit on the service queue then only names it.
    func upload(_ items: [Item]) throws {
        for item in items {
            for representation in item.representations {
                guard case .file(let blob) = representation.payload, blob.isOnDisk else { continue }
                _ = try chunks(of: blob)
            }
        }
    }

    /// The name of the chunks holding `blob`, copied there first if need be.
    private func chunks(of blob: Blob) throws(SharedStoreError) -> String {
        if blob.isOnDisk, let known = uploaded.withLock({ $0[blob.id] }) { return known }
        let name = store.origin + "-" + (blob.isOnDisk ? blob.id : Store.randomID())
        let fd = open(blob.path, O_RDONLY | O_CLOEXEC)
        guard fd >= 0 else { throw .unavailable("cannot read the data to share: \(String(cString: strerror(errno)))") }
        defer { close(fd) }
        let store = store
        _ = try waitForTask(within: nil) { () throws(SharedStoreError) in try await store.upload(fd, as: name) }
        if blob.isOnDisk {
            uploaded.withLock { uploaded in
                // Remembered for the commits that name the file soon after (and a restore);
                // past a thousand, forgotten: a file named again is copied again.
                if uploaded.count >= 1024 { uploaded.removeAll() }
                uploaded[blob.id] = name
            }
        }
        return name
    }

    /// Reads the chunks `promise` names into a blob file of this server's.
    func fetchChunks(of promise: Promise, payloads: PayloadWriter) async throws -> Payload {
        try await read(String(promise.bus.dropFirst(Self.chunksBusPrefix.count)), for: promise, payloads: payloads)
    }

    /// Reads the chunks named `chunks` into a file of `payloads`.
    private func read(_ chunks: String, for promise: Promise, payloads: PayloadWriter) async throws -> Payload {
        let file = try payloads.createFile(sizeHint: nil)
        do {
            let size = try await store.download(chunks, to: file.fd)
            return .file(try file.finish(size: size))
        } catch {
            file.discard()
            throw PasteboardError.providerFailed("the \(promise.type) data of '\(promise.name)' could not be read from the shared store: \(error)")
        }
    }

    /// Asks the server whose client promised `promise` (another server on the store) for its
    /// data: that server asks its writer and puts the data in chunks, which are read here.
    func ask(_ promise: Promise, timeout: Duration, payloads: PayloadWriter) async throws -> Payload {
        let request = Store.randomID()
        let bus = String(promise.bus.dropFirst(Self.remoteBusPrefix.count))
        let store = store
        let answer = await withCheckedContinuation { (done: CheckedContinuation<Answer, Never>) in
            asked.withLock { $0[request] = done }
            Task { [self] in
                do throws(SharedStoreError) {
                    try await store.send(.asked(bus: bus, request: request, name: promise.name.rawValue, count: promise.count, item: promise.item, type: promise.type.rawValue))
                } catch {
                    answered(request, .failed("\(error)"))
                }
            }
            Task { [self] in
                try? await Task.sleep(for: timeout)
                answered(request, .failed("the server of its writer did not answer within \(timeout) (provider-timeout-ms)"))
            }
        }
        switch answer {
        case .failed(let reason):
            throw PasteboardError.providerFailed("the \(promise.type) data of '\(promise.name)' was promised by a writer on another server, which did not provide it: \(reason)")
        case .chunks(let chunks):
            defer { Task { await store.deleteChunks(chunks) } }
            return try await read(chunks, for: promise, payloads: payloads)
        }
    }

    /// The answer to a question this server asked (the first one counts).
    func answered(_ request: String, _ answer: Answer) {
        asked.withLock { $0.removeValue(forKey: request) }?.resume(returning: answer)
    }

    /// Commits `changes` to the database, each only if no other server changed its pasteboard
    /// since this one last read it.
    func push(_ changes: [Store.Change]) throws {
        var made: [SharedStore.Row] = []
        for change in changes { made.append(try row(for: change)) }
        let (store, rows, limit) = (store, made, maxPasteboards)
        try run { () throws(SharedStoreError) in try await store.commit(rows, maxListed: limit) }
    }

    /// The database's row of `change`.
    private func row(for change: Store.Change) throws -> SharedStore.Row {
        let entry = change.entry
        let staysHome = entry.isVolatile || entry.hasOwnerOnlyItems
        var items: [[SharedStore.Row.Representation]] = []
        if !staysHome {
            for item in entry.items {
                var representations: [SharedStore.Row.Representation] = []
                for representation in item.representations {
                    representations.append(try self.representation(representation))
                }
                items.append(representations)
            }
        }
        return SharedStore.Row(
            name: change.name.rawValue, count: entry.count, listed: entry.isListed, changedAt: entry.changedAt,
            expiresAt: entry.expiresAt, privateTo: staysHome ? store.origin : nil, items: items,
            announced: staysHome ? [] : entry.announcedTypes.map(\.rawValue))
    }

    /// A representation as the database keeps it: small data in the row, larger data in chunks,
    /// an unresolved promise as its writer.
    private func representation(_ representation: Representation) throws -> SharedStore.Row.Representation {
        var payload = representation.payload
        if case .promised(let promise) = payload {
            guard let resolved = promise.resolved else {
                // What this server took from the database (a restored generation, say) goes
                // back as the database had it: large data as its chunks, another server's
                // promise with that server's bus, neither as a promise of this server's.
                if promise.bus.hasPrefix(Self.chunksBusPrefix) {
                    return .init(
                        type: representation.type.rawValue, data: nil, promiseProvider: nil, promiseBus: nil,
                        blob: String(promise.bus.dropFirst(Self.chunksBusPrefix.count)), size: promise.size)
                }
                let bus = promise.bus.hasPrefix(Self.remoteBusPrefix) ? String(promise.bus.dropFirst(Self.remoteBusPrefix.count)) : promise.bus
                return .init(type: representation.type.rawValue, data: nil, promiseProvider: promise.provider, promiseBus: bus)
            }
            payload = resolved
        }
        if case .file(let blob) = payload {
            return .init(type: representation.type.rawValue, data: nil, promiseProvider: nil, promiseBus: nil, blob: try chunks(of: blob), size: blob.size)
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
                } else if let chunks = representation.blob {
                    payload = .promised(Promise(
                        provider: "postgresql", bus: Self.chunksBusPrefix + chunks, name: name, count: row.count, item: UInt32(index), type: type,
                        size: representation.size))
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
