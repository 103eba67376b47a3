import Dispatch
import PasteboardModel

/// Batches: the changes of calls that arrived together, committed in one transaction.
extension PasteboardService {
    // MARK: Batches (holding the turn)

    /// From now until ``commitBatch()``, changes are staged: the queue sees them, the store and
    /// the bus thread do not yet.
    func beginBatch() {
        precondition(batch == nil, "a batch is already open")
        batch = ChangeBatch(listedCount: listedCount)
    }

    /// Commits the staged changes in one transaction and publishes them. If the store refuses,
    /// every name is put back as it was and the error is returned: none of the batch happened.
    func commitBatch() -> PasteboardError? {
        guard let batch else { return nil }
        self.batch = nil
        guard !batch.isEmpty else { return nil }
        do {
            try save(batch.saves)
        } catch {
            putBack(batch)
            // A database that refuses for a cause that puts the log in doubt too: small writes
            // must not be answered from the log either, until a save succeeds.
            store.health.databaseFailed(error)
            return saveFailed(error, names: batch.staged.keys)
        }
        publish(batch)
        return nil
    }

    /// Records the staged changes in the store's commit log and publishes them, for a write
    /// answered on the bus thread: as durable as committed, without waiting for the database.
    /// The queue applies them to the database shortly after (``saveLoggedAside()``).
    ///
    /// False when the log cannot take them (full, or the database is failing and the log has
    /// filled): the names are put back, and the call should take the queue instead.
    func logBatch() -> Bool {
        guard let batch else { return true }
        self.batch = nil
        guard !batch.isEmpty else { return true }
        guard store.record(batch.saves) else {
            putBack(batch)
            return false
        }
        publish(batch)
        // Let go once the database no longer refers to them.
        loggedReplaced += batch.before.values
        scheduleLogSave(after: .milliseconds(Self.logSaveDelayMilliseconds))
        return true
    }

    private func scheduleLogSave(after delay: DispatchTimeInterval) {
        guard !logSaveScheduled else { return }
        logSaveScheduled = true
        queue.asyncAfter(deadline: .now() + delay) { [self] in
            turn.withLock { _ in logSaveScheduled = false }
            saveLoggedAside()
        }
    }

    /// How long recorded changes wait for the database, so that a burst of them shares one
    /// transaction.
    static let logSaveDelayMilliseconds = 100

    /// Applies the changes recorded in the commit log to the database, on `queue`, holding the
    /// turn only to take them and to finish: the bus thread goes on recording small writes
    /// while the transaction runs (or waits, when another process holds the database).
    ///
    /// Should the database refuse, the changes go back in front of those recorded meanwhile,
    /// durable in the log as before, and this is tried again in a second; every change that
    /// takes the queue meanwhile waits for the database, and fails if it cannot be saved. When
    /// the refusal puts the log itself in doubt (a read-only file system, the store deleted),
    /// the log takes no more changes until a save succeeds (``StoreHealth``): small
    /// writes then take the queue too, and fail, rather than be answered and lost.
    func saveLoggedAside() {
        let (rows, replaced) = turn.withLock { _ in
            defer { loggedReplaced = [] }
            return (store.takeLogged(), loggedReplaced)
        }
        guard !rows.isEmpty else { return }
        do {
            try store.apply(rows)
        } catch {
            turn.withLock { _ in
                store.putBack(rows, failedWith: error)
                loggedReplaced = replaced + loggedReplaced
                if logSaveRetries.failed("\(error)") {
                    logger.error("store: could not apply the commit log to the database, trying again every second\(logSaveRetries.repeats): \(error)")
                }
                scheduleLogSave(after: .seconds(1))
            }
            return
        }
        turn.withLock { _ in
            store.logApplied()
            let failures = logSaveRetries.succeeded()
            if failures > 0 { logger.notice("store: the commit log is saved to the database again, after \(failures) failed attempt(s)") }
        }
        // `replaced` goes here: the database no longer refers to what it held.
    }

    /// Saves `changes`, after those the commit log holds, in one transaction; then lets go of
    /// what the logged ones replaced.
    func save(_ changes: [Store.Change]) throws {
        lastSaveRaced = false
        // The database shared with other servers first: it decides whether the change happens.
        try shared?.push(changes)
        try store.save(changes)
        loggedReplaced = []
    }

    private func publish(_ batch: ChangeBatch) {
        entries.withLock { entries in
            for (name, entry) in batch.staged { entries[name] = entry }
        }
    }

    private func putBack(_ batch: ChangeBatch) {
        listedCount = batch.listedBefore
        for (name, entry) in batch.before {
            scheduleExpiry(name, at: entry.expiresAt)
        }
    }

    /// Where blob files let go of are renamed to the spare or deleted, and memory blobs freed
    /// (see ``Blob``): whichever thread drops the last reference, that work is never done
    /// there. A large file takes tens of milliseconds to delete (a gigabyte, 60–90 ms), which
    /// should delay neither a reply nor the calls behind it. Should the server die first, the
    /// file is an orphan, deleted at the next start.
    static let retirement: DispatchQueue = {
        let queue = DispatchQueue(label: "org.pasteboardd.retired", qos: .utility)
        queue.setSpecific(key: onRetirement, value: true)
        return queue
    }()
    private static let onRetirement = DispatchSpecificKey<Bool>()

    /// Runs `body` on the retirement queue: at once when already there (a blob let go of by
    /// retired contents), else after what is queued, so that ``drainRetirement()`` covers it.
    static func whenRetiring(_ body: @escaping @Sendable () -> Void) {
        if DispatchQueue.getSpecific(key: onRetirement) == true {
            body()
        } else {
            retirement.async(execute: body)
        }
    }

    /// Waits until everything let go of so far has been dealt with (at shutdown, before the
    /// spare file is deleted).
    static func drainRetirement() {
        retirement.sync {}
    }
}
