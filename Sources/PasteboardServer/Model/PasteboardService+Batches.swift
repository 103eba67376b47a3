import Dispatch
import PasteboardModel

/// Batches: the changes of calls that arrived together, committed in one transaction.
extension PasteboardService {
    // MARK: Batches (on `queue`)

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
            try store.save(batch.saves)
        } catch {
            listedCount = batch.listedBefore
            for (name, entry) in batch.before {
                scheduleExpiry(name, at: entry.expiresAt)
            }
            return saveFailed(error, names: batch.staged.keys)
        }
        entries.withLock { entries in
            for (name, entry) in batch.staged { entries[name] = entry }
        }
        retire(Array(batch.before.values))
        return nil
    }

    /// Lets go of contents a change replaced on a background queue. When they held the last
    /// reference to a blob file, that is where the file is deleted: a large one takes tens of
    /// milliseconds (a gigabyte, 60–90 ms), which should delay neither the reply nor the calls
    /// queued behind it. Should the server die first, the file is an orphan, deleted at the
    /// next start.
    func retire(_ replaced: [PasteboardEntry]) {
        func holdsFiles(_ items: [Item]) -> Bool {
            items.contains { $0.representations.contains { if case .file = $0.payload { true } else { false } } }
        }
        guard replaced.contains(where: { holdsFiles($0.items) || $0.history.contains { holdsFiles($0.items) } }) else { return }
        Self.retirement.async { withExtendedLifetime(replaced) {} }
    }

    static let retirement = DispatchQueue(label: "org.pasteboardd.retired", qos: .utility)
}
