import Dispatch
import GRDB
import Logging
import PasteboardModel
import Synchronization

#if canImport(Glibc)
import Glibc
#endif

/// The pasteboards: every rule of the model, applied in memory and committed to the ``Store``.
///
/// Every change happens while holding the ``turn``: on ``queue``, where the bus interface
/// submits each call in the order the calls arrived (so a client that sends a write and then a
/// read without waiting reads what it wrote), or on the bus thread for a small write when the
/// queue is idle (``logBatch()``). Work that can be slow (streaming a descriptor, reading a blob
/// file) happens elsewhere; what runs on the queue is bookkeeping and SQLite transactions. Calls
/// that arrive together form a batch (``beginBatch()``, ``commitBatch()``): their changes are
/// staged, seen by the calls of the batch, and committed in one transaction.
///
/// The committed contents sit behind a lock, so that the reading methods can also run on the
/// bus thread for a client with nothing queued (see ``PasteboardObject``): a read then costs no
/// thread hop. A change is published there only once it is durable (committed, or recorded in
/// the store's commit log).
///
/// `@unchecked Sendable`: the entries are behind their lock; every other mutable member is
/// touched only while holding the turn.
final class PasteboardService: @unchecked Sendable {
    let queue = DispatchQueue(label: "org.pasteboardd.service")
    let limits: Limits
    /// The id of the bus the server is on (see ``Promise/bus``).
    let busID: String
    /// The changes a start made: concealed or transient contents that did not survive the last
    /// run. Announced once the server owns its name, so that watchers miss none.
    let changedAtStart: [Change]
    let payloads: PayloadWriter
    let store: Store
    /// Read from shared-mime-info on first use, not at start-up: a start should reach the bus
    /// name as soon as it can; read again after a change (a type declared while the server
    /// runs). Taken once per call, as each use checks for a change.
    private var types: MIMEDatabase { MIMEDatabase.shared }
    let logger: Logger
    /// Set while the bus holds up the server's announcements: large ones are then refused.
    let announcements = AnnouncementBacklog()
    /// The committed contents of every name ever written; read from any thread, changed by
    /// whoever holds the turn (the queue, or the bus thread for a write it answers).
    let entries = Mutex<[PasteboardName: PasteboardEntry]>([:])
    /// Held while provided data is checked against the limits and admitted
    /// (``admitProvided(_:size:)``), so that two promises' data cannot both pass unseen.
    let admission = Mutex<Void>(())
    /// Set once the server has begun to stop (``beginStopping()``).
    private let stopping = Atomic<Bool>(false)
    /// Told of changes nobody called for (expiry), to announce them. Set before ``startExpiryTimers()``.
    var onChange: (@Sendable (Change) -> Void)?
    /// The pending expiry of each pasteboard that has one.
    var expiryTimers: [PasteboardName: (at: UInt64, timer: DispatchWorkItem)] = [:]
    /// The pasteboards whose change on another server could not be read, with how many times
    /// in a row, and those of them a retry is pending for (see `retryTakeIn`).
    var sharedRetryAttempts: [PasteboardName: Int] = [:]
    var sharedRetriesPending: Set<PasteboardName> = []
    /// A catch-up with the shared store failed and is tried again (see `catchUpShared`).
    var sharedCatchUpPending = false
    /// Whether the catch-up at start is done: later ones (the database back after it was
    /// away) announce every change of a name this server did not have yet, its watchers having
    /// been there all along.
    var sharedCaughtUpAtStart = false
    /// How many names are listed (kept, not counted per write: there may be tens of thousands).
    var listedCount = 0
    /// The batch being built, between ``beginBatch()`` and ``commitBatch()``.
    var batch: ChangeBatch?
    /// What the changes recorded in the commit log replaced, let go once they are saved.
    var loggedReplaced: [PasteboardEntry] = []
    /// Whether ``saveLoggedAside()`` is due.
    var logSaveScheduled = false
    /// The commit log's failed saves in a row, for their log lines.
    var logSaveRetries = RetryReport()
    /// The failed clears on expiry in a row, per pasteboard, for their log lines.
    var expiryRetries: [PasteboardName: RetryReport] = [:]
    /// The PostgreSQL store shared with other servers, when the server uses one (set before
    /// the server owns its name).
    var shared: SharedSync?
    /// Whether the last save failed because another server changed a pasteboard first: the
    /// change can be made again once its pasteboard is read again.
    var lastSaveRaced = false
    /// Held by whoever changes the service: the queue, for each piece of its work, or the bus
    /// thread, for a small write it answers at once (``withTurnIfFree(_:)``). The bus thread
    /// never waits for it.
    let turn = Mutex<Void>(())
    private static let queueKey = DispatchSpecificKey<Bool>()

    /// - Parameters:
    ///   - busID: The id of the bus the server is on, which promises are tied to.
    ///   - sharesCounts: Whether the counts are those of a store shared with other servers
    ///     (``SharedSync``), which this server may not move on by itself at start.
    init(store: Store, limits: Limits, logger: Logger, busID: String, sharesCounts: Bool = false) throws {
        self.busID = busID
        self.store = store
        self.limits = limits
        self.logger = logger
        queue.setSpecific(key: Self.queueKey, value: true)
        payloads = PayloadWriter(blobDirectory: store.blobDirectory, spare: store.spare, health: store.health)
        if let quarantine = store.quarantine {
            logger.critical("store: the database could not be opened (\(quarantine.reason)); it was moved, untouched, to \(quarantine.folder) and an empty store was started")
        }
        if store.replayed > 0 {
            logger.notice("store: applied \(store.replayed) change(s) left in the commit log by the last run")
        }
        if let problem = store.replayProblem {
            logger.error("store: \(problem)")
        }
        if let problem = store.logProblem {
            logger.warning("store: no commit log (\(problem)); every change is committed to the database before it is answered")
        }
        var loaded = try store.load(movingOn: !sharesCounts)
        for problem in loaded.problems {
            logger.error("store: \(problem)")
        }
        try store.delete(loaded.lostRows)
        // The limits may be lower than when the history was written: they hold from the start.
        for name in Array(loaded.entries.keys) {
            // The dropped generations' files go when their last reference does: only once the
            // rows that name them are deleted, or a crash in between would find them missing.
            let untrimmed = loaded.entries[name]!.history
            let pruned = Self.trimHistory(&loaded.entries[name]!, limits)
            if !pruned.isEmpty { try store.prune(name, counts: pruned) }
            withExtendedLifetime(untrimmed) {}
        }
        listedCount = loaded.entries.values.count(where: \.isListed)
        for name in loaded.vanished {
            try store.save(name, loaded.entries[name]!)
        }
        changedAtStart = sharesCounts ? [] : loaded.vanished.sorted { $0.rawValue < $1.rawValue }.map { Change(name: $0, count: loaded.entries[$0]!.count, types: [], removed: false) }
        var referenced = loaded.uncheckedBlobs
        Self.forEachBlob(in: loaded.entries) { referenced.insert($0.id) }
        entries.withLock { $0 = loaded.entries }
        let orphans = store.removeOrphanBlobs(keeping: referenced)
        if orphans > 0 {
            logger.notice("store: deleted \(orphans) blob file(s) left by an interrupted write")
        }
    }

    /// The current contents are in the store: their blob files outlive the objects in memory.
    deinit {
        entries.withLock { entries in Self.forEachBlob(in: entries) { $0.keepFile() } }
    }

    /// Every blob file the entries refer to, in their contents and their history.
    private static func forEachBlob(in entries: [PasteboardName: PasteboardEntry], _ body: (Blob) -> Void) {
        func visit(_ items: [Item]) {
            for item in items {
                for representation in item.representations {
                    switch representation.payload {
                    case .file(let blob): body(blob)
                    case .promised(let promise): if case .file(let blob)? = promise.kept, blob.isOnDisk { body(blob) }
                    case .inline: break
                    }
                }
            }
        }
        for entry in entries.values {
            visit(entry.items)
            for generation in entry.history { visit(generation.items) }
        }
    }

    /// Whether the server has begun to stop: calls are then neither applied nor answered.
    var isStopping: Bool { stopping.load(ordering: .acquiring) }

    /// Marks the start of a stop. A turn of the queue that begins after this changes nothing:
    /// calls not yet begun (queued or arriving), transfers that end, expiries and provided data
    /// are left alone, and the callers hear from the bus that the server left without a reply.
    /// What runs by now (on the queue, or answered on the bus thread) finishes and is answered
    /// before the connection closes. So no change is made whose caller is not told of it.
    func beginStopping() {
        stopping.store(true, ordering: .releasing)
    }

    /// Runs `body` on `queue`, holding the turn.
    func perform(_ body: @escaping @Sendable () -> Void) {
        queue.async { [self] in turn.withLock { _ in body() } }
    }

    /// Runs `body` on the calling thread when nothing else holds the turn; nil when something
    /// does (the queue is busy: the caller should hand its work there).
    func withTurnIfFree<Result>(_ body: () -> Result) -> Result? {
        turn.withLockIfAvailable { _ in body() }
    }

    /// Saves what the commit log holds, folds the store's write-ahead log into its database and
    /// deletes the spare blob file (at shutdown), after what is queued.
    func checkpoint() async {
        await withCheckedContinuation { done in
            queue.async { [self] in
                saveLoggedAside()
                Self.drainRetirement()
                store.spare.discard()
                store.checkpointer.finish()
                done.resume()
            }
        }
    }

    // MARK: Reading (on `queue`, or on the bus thread for a client with nothing queued)

    /// Every name written and not removed since, sorted.
    func names() -> [PasteboardName] {
        var listed = Set(entries.withLock { entries in entries.compactMap { $0.value.isListed ? $0.key : nil } })
        if DispatchQueue.getSpecific(key: Self.queueKey) == true, let staged = batch?.staged {
            for (name, entry) in staged {
                if entry.isListed { listed.insert(name) } else { listed.remove(name) }
            }
        }
        return listed.sorted { $0.rawValue < $1.rawValue }
    }

    /// The contents of `name`: with the changes of the open batch on the service queue, as
    /// committed elsewhere.
    func entry(_ name: PasteboardName) -> PasteboardEntry {
        if DispatchQueue.getSpecific(key: Self.queueKey) == true, let staged = batch?.staged[name] {
            return staged
        }
        return committedEntry(name)
    }

    private func committedEntry(_ name: PasteboardName) -> PasteboardEntry {
        entries.withLock { $0[name] } ?? PasteboardEntry()
    }

    /// The first of `requested` that some item satisfies by conformance.
    func availableType(_ name: PasteboardName, from requested: [PasteboardType]) -> Int? {
        let offered = entry(name).items.map(\.types)
        let types = self.types
        return requested.firstIndex { request in
            offered.contains { types.indexOfBestMatch(for: request, in: $0) != nil }
        }
    }

    /// The representation of exactly `type` in item `index`.
    func read(_ name: PasteboardName, item index: UInt32, type: PasteboardType, expect: UInt64, callerPID: UInt32? = nil) throws(PasteboardError) -> (count: UInt64, representation: Representation) {
        let (entry, item) = try locate(name, item: index, expect: expect, callerPID: callerPID)
        guard let representation = item.representation(of: type) ?? representation(spelledOtherwise: type, in: item) else {
            throw .noSuchType("item \(index) of '\(name)' has no \(type) data; it offers \(Self.list(item.types))")
        }
        return (entry.count, representation)
    }

    /// The representation of another spelling of `type` than the item's: a MIME alias
    /// (`text/rtf` and `application/rtf`), or a declared identifier and its MIME type (data
    /// stored as `com.example.todo` before it was declared). Looked for only when the exact
    /// spelling is missing.
    private func representation(spelledOtherwise type: PasteboardType, in item: Item) -> Representation? {
        let types = self.types
        let wanted = types.sameTypeKey(type)
        return item.representations.first { types.sameTypeKey($0.type) == wanted }
    }

    /// The item's own type that best satisfies the first satisfiable entry of `requested`.
    func readBest(_ name: PasteboardName, item index: UInt32, types requested: [PasteboardType], expect: UInt64, callerPID: UInt32? = nil) throws(PasteboardError) -> (count: UInt64, representation: Representation) {
        let (entry, item) = try locate(name, item: index, expect: expect, callerPID: callerPID)
        let offered = item.types
        let types = self.types
        for request in requested {
            if let best = types.indexOfBestMatch(for: request, in: offered) {
                return (entry.count, item.representations[best])
            }
        }
        if requested.isEmpty {
            throw .noSuchType("no types were asked for, so none of item \(index) of '\(name)' can be chosen; list the types you can read, richest first (it offers \(Self.list(offered)))")
        }
        throw .noSuchType("item \(index) of '\(name)' has nothing conforming to \(Self.list(requested)); it offers \(Self.list(offered))")
    }

    /// Whether some of `name`'s data was written `owner-only`: reading it needs the caller's
    /// process.
    func hasOwnerOnlyItems(_ name: PasteboardName) -> Bool {
        entry(name).hasOwnerOnlyItems
    }

    private func locate(_ name: PasteboardName, item index: UInt32, expect: UInt64, callerPID: UInt32?) throws(PasteboardError) -> (PasteboardEntry, Item) {
        let entry = entry(name)
        if expect != 0, expect != entry.count {
            throw .stale("'\(name)' changed: its change count is \(entry.count), not \(expect); read its items again")
        }
        guard Int(index) < entry.items.count else {
            throw .noSuchItem(entry.items.isEmpty
                ? "'\(name)' is empty"
                : "'\(name)' has \(entry.items.count) item(s), numbered from 0; there is no item \(index)")
        }
        let item = entry.items[Int(index)]
        // 0: the writer's process was unknown, and such data is nobody's to read.
        if let owner = item.ownerPID, owner == 0 || owner != callerPID {
            throw .accessDenied("item \(index) of '\(name)' was written owner-only by another process; only that process can read it (its types stay listed)")
        }
        return (entry, item)
    }

    /// A name nobody has used.
    func uniqueName() -> PasteboardName {
        while true {
            let candidate = try! PasteboardName(validating: "unique-" + Store.randomID())
            if entry(candidate).count == 0 { return candidate }
        }
    }

    // MARK: Changing (holding the turn: on `queue`, or on the bus thread in ``PasteboardObject``'s writeAtOnce)

    func clear(_ name: PasteboardName) throws(PasteboardError) -> Change {
        try write(name, items: [], options: WriteOptions())
    }

    /// Replaces (or, with `append`, extends) the contents, atomically and durably.
    ///
    /// - Parameter ownerPID: The writer's process, for an `owner-only` write.
    func write(_ name: PasteboardName, items newItems: [Item], options: WriteOptions, ownerPID: UInt32? = nil) throws(PasteboardError) -> Change {
        let old = entry(name)
        var entry = old
        for (index, item) in newItems.enumerated() {
            try check(item, index: index)
        }
        if let expected = options.ifChangeCount, expected != entry.count {
            throw .conflict("'\(name)' is at change count \(entry.count), not \(expected); read it again and retry")
        }
        if !entry.isListed, UInt64(listedCount) >= limits.maxPasteboards {
            throw .quotaExceeded("there are already \(limits.maxPasteboards) pasteboards (max-pasteboards); remove some first")
        }
        // Each new item is its writer's when written owner-only; those appended to keep theirs.
        let added = options.ownerOnly ? newItems.map { item in var owned = item; owned.ownerPID = ownerPID ?? 0; return owned } : newItems
        let items = options.append ? entry.items + added : added
        if UInt64(items.count) > limits.maxItems {
            throw .quotaExceeded("'\(name)' would hold \(items.count) items; the limit is \(limits.maxItems) (max-items)")
        }
        let total = items.reduce(0) { $0 + $1.byteCount }
        if total > limits.maxPasteboardBytes {
            throw .quotaExceeded("'\(name)' would hold \(total) bytes; the limit is \(limits.maxPasteboardBytes) (max-pasteboard-bytes)")
        }
        let typeBytes = items.reduce(0) { sum, item in item.representations.reduce(sum) { $0 + UInt64($1.type.rawValue.utf8.count) } }
        if typeBytes > limits.maxTypeBytes {
            throw .quotaExceeded("'\(name)' would hold \(typeBytes) bytes of type names; the limit is \(limits.maxTypeBytes) (max-type-bytes): offer fewer types, or fewer items")
        }
        // Appending keeps the stricter of the old and new handling.
        let keep = options.append
        entry.items = items
        entry.isListed = true
        entry.isConcealed = options.concealed || (keep && entry.isConcealed)
        entry.isVolatile = options.isVolatile || (keep && entry.isVolatile)
        if let refusal = announcements.refusal(name, announcing: entry) { throw refusal }
        if let expiresAt = options.expiresAt {
            entry.expiresAt = expiresAt
        } else if let milliseconds = options.expiresInMilliseconds {
            let (expiresAt, overflow) = Self.nowMilliseconds().addingReportingOverflow(milliseconds)
            entry.expiresAt = overflow ? .max : expiresAt  // saturates: a huge expires-in-ms never comes
        } else if !keep {
            entry.expiresAt = nil
        }
        return try commit(name, entry, replacing: old)
    }

    // MARK: History (on `queue`)

    /// The current contents (unless concealed or transient, or written to expire and expired),
    /// then earlier ones, newest first; at most `limit` entries, or `history-depth` when
    /// `limit` is 0.
    func history(_ name: PasteboardName, limit: UInt32) -> [(count: UInt64, time: UInt64, types: [PasteboardType])] {
        let entry = entry(name)
        var result: [(count: UInt64, time: UInt64, types: [PasteboardType])] = []
        if entry.isListedInHistory, !entry.hasExpired(at: Self.nowMilliseconds()) {
            result.append((entry.count, entry.changedAt, entry.types))
        }
        result += entry.history.map { ($0.count, $0.writtenAt, $0.types) }
        // The kept generations already fit history-depth (see `fitting`).
        return Array(result.prefix(Int(clamping: limit == 0 ? limits.historyDepth : UInt64(limit))))
    }

    /// Makes the contents of change `count` current again, as a new change. Contents written
    /// to expire come back with the same deadline: a restore never makes them lasting.
    func restore(_ name: PasteboardName, count: UInt64) throws(PasteboardError) -> Change {
        let entry = entry(name)
        let now = Self.nowMilliseconds()
        let items: [Item]
        let expiresAt: UInt64?
        if count == entry.count, entry.isListedInHistory, !entry.hasExpired(at: now), limits.historyDepth > 0 {
            (items, expiresAt) = (entry.items, entry.expiresAt)
        } else if let generation = entry.history.first(where: { $0.count == count }) {
            (items, expiresAt) = (generation.items, nil)
        } else {
            throw .noSuchItem("'\(name)' has no contents of change \(count) in its history; list them with History (pbctl history)")
        }
        var options = WriteOptions()
        options.expiresAt = expiresAt
        return try write(name, items: items, options: options)
    }

    /// Replaces (or extends) the contents with items whose data `provider` gives on first read.
    ///
    /// - Parameter bus: Where `provider` is found: the id of the bus (the default), or the
    ///   desktop bridge's token for a desktop copy.
    func writePromised(_ name: PasteboardName, itemTypes: [[PasteboardType]], provider: String, bus: String? = nil, options: WriteOptions, ownerPID: UInt32?) throws(PasteboardError) -> Change {
        let count = entry(name).count + 1
        let items = itemTypes.enumerated().map { index, types in
            Item(representations: types.map { type in
                Representation(type: type, payload: .promised(Promise(provider: provider, bus: bus ?? busID, name: name, count: count, item: UInt32(index), type: type)))
            })
        }
        return try write(name, items: items, options: options, ownerPID: ownerPID)
    }

    /// Drops the contents of a listed name; nothing happens (nil) for a name that holds nothing.
    func remove(_ name: PasteboardName) throws(PasteboardError) -> Change? {
        var entry = entry(name)
        guard entry.isListed else { return nil }
        entry.items = []
        entry.isListed = false
        Self.resetHandling(&entry)
        return try commit(name, entry, removed: true)
    }

    private func check(_ item: Item, index: Int) throws(PasteboardError) {
        guard !item.representations.isEmpty else {
            throw .invalidArgument("item \(index) has no types; every item needs at least one")
        }
        if UInt64(item.representations.count) > limits.maxTypesPerItem {
            throw .tooLarge("item \(index) has \(item.representations.count) types; the limit is \(limits.maxTypesPerItem) (max-types-per-item)")
        }
        // Items have a few types: comparing each with those before it beats hashing them.
        let types = item.types
        for (position, type) in types.enumerated() where types[..<position].contains(type) {
            throw .invalidArgument("item \(index) lists \(type) twice; give each type once")
        }
        if item.byteCount > limits.maxItemBytes {
            throw .tooLarge("item \(index) holds \(item.byteCount) bytes; the limit is \(limits.maxItemBytes) (max-item-bytes)")
        }
    }

    /// Makes `proposed` the contents of `name` (`old`, when the caller has it already).
    func commit(_ name: PasteboardName, _ proposed: PasteboardEntry, replacing old: PasteboardEntry? = nil, removed: Bool = false) throws(PasteboardError) -> Change {
        let old = old ?? entry(name)
        var entry = proposed
        entry.count += 1
        entry.changedAt = Self.nowMilliseconds()
        let change = Self.change(name, entry, after: old, removed: removed, limits)
        entry = change.entry
        if batch != nil {
            batch!.stage(change, replacing: committedEntry(name))
        } else {
            do {
                try save([change])
            } catch {
                throw saveFailed(error, names: [name])
            }
            entries.withLock { $0[name] = entry }
        }
        listedCount += (entry.isListed ? 1 : 0) - (old.isListed ? 1 : 0)
        scheduleExpiry(name, at: entry.expiresAt)
        return Change(name: name, count: entry.count, types: removed ? [] : entry.announcedTypes, removed: removed, relisted: entry.isListed != old.isListed)
    }

    /// `entry` (a new change of `name`) as the store saves it: with the history it has after
    /// `old`, which enters it unless concealed, transient or written to expire, and the counts
    /// it drops. A `Remove` drops the whole history.
    static func change(_ name: PasteboardName, _ entry: PasteboardEntry, after old: PasteboardEntry, removed: Bool, _ limits: Limits) -> Store.Change {
        var entry = entry
        var keepsPrevious = false
        var pruned: [UInt64]
        if removed {
            entry.history = []
            pruned = []
        } else if old.entersHistory {
            (entry.history, pruned) = history(entry.history, adding: Generation(count: old.count, writtenAt: old.changedAt, items: old.items), before: entry, limits)
            // Unless it alone is over the limits, and went at once.
            keepsPrevious = !entry.history.isEmpty
        } else {
            pruned = trimHistory(&entry, limits)
        }
        // `old` is named, not taken for `entry.count - 1`: another server's change taken in may
        // follow it with a gap (the changes between were not kept here).
        return Store.Change(name: name, entry: entry, replaced: old.count, keepsPrevious: keepsPrevious, pruned: pruned)
    }

    func saveFailed(_ error: any Error, names: some Sequence<PasteboardName>) -> PasteboardError {
        if let error = error as? PasteboardError { return error }
        if let error = error as? SharedStoreError {
            if case .raced(let name) = error {
                lastSaveRaced = true
                return .conflict("another server changed '\(name)' at the same moment; read it again and retry")
            }
            if case .quota(let message) = error { return .quotaExceeded(message) }
            logger.error("store: could not save \(names.map { "'\($0)'" }.joined(separator: ", ")): \(error)")
            return .quotaExceeded("the server could not save the change: \(error); it heals by itself once the database answers again")
        }
        logger.error("store: could not save \(names.map { "'\($0)'" }.joined(separator: ", ")): \(error)")
        if error is StoreMovedError { return .quotaExceeded("the server could not save the change: \(error)") }
        let full = (error as? DatabaseError)?.resultCode == .SQLITE_FULL
        return .quotaExceeded("the server could not save the change (\(error)); \(full ? "free some disk space and try again" : "try again")")
    }

    /// `history` with `newest` in front, cut to what `history-depth` and `max-history-bytes`
    /// allow (``fitting(_:after:current:_:)``), and the counts of the generations dropped, oldest first,
    /// as ``trimHistory(_:_:)`` gives them.
    ///
    /// Built as one new array: `history` is shared with the committed entry, so inserting into
    /// it would first copy it whole, only to drop its oldest generation again.
    private static func history(_ history: [Generation], adding newest: Generation, before current: PasteboardEntry, _ limits: Limits) -> (history: [Generation], pruned: [UInt64]) {
        let kept = fitting(history, after: newest, current: current, limits)
        guard kept > 0 else { return ([], history.reversed().map(\.count) + [newest.count]) }
        // Copied as a block (appending a slice copies element by element, through the
        // generic value witness: a tenth of a write's time with a full history).
        let result = [Generation](unsafeUninitializedCapacity: kept) { buffer, initialized in
            buffer.initializeElement(at: 0, to: newest)
            if kept > 1 {
                history.withUnsafeBufferPointer { earlier in
                    (buffer.baseAddress! + 1).initialize(from: earlier.baseAddress!, count: kept - 1)
                }
            }
            initialized = kept
        }
        return (result, history.dropFirst(kept - 1).reversed().map(\.count))
    }

    /// Drops the oldest generations until the history fits `history-depth` and
    /// `max-history-bytes`; returns their counts, oldest first.
    private static func trimHistory(_ entry: inout PasteboardEntry, _ limits: Limits) -> [UInt64] {
        let kept = fitting(entry.history, after: nil, current: entry, limits)
        let pruned = entry.history.dropFirst(kept).reversed().map(\.count)
        entry.history.removeLast(entry.history.count - kept)
        return pruned
    }

    /// How many generations, newest first (`newest`, then `history`), fit `history-depth` and
    /// `max-history-bytes`: the oldest go first, so what fits is the longest such run from the
    /// front.
    ///
    /// `history-depth` counts the entries of `History`, the `current` contents among them when
    /// they appear there: so one fewer earlier generation is kept then. Contents that do not
    /// appear (concealed, transient, cleared) leave the whole depth to earlier generations, so
    /// that a password copied over three texts still leaves `History` its full length.
    private static func fitting(_ history: [Generation], after newest: Generation?, current: PasteboardEntry, _ limits: Limits) -> Int {
        var kept = 0, bytes: UInt64 = 0
        let shown: UInt64 = current.entersHistory ? 1 : 0
        let earlier = limits.historyDepth > shown ? limits.historyDepth - shown : 0
        func keeps(_ generation: Generation) -> Bool {
            guard UInt64(kept) < earlier, bytes + generation.byteCount <= limits.maxHistoryBytes else { return false }
            kept += 1
            bytes += generation.byteCount
            return true
        }
        if let newest, !keeps(newest) { return 0 }
        for generation in history {
            guard keeps(generation) else { break }
        }
        return kept
    }

    static func nowMilliseconds() -> UInt64 {
        var spec = timespec()
        clock_gettime(CLOCK_REALTIME, &spec)
        return UInt64(spec.tv_sec) * 1000 + UInt64(spec.tv_nsec) / 1_000_000
    }

    /// `types` for an error message: the first ten, and how many more, so that a request of
    /// thousands of types does not come back as a message of megabytes.
    static func list(_ types: [PasteboardType]) -> String {
        guard !types.isEmpty else { return "nothing" }
        let shown = types.prefix(10).map(\.rawValue).joined(separator: ", ")
        return types.count > 10 ? "\(shown) and \(types.count - 10) more" : shown
    }
}
