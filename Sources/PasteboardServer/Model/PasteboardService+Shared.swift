import Dispatch
import PasteboardModel

/// Changes other servers made, taken in from the shared store (on `queue`, holding the turn).
extension PasteboardService {

    /// Holds `name` in the shared store until the change about to be made is saved (or
    /// ``releaseShared()``), and takes in a newer change made elsewhere first, announced through
    /// ``onChange``: the change then builds on the latest contents, and no other server's can
    /// slip in between.
    func lockShared(_ name: PasteboardName) {
        guard let shared else { return }
        let store = shared.store
        do {
            let count = try shared.run { () throws(SharedStoreError) in try await store.lock(name.rawValue) }
            guard let count else { return }
            takeIn(name, upTo: count, heardAt: .now)
        } catch {
            // The change then fails to save, saying why.
        }
    }

    /// Lets go of what ``lockShared(_:)`` held, when no change was saved.
    func releaseShared() {
        guard let shared else { return }
        let store = shared.store
        _ = try? shared.run { () throws(SharedStoreError) in await store.release() }
    }

    /// Takes in every pasteboard whose count moved in the shared store: at start, and after
    /// listening to it again (what changed meanwhile was not announced), at `heardAt`.
    ///
    /// A catch-up that fails is tried again every second, up to a minute: listening comes
    /// back on a new connection as soon as the database does, while the first call on the
    /// service queue's connection may still meet the old one, cut; left to the retries of each
    /// name (which wait twice as long after each failure, up to half a minute), this server
    /// and its watchers would stay that long behind the others. (Past the minute, the next
    /// time listening comes back tries again.)
    func catchUpShared(heardAt: ContinuousClock.Instant, attempt: Int = 0) {
        guard let shared else { return }
        let store = shared.store
        do {
            let counts = try shared.run(heardAt: heardAt) { () throws(SharedStoreError) in try await store.counts() }
            if attempt > 0 { logger.notice("store: caught up with \(store.location)") }
            sharedCatchUpPending = false
            let atStart = !sharedCaughtUpAtStart
            for (raw, count) in counts.sorted(by: { $0.key < $1.key }) {
                guard let name = try? PasteboardName(validating: raw) else { continue }
                takeIn(name, upTo: count, heardAt: heardAt, atStart: atStart)
            }
            sharedCaughtUpAtStart = true
        } catch {
            if attempt == 0 {
                // Another catch-up is trying already.
                guard !sharedCatchUpPending else { return }
                logger.warning("store: could not catch up with \(store.location): \(error); trying again every second")
            }
            guard attempt < 60 else {
                sharedCatchUpPending = false
                return
            }
            sharedCatchUpPending = true
            queue.asyncAfter(deadline: .now() + .seconds(1)) { [self] in
                turn.withLock { _ in catchUpShared(heardAt: .now, attempt: attempt + 1) }
            }
        }
    }

    /// Another server changed `name` to `count`: that change is taken in (announced with its
    /// own count and types, so that watchers here see each change), and any before it this
    /// server missed, unless it has them already. `heardAt`: when the notification arrived.
    func sharedChanged(_ name: PasteboardName, count: UInt64, heardAt: ContinuousClock.Instant) {
        takeIn(name, upTo: count, heardAt: heardAt)
    }

    /// Takes in each change of `name` after this server's own count up to `count`, in order,
    /// each announced with its own count and types: those the database keeps (the last
    /// ``SharedStore/keptChanges`` of a name, none before its last `Remove`), else the latest
    /// alone, and the others between them as the database recorded their announcements.
    /// `atStart`: the catch-up at start, when a name this server never had is taken in
    /// without announcing every change it ever had (a new server on an old database would
    /// otherwise send thousands of `Changed` nobody was there to miss). After the database was
    /// away, a name made meanwhile is announced change by change, as any other: this server's
    /// watchers were there all along.
    private func takeIn(_ name: PasteboardName, upTo count: UInt64, heardAt: ContinuousClock.Instant, atStart: Bool = false) {
        guard let shared else { return }
        let local = entry(name).count
        guard count > local else { return }
        let store = shared.store
        // Only a gap needs the list: the next change alone is taken in at once.
        let kept = count == local + 1 ? [count] : (try? shared.run(heardAt: heardAt) { () throws(SharedStoreError) in
            try await store.changes(of: name.rawValue, after: local)
        }) ?? []
        for missed in kept where missed <= count && missed > entry(name).count {
            takeIn(name, count: missed, heardAt: heardAt, announcingSkipped: !(atStart && local == 0))
        }
        if count > entry(name).count { takeIn(name, count: count, heardAt: heardAt, announcingSkipped: !(atStart && local == 0)) }
    }

    /// Loads `name` from the shared store (as of change `count`; nil: its latest) and makes it
    /// the contents here.
    ///
    /// The changes between this server's count and the one loaded, whose contents it never
    /// had (replaced, or dropped by a `Remove`, before it read them), are announced first,
    /// each with the count and types the database recorded for it: every change is announced
    /// once, in order, on every server.
    private func takeIn(_ name: PasteboardName, count: UInt64?, heardAt: ContinuousClock.Instant, announcingSkipped: Bool) {
        guard let shared else { return }
        let store = shared.store
        do {
            guard let row = try shared.run(heardAt: heardAt, { () throws(SharedStoreError) in try await store.load(name.rawValue, count: count) }) else { return }
            let old = entry(name)
            var skipped: [SharedStore.Announcement] = []
            if announcingSkipped, row.count > old.count + 1 {
                skipped = (try? shared.run(heardAt: heardAt) { () throws(SharedStoreError) in
                    try await store.announcements(of: name.rawValue, after: old.count, before: row.count)
                }) ?? []
            }
            let remote = try shared.entry(from: row, payloads: payloads.volatile(false))
            guard let change = try adopt(name, remote) else { return }
            // Each is a `Remove` or not after the change before it, which may be one announced here.
            var listed = old.isListed
            for announcement in skipped {
                let types = announcement.types.compactMap { try? PasteboardType(validating: $0) }
                onChange?(Change(name: name, count: announcement.count, types: types, listed: announcement.listed, after: listed))
                listed = announcement.listed
            }
            onChange?(skipped.isEmpty ? change : Change(name: name, count: change.count, types: change.types, listed: row.listed, after: listed))
            sharedRetryAttempts[name] = nil
        } catch {
            logger.warning("store: could not read '\(name)' from \(store.location): \(error)")
            retryTakeIn(name, heardAt: heardAt)
        }
    }

    /// Tries again, a moment later, to take in what another server changed and this one could
    /// not read (the database was away, or its connection was cut): left alone, this server
    /// would stay behind, and its watchers unaware, until the next change of `name`. One retry
    /// at a time per name, each failure in a row waiting twice as long, up to half a minute.
    private func retryTakeIn(_ name: PasteboardName, heardAt: ContinuousClock.Instant) {
        guard sharedRetriesPending.insert(name).inserted else { return }
        let attempt = sharedRetryAttempts[name, default: 0]
        sharedRetryAttempts[name] = attempt + 1
        let delay = min(Self.sharedRetryMilliseconds << min(attempt, 6), 30_000)
        queue.asyncAfter(deadline: .now() + .milliseconds(delay)) { [self] in
            turn.withLock { _ in
                sharedRetriesPending.remove(name)
                guard let shared else { return }
                let store = shared.store
                guard let latest = try? shared.run(heardAt: heardAt, { () throws(SharedStoreError) in try await store.count(of: name.rawValue) }) else {
                    return retryTakeIn(name, heardAt: heardAt)
                }
                guard latest > entry(name).count else {
                    sharedRetryAttempts[name] = nil
                    return
                }
                takeIn(name, upTo: latest, heardAt: heardAt)
            }
        }
    }

    /// How long after a failed read of another server's change it is first tried again.
    static let sharedRetryMilliseconds = 500

    /// Makes `remote` (another server's change, at its own count) the contents of `name`, the
    /// current contents entering the history as a local change's would; saved here without
    /// going back to the shared store. Nil when this server has that change already.
    func adopt(_ name: PasteboardName, _ remote: PasteboardEntry) throws -> Change? {
        let old = entry(name)
        guard remote.count > old.count else { return nil }
        var proposed = remote
        proposed.history = old.history
        let change = Self.change(name, proposed, after: old, removed: !remote.isListed, limits)
        let entry = change.entry
        try store.save([change])
        entries.withLock { $0[name] = entry }
        listedCount += (entry.isListed ? 1 : 0) - (old.isListed ? 1 : 0)
        scheduleExpiry(name, at: entry.expiresAt)
        return Change(name: name, count: entry.count, types: entry.announcedTypes, listed: entry.isListed, after: old.isListed)
    }
}
