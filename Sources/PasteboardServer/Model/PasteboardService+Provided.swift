import Foundation
import PasteboardModel

/// Promised data, once provided, kept as the contents it stands for: it reaches the store like
/// any written data, so that it is served after a restart too, the writer gone or not.
extension PasteboardService {
    /// Whether what `promise`'s writer provides may be stored: the promise is still part of
    /// the contents (current or in the history) and those are neither concealed nor transient
    /// (whose data never reaches the disk); the store is not shared with other servers (whose
    /// database holds promises its own way). Safe from any thread.
    func mayKeep(_ promise: Promise) -> Bool {
        guard shared == nil else { return false }
        guard let entry = entries.withLock({ $0[promise.name] }) else { return false }
        func holds(_ items: [Item]) -> Bool {
            items.contains { item in
                item.representations.contains { if case .promised(let held) = $0.payload { held === promise } else { false } }
            }
        }
        if holds(entry.items) { return !entry.isVolatile }
        // The history never holds concealed or transient contents.
        return entry.history.contains { holds($0.items) }
    }

    /// Stores `payload`, provided for `promise` (inline, or in a blob file of the store), in
    /// every row of the promise; on the queue, after the changes the commit log holds.
    ///
    /// From ``Promise/keep(_:)`` on, a change's rows hold the data rather than the promise; the
    /// log is applied after that, so that no row written before it still holds the promise,
    /// and then those rows are turned.
    func keepProvided(_ promise: Promise, _ payload: Payload) {
        guard let data = ChangeRows.Representation.Data(stored: payload) else { return }
        promise.keep(payload)
        queue.async { [self] in
            saveLoggedAside()
            do {
                try store.keepProvided(promise, data: data, size: payload.size)
            } catch {
                // The promise's own rows stay promises: after a restart the writer is asked
                // again, as before the data was kept.
                logger.error("store: could not keep the \(promise.type) data provided for '\(promise.name)': \(error)")
            }
        }
    }
}
