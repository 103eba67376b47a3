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
        if entry.items.contains(where: promise.isHeld(by:)) { return !entry.isVolatile }
        // The history never holds concealed or transient contents.
        return entry.history.contains { $0.items.contains(where: promise.isHeld(by:)) }
    }

    /// Admits `size` bytes provided for `promise`, or refuses them when they would make its item
    /// or its pasteboard larger than `max-item-bytes` or `max-pasteboard-bytes` allow written
    /// data to be: counted with the data already here for the contents holding the promise (the
    /// current ones, else the generation of the history), and with what was admitted for their
    /// other promises and is on its way; a promise not yet provided counts nothing. Checked and
    /// recorded in one step, so that two types of one item provided at once cannot both pass.
    /// The admission lasts until the promise is resolved, or ``withdrawAdmission(of:)``. Safe
    /// from any thread.
    func admitProvided(_ promise: Promise, size: UInt64) throws(PasteboardError) {
        guard let entry = entries.withLock({ $0[promise.name] }) else { return }
        let items = entry.items.contains(where: promise.isHeld(by:)) ? entry.items : entry.history.first { $0.items.contains(where: promise.isHeld(by:)) }?.items ?? []
        guard let index = items.firstIndex(where: promise.isHeld(by:)) else { return }
        // Without the promise's own data, which may be counted already (a retry).
        func others(_ item: Item) -> UInt64 {
            item.representations.reduce(0) { sum, representation in
                guard case .promised(let held) = representation.payload else { return sum + representation.size }
                return held === promise ? sum : sum + (held.countedSize ?? 0)
            }
        }
        try admission.withLock { _ throws(PasteboardError) in
            let item = others(items[index]) + size
            if item > limits.maxItemBytes {
                throw .providerFailed("the \(promise.type) data provided for '\(promise.name)' would make item \(index) hold \(item) bytes, over \(limits.maxItemBytes) (max-item-bytes)")
            }
            let total = items.reduce(size) { $0 + others($1) }
            if total > limits.maxPasteboardBytes {
                throw .providerFailed("the \(promise.type) data provided for '\(promise.name)' would make it hold \(total) bytes, over \(limits.maxPasteboardBytes) (max-pasteboard-bytes)")
            }
            promise.setAdmitted(size)
        }
    }

    /// Withdraws what was admitted for `promise`: its data was refused, or never came.
    func withdrawAdmission(of promise: Promise) {
        promise.setAdmitted(nil)
    }

    /// Stores `payload`, provided for `promise` (inline, or in a blob file of the store), in
    /// every row of the promise; on the queue, after the changes the commit log holds, and
    /// returns once it is stored.
    ///
    /// From ``Promise/keep(_:)`` on, a change's rows hold the data rather than the promise; the
    /// log is applied after that, so that no row written before it still holds the promise,
    /// and then those rows are turned.
    func keepProvided(_ promise: Promise, _ payload: Payload) async {
        guard let data = ChangeRows.Representation.Data(stored: payload) else { return }
        // Returns once stored, so that the reader it is for, and every reader waiting with it,
        // is answered only then: a crash after an answer finds the data kept.
        await withCheckedContinuation { (stored: CheckedContinuation<Void, Never>) in
            queue.async { [self] in
                // Nobody is answered once the server is stopping; the next start asks the
                // writer again, as after any restart.
                guard !isStopping else { return stored.resume() }
                // On the queue, before the log is applied: see above.
                promise.keep(payload)
                saveLoggedAside()
                do {
                    try store.keepProvided(promise, data: data, size: payload.size)
                } catch {
                    // The promise's own rows stay promises: after a restart the writer is asked
                    // again, as before the data was kept.
                    logger.error("store: could not keep the \(promise.type) data provided for '\(promise.name)': \(error)")
                }
                stored.resume()
            }
        }
    }
}
