import Foundation
import GRDB
import PasteboardModel
import Synchronization

/// The durable copy of every pasteboard: an SQLite database plus a folder of blob files.
///
/// SQLite (through GRDB) gives atomic, crash-safe commits: a transaction either happened or did
/// not, whatever moment the process is killed. The database runs in WAL mode with
/// `synchronous=NORMAL`: a committed transaction is in the operating system's hands before the
/// call returns, so it survives `kill -9` of the server; a power cut may lose the last
/// transactions but never leaves the database unreadable.
///
/// Payloads larger than ``Payload/inlineThreshold`` are files under `blobs/`, written in full
/// before the transaction that refers to them commits. A file no row refers to (left by a crash
/// between the two) is deleted at the next start.
///
/// Small changes can be answered before the database has them: they are recorded in the
/// ``CommitLog`` first, and the next ``save(_:)`` commits them ahead of its own changes.
///
/// Not thread-safe by itself: the holder of the ``PasteboardService``'s turn is its only user,
/// except that the service queue applies recorded changes (``apply(_:)``) without the turn, so
/// that small writes go on meanwhile: the database is only ever used on that queue.
final class Store {
    let directory: String
    let blobDirectory: String
    let database: DatabaseQueue
    let checkpointer: Checkpointer
    /// The last large blob file let go of, for the next large write to overwrite.
    let spare: SpareBlobFile
    /// Where an unreadable store was moved at start-up, for the log; nil when it opened.
    private(set) var quarantine: (folder: String, reason: String)?
    /// Where small changes are recorded before they are answered; nil when it could not be set
    /// up (every change then commits to the database before it is answered).
    let log: CommitLog?
    /// Changes recorded in the log and not yet in the database, in order.
    var logged: [ChangeRows] = []
    /// Whether the ``log`` may answer changes: shared with the ``PayloadWriter``, which writes
    /// blob files on any thread.
    let health = StoreHealth()
    /// How many changes a start took from the log, and what was wrong with it, for the log.
    var replayed = 0
    var replayProblem: String?
    /// Why there is no ``log``.
    private(set) var logProblem: String?
    /// The database file's device and inode when it was opened: SQLite in WAL mode goes on
    /// committing to a file deleted or moved under it, which no start would read again.
    private let databaseIdentity: (device: UInt64, inode: UInt64)?

    /// Opens the store in `directory`. A database SQLite cannot open is never wiped: it is
    /// moved, with its blob files, into a `corrupt-…` folder beside it (see ``quarantine``),
    /// and a new store starts in its place.
    init(directory: String) throws {
        self.directory = directory
        blobDirectory = directory + "/blobs"
        spare = SpareBlobFile(directory: directory + "/blobs")
        do {
            database = try Self.open(directory)
        } catch {
            let folder = try Self.moveAside(directory, blobDirectory: directory + "/blobs")
            quarantine = (folder, "\(error)")
            database = try Self.open(directory)
        }
        checkpointer = try Checkpointer(path: directory + "/pasteboards.sqlite")
        databaseIdentity = Self.identity(of: directory + "/pasteboards.sqlite")
        do {
            log = try CommitLog(path: directory + "/" + CommitLog.fileName)
        } catch {
            log = nil
            logProblem = "\(error)"
        }
        try replayLog()
        try forgetOwnersOfAnEarlierBoot()
    }

    /// Owner-only data is its writer process's, known by process id. After a reboot that id
    /// names another process, or none: data stored before it becomes nobody's to read (owner
    /// 0). The first start that keeps a boot id takes the stored data for this boot's.
    private func forgetOwnersOfAnEarlierBoot() throws {
        guard let boot = Self.bootID() else { return }
        try database.write { db in
            let stored = try String.fetchOne(db, sql: "SELECT value FROM meta WHERE key = 'boot_id'")
            guard stored != boot else { return }
            if stored != nil {
                try db.execute(sql: "UPDATE contents SET owner_pid = 0 WHERE owner_pid IS NOT NULL")
                try db.execute(sql: "UPDATE pasteboard SET owner_pid = 0 WHERE owner_pid IS NOT NULL")
            }
            try db.execute(sql: "INSERT OR REPLACE INTO meta (key, value) VALUES ('boot_id', ?)", arguments: [boot])
        }
    }

    /// This boot's id, which the kernel makes anew at every boot.
    static func bootID() -> String? {
        (try? String(contentsOfFile: "/proc/sys/kernel/random/boot_id", encoding: .utf8))?.trimmingCharacters(in: .whitespacesAndNewlines)
    }

    private static func open(_ directory: String) throws -> DatabaseQueue {
        try FileManager.default.createDirectory(atPath: directory + "/blobs", withIntermediateDirectories: true, attributes: [.posixPermissions: 0o700])
        var configuration = Configuration()
        // A commit waits while the ``Checkpointer`` starts the log over (a moment, once per
        // thousand pages or so) instead of failing.
        configuration.busyMode = .timeout(10)
        configuration.prepareDatabase { db in
            try db.execute(sql: "PRAGMA synchronous = NORMAL")
            // The ``Checkpointer`` checkpoints, off the thread that commits.
            try db.execute(sql: "PRAGMA wal_autocheckpoint = 0")
            // Once checkpointed, the log is cut back to this when it starts over.
            try db.execute(sql: "PRAGMA journal_size_limit = \(8 << 20)")
        }
        let database = try DatabaseQueue(path: directory + "/pasteboards.sqlite", configuration: configuration)
        try database.writeWithoutTransaction { db in
            _ = try String.fetchOne(db, sql: "PRAGMA journal_mode = WAL")
        }
        try migrator.migrate(database)
        return database
    }

    /// Moves the database files and the blob folder into a new `corrupt-<time>` folder.
    private static func moveAside(_ directory: String, blobDirectory: String) throws -> String {
        let folder = directory + "/corrupt-" + String(Int(Date().timeIntervalSince1970))
        try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true, attributes: [.posixPermissions: 0o700])
        for name in ["pasteboards.sqlite", "pasteboards.sqlite-wal", "pasteboards.sqlite-shm", CommitLog.fileName, "blobs"] {
            let path = directory + "/" + name
            if FileManager.default.fileExists(atPath: path) {
                try FileManager.default.moveItem(atPath: path, toPath: folder + "/" + name)
            }
        }
        return folder
    }

    private static var migrator: DatabaseMigrator {
        var migrator = DatabaseMigrator()
        migrator.registerMigration("v1") { db in
            try db.execute(sql: """
                CREATE TABLE pasteboard (
                    name TEXT PRIMARY KEY NOT NULL,
                    count INTEGER NOT NULL,
                    listed INTEGER NOT NULL,
                    changed_at INTEGER NOT NULL
                );
                CREATE TABLE representation (
                    pasteboard TEXT NOT NULL REFERENCES pasteboard(name) ON DELETE CASCADE,
                    item INTEGER NOT NULL,
                    position INTEGER NOT NULL,
                    type TEXT NOT NULL,
                    size INTEGER NOT NULL,
                    data BLOB,
                    blob TEXT,
                    PRIMARY KEY (pasteboard, item, position)
                );
                """)
        }
        migrator.registerMigration("v2: expiry and owner") { db in
            try db.execute(sql: """
                ALTER TABLE pasteboard ADD COLUMN expires_at INTEGER;
                ALTER TABLE pasteboard ADD COLUMN owner_pid INTEGER;
                """)
        }
        migrator.registerMigration("v3: history") { db in
            try db.execute(sql: """
                CREATE TABLE generation (
                    pasteboard TEXT NOT NULL REFERENCES pasteboard(name) ON DELETE CASCADE,
                    count INTEGER NOT NULL,
                    written_at INTEGER NOT NULL,
                    PRIMARY KEY (pasteboard, count)
                );
                CREATE TABLE generation_representation (
                    pasteboard TEXT NOT NULL,
                    count INTEGER NOT NULL,
                    item INTEGER NOT NULL,
                    position INTEGER NOT NULL,
                    type TEXT NOT NULL,
                    size INTEGER NOT NULL,
                    data BLOB,
                    blob TEXT,
                    PRIMARY KEY (pasteboard, count, item, position),
                    FOREIGN KEY (pasteboard, count) REFERENCES generation(pasteboard, count) ON DELETE CASCADE
                );
                """)
        }
        migrator.registerMigration("v4: volatile") { db in
            try db.execute(sql: "ALTER TABLE pasteboard ADD COLUMN volatile INTEGER NOT NULL DEFAULT 0")
        }
        migrator.registerMigration("v5: one contents table, without rowids") { db in
            // The rows of every generation live in one table under their change count, each
            // stamped with the time its generation was written: a write that pushes the
            // previous contents into the history leaves their rows where they are and adds
            // nothing. WITHOUT ROWID keeps each table in one b-tree, so a change touches two or
            // three pages where it touched eight.
            try db.execute(sql: """
                CREATE TABLE pasteboard_v5 (
                    name TEXT PRIMARY KEY NOT NULL,
                    count INTEGER NOT NULL,
                    listed INTEGER NOT NULL,
                    changed_at INTEGER NOT NULL,
                    expires_at INTEGER,
                    owner_pid INTEGER,
                    volatile INTEGER NOT NULL DEFAULT 0
                ) WITHOUT ROWID;
                INSERT INTO pasteboard_v5 SELECT name, count, listed, changed_at, expires_at, owner_pid, volatile FROM pasteboard;
                CREATE TABLE contents (
                    pasteboard TEXT NOT NULL,
                    count INTEGER NOT NULL,
                    item INTEGER NOT NULL,
                    position INTEGER NOT NULL,
                    type TEXT NOT NULL,
                    size INTEGER NOT NULL,
                    data BLOB,
                    blob TEXT,
                    written_at INTEGER NOT NULL,
                    PRIMARY KEY (pasteboard, count, item, position)
                ) WITHOUT ROWID;
                INSERT INTO contents
                    SELECT r.pasteboard, p.count, r.item, r.position, r.type, r.size, r.data, r.blob, p.changed_at
                    FROM representation r JOIN pasteboard p ON p.name = r.pasteboard;
                INSERT OR IGNORE INTO contents
                    SELECT r.pasteboard, r.count, r.item, r.position, r.type, r.size, r.data, r.blob, g.written_at
                    FROM generation_representation r JOIN generation g ON g.pasteboard = r.pasteboard AND g.count = r.count;
                DROP TABLE generation_representation;
                DROP TABLE representation;
                DROP TABLE generation;
                DROP TABLE pasteboard;
                ALTER TABLE pasteboard_v5 RENAME TO pasteboard;
                """)
        }
        migrator.registerMigration("v6: promises") { db in
            // A promise's row holds no data: the writer's unique name and what its
            // `WritePromised` gave it, so that a later run can still ask it.
            try db.execute(sql: """
                ALTER TABLE contents ADD COLUMN provider TEXT;
                ALTER TABLE contents ADD COLUMN promise_count INTEGER;
                ALTER TABLE contents ADD COLUMN promise_item INTEGER;
                """)
        }
        migrator.registerMigration("v7: owner per item") { db in
            // Each row carries the process that may read it, so that an owner-only generation
            // keeps its owner in the history. The pasteboard's owner_pid, which applied to the
            // contents at its count, is copied to those rows (only those of owner-only
            // contents are touched), and from now on holds the first owner of any current
            // item: a server of an earlier version reading the store keeps the whole
            // pasteboard private rather than opening it.
            try db.execute(sql: """
                ALTER TABLE contents ADD COLUMN owner_pid INTEGER;
                UPDATE contents SET owner_pid = (
                    SELECT p.owner_pid FROM pasteboard p WHERE p.name = contents.pasteboard AND p.count = contents.count)
                WHERE EXISTS (
                    SELECT 1 FROM pasteboard p
                    WHERE p.name = contents.pasteboard AND p.count = contents.count AND p.owner_pid IS NOT NULL);
                """)
        }
        migrator.registerMigration("v8: facts about the store") { db in
            try db.execute(sql: "CREATE TABLE meta (key TEXT PRIMARY KEY NOT NULL, value TEXT NOT NULL) WITHOUT ROWID")
        }
        return migrator
    }

    // MARK: Saving

    /// One pasteboard's new state, as ``save(_:)`` writes it.
    struct Change {
        let name: PasteboardName
        let entry: PasteboardEntry
        /// The change count of the contents replaced (0: none).
        let replaced: UInt64
        /// The previous contents became the newest history entry: their rows stay. When false,
        /// the previous contents' rows are deleted.
        var keepsPrevious = false
        /// The counts of history entries dropped.
        var pruned: [UInt64] = []
    }

    /// Commits one pasteboard's state, replacing contents that left no rows: concealed or
    /// transient ones, which vanished at a restart (the generation before them, which entered
    /// the history, keeps its rows).
    func save(_ name: PasteboardName, _ entry: PasteboardEntry) throws {
        try save([Change(name: name, entry: entry, replaced: 0)])
    }

    /// Commits several changes in one transaction: all of them, or none. Changes waiting in
    /// the ``CommitLog`` go first, in the same transaction; once it commits, the log starts over.
    ///
    /// Volatile (concealed or transient) contents are recorded as an empty pasteboard with
    /// their change count: the data never touches the disk, and after a restart the pasteboard
    /// is empty with a count no lower than before.
    ///
    /// The rows of each generation are kept under its change count: the current contents are
    /// the rows at the pasteboard's count, the history the rows at every other count.
    func save(_ changes: [Change]) throws {
        let rows = logged + changes.map(ChangeRows.init)
        guard !rows.isEmpty else { return }
        try apply(rows)
        logged = []
        health.saved()
        log?.reset()
    }

    /// Deletes the rows of history generations `counts` of `name` (their blob files go with
    /// their last ``Blob`` object).
    func prune(_ name: PasteboardName, counts: [UInt64]) throws {
        try transaction { db in
            for count in counts {
                try db.run("DELETE FROM contents WHERE pasteboard = ? AND count = ?", [.text(name.rawValue), .integer(count)])
            }
        }
    }

    /// Deletes `rows` (whose data is gone) in one transaction.
    func delete(_ rows: [RowKey]) throws {
        guard !rows.isEmpty else { return }
        try transaction { db in
            for row in rows {
                try db.run(
                    "DELETE FROM contents WHERE pasteboard = ? AND count = ? AND item = ? AND position = ?",
                    [.text(row.pasteboard), .integer(row.count), .integer(row.item), .integer(row.position)])
            }
        }
    }

    /// Runs `body` in one write transaction. BEGIN and COMMIT go through cached statements
    /// too: GRDB's own transactions parse them on every call.
    func transaction(_ body: (Database) throws -> Void) throws {
        try checkInPlace()
        try database.writeWithoutTransaction { db in
            try db.run("BEGIN IMMEDIATE")
            do {
                try body(db)
                try db.run("COMMIT")
            } catch {
                try? db.rollback()
                throw error
            }
        }
    }

    /// Writes one change inside the caller's transaction.
    static func apply(_ change: ChangeRows, to db: Database) throws {
        let key = SQLValue.text(change.name)
        if !change.listed {
            // Removed: the history goes with the contents.
            try db.run("DELETE FROM contents WHERE pasteboard = ?", [key])
        } else if !change.keepsPrevious, change.replaced > 0 {
            try deleteGeneration(change.replaced, of: key, in: db)
        }
        for count in change.pruned {
            try deleteGeneration(count, of: key, in: db)
        }
        try writePasteboardRow(change, to: db)
        try insertContents(change, to: db)
    }

    /// Writes several changes inside the caller's transaction, reduced to what they leave
    /// (``CoalescedChanges``): the same database as applying each in turn.
    static func apply(coalescing changes: [ChangeRows], to db: Database) throws {
        for name in CoalescedChanges(changes).names {
            let key = SQLValue.text(name.name)
            if name.deletesAll {
                try db.run("DELETE FROM contents WHERE pasteboard = ?", [key])
            }
            for count in name.deleted {
                try deleteGeneration(count, of: key, in: db)
            }
            try writePasteboardRow(name.last, to: db)
            for change in name.inserted {
                try insertContents(change, to: db)
            }
        }
    }

    private static func deleteGeneration(_ count: UInt64, of key: SQLValue, in db: Database) throws {
        try db.run("DELETE FROM contents WHERE pasteboard = ? AND count = ?", [key, .integer(count)])
    }

    /// The pasteboard's row as `change` leaves it.
    private static func writePasteboardRow(_ change: ChangeRows, to db: Database) throws {
        try db.run(
            """
            INSERT INTO pasteboard (name, count, listed, changed_at, expires_at, owner_pid, volatile) VALUES (?, ?, ?, ?, ?, ?, ?)
            ON CONFLICT(name) DO UPDATE SET count = excluded.count, listed = excluded.listed, changed_at = excluded.changed_at,
            expires_at = excluded.expires_at, owner_pid = excluded.owner_pid, volatile = excluded.volatile
            """,
            [
                .text(change.name), .integer(change.count), .integer(change.listed), .integer(change.changedAt),
                change.expiresAt.map { .integer($0) } ?? .null,
                change.representations.lazy.compactMap(\.owner).first.map { .integer(Int($0)) } ?? .null,
                .integer(change.volatile),
            ])
    }

    /// The rows of `change`'s contents, under its count.
    private static func insertContents(_ change: ChangeRows, to db: Database) throws {
        let key = SQLValue.text(change.name)
        for representation in change.representations {
            var data = SQLValue.null, blobID = SQLValue.null
            var provider = SQLValue.null, promiseCount = SQLValue.null, promiseItem = SQLValue.null
            switch representation.data {
            case .inline(let bytes): data = .bytes(bytes)
            case .blob(let id): blobID = .text(id)
            case .promised(let writer, let count, let item): (provider, promiseCount, promiseItem) = (.text(writer), .integer(count), .integer(Int(item)))
            }
            try db.run(
                """
                INSERT OR REPLACE INTO contents (pasteboard, count, item, position, type, size, data, blob, written_at, provider, promise_count, promise_item, owner_pid)
                VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)
                """,
                [key, .integer(change.count), .integer(representation.item), .integer(representation.position), .text(representation.type),
                 .integer(representation.size), data, blobID, .integer(change.changedAt), provider, promiseCount, promiseItem,
                 representation.owner.map { .integer(Int($0)) } ?? .null])
        }
    }

    // MARK: Blob files

    /// Deletes blob files that no stored row refers to (left by a crash mid-write).
    func removeOrphanBlobs(keeping referenced: Set<String>) -> Int {
        let names = (try? FileManager.default.contentsOfDirectory(atPath: blobDirectory)) ?? []
        var removed = 0
        for name in names where !referenced.contains(name) {
            if unlink(blobDirectory + "/" + name) == 0 { removed += 1 }
        }
        return removed
    }

    /// Whether `id` is one ``randomID()`` could have made: 32 lowercase hexadecimal digits.
    static func isBlobID(_ id: String) -> Bool {
        id.utf8.count == 32 && id.utf8.allSatisfy { (UInt8(ascii: "0")...UInt8(ascii: "9")).contains($0) || (UInt8(ascii: "a")...UInt8(ascii: "f")).contains($0) }
    }

    static func randomID() -> String {
        var generator = SystemRandomNumberGenerator()
        return (0..<2).map { _ in String(generator.next() as UInt64, radix: 16).leftPadded(to: 16) }.joined()
    }
}

extension Store {
    /// Throws ``StoreMovedError`` when the database file at the store's path is no longer the
    /// one opened (the state directory deleted or moved while the server runs): what would be
    /// committed then is lost at the next start, so nothing is. A `stat`, about a microsecond,
    /// once a transaction, on the service queue.
    func checkInPlace() throws {
        guard let databaseIdentity else { return }
        let path = directory + "/pasteboards.sqlite"
        guard let now = Self.identity(of: path), now == databaseIdentity else { throw StoreMovedError(path: path) }
    }

    fileprivate static func identity(of path: String) -> (device: UInt64, inode: UInt64)? {
        var status = stat()
        guard stat(path, &status) == 0 else { return nil }
        return (UInt64(status.st_dev), UInt64(status.st_ino))
    }
}

/// Whether the store's ``CommitLog`` may answer changes, as the store's failures tell it, from
/// any thread. A failure that puts the log itself in doubt (a read-only file system, the store
/// deleted or moved, an I/O error) suspends it, so that no change is answered that could not
/// be kept, until a save succeeds again.
final class StoreHealth: Sendable {
    private let suspended = Atomic<Bool>(false)

    /// Whether the log takes no changes now.
    var isLogSuspended: Bool { suspended.load(ordering: .acquiring) }

    /// The database failed with `error`. A busy or locked database (another process holds
    /// it) and a full disk (the log's blocks are reserved) leave the log as durable as before;
    /// anything else may mean its pages never reach the disk either, or reach a file no start
    /// will read.
    func databaseFailed(_ error: any Error) {
        if let error = error as? DatabaseError, [.SQLITE_BUSY, .SQLITE_LOCKED, .SQLITE_FULL].contains(error.resultCode) { return }
        suspended.store(true, ordering: .releasing)
    }

    /// A blob file could not be stored for `code` (an `errno`): the store gone, read-only or
    /// failing suspends the log too.
    func fileFailed(_ code: Int32) {
        if [ENOENT, EROFS, EIO].contains(code) { suspended.store(true, ordering: .releasing) }
    }

    /// A save succeeded: the log may answer again.
    func saved() {
        suspended.store(false, ordering: .releasing)
    }
}

/// The store's database is no longer where it was opened.
struct StoreMovedError: Error, CustomStringConvertible {
    let path: String
    var description: String {
        "the store's database \(path) was deleted or moved while the server ran; restart the server to start a new store there"
    }
}

struct PasteboardStoreError: Error, CustomStringConvertible {
    let description: String
    init(_ description: String) { self.description = description }
}

extension String {
    func leftPadded(to length: Int) -> String {
        count >= length ? self : String(repeating: "0", count: length - count) + self
    }
}
