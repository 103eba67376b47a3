import Dispatch
import GRDB
import Synchronization

/// Copies the write-ahead log back into the database file on a background thread.
///
/// SQLite checkpoints on its own every 1,000 pages, inside the commit that crosses the mark, and
/// a checkpoint under `synchronous=NORMAL` syncs the disk twice: that commit, and with it the
/// reply of whatever call made it, would wait on the disk. The store's connection therefore
/// never checkpoints (`wal_autocheckpoint=0`); this object does, on a connection of its own, a
/// `PASSIVE` checkpoint that runs beside the writer without stopping it. The durability rules
/// are unchanged: the log is synced before and the database after each checkpoint.
final class Checkpointer: Sendable {
    /// About how many pages of log to let through between checkpoints (SQLite's own default).
    static let pagesBetweenCheckpoints = 1000

    private let database: DatabaseQueue
    private let queue = DispatchQueue(label: "org.pasteboardd.checkpoint", qos: .utility)
    /// Pages written since the last checkpoint was started (an estimate from the writer).
    private let pages = Atomic<Int>(0)
    private let running = Atomic<Bool>(false)

    init(path: String) throws {
        var configuration = Configuration()
        configuration.prepareDatabase { db in
            try db.execute(sql: "PRAGMA synchronous = NORMAL")
        }
        database = try DatabaseQueue(path: path, configuration: configuration)
    }

    /// Told after each commit, with about how many pages it added to the log.
    func committed(estimatedPages: Int) {
        let total = pages.add(estimatedPages, ordering: .relaxed).newValue
        guard total >= Self.pagesBetweenCheckpoints,
              running.compareExchange(expected: false, desired: true, ordering: .acquiringAndReleasing).exchanged
        else { return }
        pages.store(0, ordering: .relaxed)
        queue.async { [self] in
            // A failed checkpoint (the disk is full, say) is tried again after the next pages.
            _ = try? database.writeWithoutTransaction { db in try db.checkpoint(.passive) }
            running.store(false, ordering: .releasing)
        }
    }

    /// Waits for a checkpoint in progress, then runs one more (at shutdown, so the next start
    /// has little log to read).
    func finish() {
        queue.sync {
            _ = try? database.writeWithoutTransaction { db in try db.checkpoint(.passive) }
        }
    }
}
