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
        let timer = DispatchWorkItem { [self] in turn.withLock { _ in expire(name, at: expiresAt) } }
        expiryTimers[name] = (expiresAt, timer)
        let now = Self.nowMilliseconds()
        // A far expiry wakes up once a day and goes back to sleep.
        let delay = expiresAt > now ? Int(min(expiresAt - now, 86_400_000)) : 0
        queue.asyncAfter(deadline: .now() + .milliseconds(delay), execute: timer)
    }

    private func expire(_ name: PasteboardName, at expiresAt: UInt64) {
        expiryTimers[name] = nil
        // A later write or clear has replaced the contents this expiry was for.
        guard let entry = entries.withLock({ $0[name] }), entry.expiresAt == expiresAt else { return }
        guard Self.nowMilliseconds() >= expiresAt else { return scheduleExpiry(name, at: expiresAt) }
        do {
            var cleared = entry
            cleared.items = []
            Self.resetHandling(&cleared)
            onChange?(try commit(name, cleared))
        } catch {
            // Contents past their time must not stay: try again in a second.
            logger.error("could not clear '\(name)' on expiry, trying again in 1 s: \(error)")
            let retry = DispatchWorkItem { [self] in turn.withLock { _ in expire(name, at: expiresAt) } }
            expiryTimers[name] = (expiresAt, retry)
            queue.asyncAfter(deadline: .now() + .seconds(1), execute: retry)
        }
    }

    static func resetHandling(_ entry: inout PasteboardEntry) {
        entry.isConcealed = false
        entry.isVolatile = false
        entry.ownerPID = nil
        entry.expiresAt = nil
    }
}
