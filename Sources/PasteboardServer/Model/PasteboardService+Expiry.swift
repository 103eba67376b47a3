import Dispatch
import PasteboardModel

/// Expiry: `expires-in-ms` clears the contents on time, as a change; overdue expiries clear
/// at start.
extension PasteboardService {
    // MARK: Expiry (on `queue`)

    /// Schedules the stored expiries (after a restart, overdue ones clear at once).
    func startExpiryTimers() {
        let expiries = entries.withLock { entries in entries.compactMap { name, entry in entry.expiresAt.map { (name, $0) } } }
        for (name, expiresAt) in expiries {
            scheduleExpiry(name, at: expiresAt)
        }
    }

    /// Keeps one timer per pasteboard, for its current expiry (none when `expiresAt` is nil).
    func scheduleExpiry(_ name: PasteboardName, at expiresAt: UInt64?) {
        if expiryTimers[name]?.at == expiresAt { return }
        expiryTimers.removeValue(forKey: name)?.timer.cancel()
        guard let expiresAt else { return }
        let now = Self.nowMilliseconds()
        // A far expiry wakes up once a day and goes back to sleep.
        startTimer(name, at: expiresAt, afterMilliseconds: expiresAt > now ? Int(min(expiresAt - now, 86_400_000)) : 0)
    }

    private func startTimer(_ name: PasteboardName, at expiresAt: UInt64, afterMilliseconds delay: Int) {
        let timer = DispatchWorkItem { [self] in turn.withLock { _ in expire(name, at: expiresAt) } }
        expiryTimers[name] = (expiresAt, timer)
        queue.asyncAfter(deadline: .now() + .milliseconds(delay), execute: timer)
    }

    private func expire(_ name: PasteboardName, at expiresAt: UInt64) {
        // Only this expiry's own timer is done: while this one waited for the turn, a write
        // (on the bus thread) may have set a newer one, which later changes must still cancel.
        if expiryTimers[name]?.at == expiresAt { expiryTimers[name] = nil }
        // Its `Changed` could not leave once the server is stopping: the next start clears
        // what expired meanwhile, and announces it.
        guard !isStopping else { return }
        // Another server may have cleared it (or written it anew) first.
        lockShared(name)
        defer { releaseShared() }
        // A later write or clear has replaced the contents this expiry was for.
        guard let entry = entries.withLock({ $0[name] }), entry.expiresAt == expiresAt else {
            expiryRetries[name] = nil
            return
        }
        guard Self.nowMilliseconds() >= expiresAt else { return scheduleExpiry(name, at: expiresAt) }
        do {
            var cleared = entry
            cleared.items = []
            Self.resetHandling(&cleared)
            onChange?(try commit(name, cleared))
        } catch {
            // Contents past their time must not stay: try again in a second. Concealed or
            // transient data goes at once all the same: it is in this server's memory only
            // (other servers of a shared store hold the pasteboard empty at this count
            // already), and a secret must not outlive its time because a database is away.
            if entry.isVolatile { entries.withLock { $0[name]?.items = [] } }
            var retries = expiryRetries[name] ?? RetryReport()
            if retries.failed("\(error)") {
                logger.error("could not clear '\(name)' on expiry, trying again every second\(retries.repeats): \(error)")
            }
            expiryRetries[name] = retries
            startTimer(name, at: expiresAt, afterMilliseconds: 1000)
            return
        }
        if let failures = expiryRetries.removeValue(forKey: name)?.failures {
            logger.notice("'\(name)' is cleared on expiry, after \(failures) failed attempt(s)")
        }
    }

    static func resetHandling(_ entry: inout PasteboardEntry) {
        entry.isConcealed = false
        entry.isVolatile = false
        entry.expiresAt = nil
    }
}
