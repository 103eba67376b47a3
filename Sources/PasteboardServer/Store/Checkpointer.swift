import Dispatch
import GRDB
import GRDBSQLite
import Synchronization

/// Copies the write-ahead log back into the database file on a background thread.
///
/// SQLite checkpoints on its own every 1,000 pages, inside the commit that crosses the mark, and
/// a checkpoint under `synchronous=NORMAL` syncs the disk twice: that commit, and with it the
/// reply of whatever call made it, would wait on the disk. The store's connection therefore
/// never checkpoints (`wal_autocheckpoint=0`); this object does, on a connection of its own.
/// The durability rules are unchanged: the log is synced before and the database after each
/// checkpoint.
///
/// A round first runs `PASSIVE` passes, which copy the log beside the writer without stopping
/// it. That is not enough: under a steady stream of writes the log is never found entirely
/// copied at the start of a write, which is when SQLite would start it over, so it would grow
/// without end. The round therefore ends with a `RESTART` checkpoint, which holds writes back
/// (the store's connection waits for it) only while it copies the few frames written since
/// the last pass, and starts the log over.
final class Checkpointer: Sendable {
    /// About how many pages of log to let through between checkpoints (SQLite's own default).
    static let pagesBetweenCheckpoints = 1000
    /// `PASSIVE` passes per round, at most.
    static let passiveBeforeRestart = 3

    /// A plain SQLite connection, used only on `queue`.
    private nonisolated(unsafe) let connection: OpaquePointer
    private let queue = DispatchQueue(label: "org.pasteboardd.checkpoint", qos: .utility)
    /// Pages written since the last round was started (an estimate from the writer).
    private let pages = Atomic<Int>(0)
    private let running = Atomic<Bool>(false)

    /// Opens a connection of its own to the database at `path`, which must be in WAL mode.
    init(path: String) throws {
        var connection: OpaquePointer?
        let code = sqlite3_open_v2(path, &connection, SQLITE_OPEN_READWRITE | SQLITE_OPEN_NOMUTEX, nil)
        guard code == SQLITE_OK, let connection else {
            sqlite3_close(connection)
            throw DatabaseError(resultCode: ResultCode(rawValue: code), message: "cannot open \(path) to checkpoint it")
        }
        self.connection = connection
        // Syncs as the store's own connection does; and a statement reads the header, without
        // which the connection does not know the database is in WAL mode and checkpoints nothing.
        sqlite3_exec(connection, "PRAGMA synchronous = NORMAL; SELECT count(*) FROM sqlite_master", nil, nil, nil)
        // A RESTART waits this long for a commit in progress to finish.
        sqlite3_busy_timeout(connection, 2000)
    }

    deinit {
        sqlite3_close(connection)
    }

    /// One checkpoint: the frames in the log and how many of them are now copied, or nil when
    /// SQLite refused (busy past the timeout, or a full disk; the next round tries again).
    private func checkpoint(_ mode: Int32 = SQLITE_CHECKPOINT_PASSIVE) -> (walFrameCount: Int32, checkpointedFrameCount: Int32)? {
        var frames: Int32 = 0, copied: Int32 = 0
        guard sqlite3_wal_checkpoint_v2(connection, nil, mode, &frames, &copied) == SQLITE_OK else { return nil }
        return (frames, copied)
    }

    /// Told after each commit, with about how many pages it added to the log.
    func committed(estimatedPages: Int) {
        let total = pages.add(estimatedPages, ordering: .relaxed).newValue
        guard total >= Self.pagesBetweenCheckpoints,
              running.compareExchange(expected: false, desired: true, ordering: .acquiringAndReleasing).exchanged
        else { return }
        pages.store(0, ordering: .relaxed)
        queue.async { [self] in
            for _ in 0..<Self.passiveBeforeRestart {
                guard let log = checkpoint(), log.checkpointedFrameCount < log.walFrameCount else { break }
            }
            _ = checkpoint(SQLITE_CHECKPOINT_RESTART)
            running.store(false, ordering: .releasing)
        }
    }

    /// Waits for a round in progress, then copies the whole log and empties it (at shutdown,
    /// when nothing writes any more, so that the next start has no log to read).
    func finish() {
        queue.sync {
            _ = checkpoint(SQLITE_CHECKPOINT_TRUNCATE)
        }
    }
}
