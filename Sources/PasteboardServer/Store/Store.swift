import Foundation
import GRDB
import PasteboardModel

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
/// Not thread-safe by itself: the ``PasteboardService`` queue is its only user.
final class Store {
    let directory: String
    let blobDirectory: String
    private let database: DatabaseQueue

    init(directory: String) throws {
        self.directory = directory
        blobDirectory = directory + "/blobs"
        try FileManager.default.createDirectory(atPath: blobDirectory, withIntermediateDirectories: true, attributes: [.posixPermissions: 0o700])
        var configuration = Configuration()
        configuration.prepareDatabase { db in
            try db.execute(sql: "PRAGMA synchronous = NORMAL")
        }
        database = try DatabaseQueue(path: directory + "/pasteboards.sqlite", configuration: configuration)
        try database.writeWithoutTransaction { db in
            _ = try String.fetchOne(db, sql: "PRAGMA journal_mode = WAL")
        }
        try Self.migrator.migrate(database)
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
        return migrator
    }

    // MARK: Loading

    /// What the store holds, and what it found wrong (rows whose file is missing or truncated
    /// are dropped from their item and reported, never silently).
    struct Loaded {
        var entries: [PasteboardName: PasteboardEntry] = [:]
        var problems: [String] = []
    }

    func load() throws -> Loaded {
        try database.read { db in
            var loaded = Loaded()
            if let result = try String.fetchOne(db, sql: "PRAGMA quick_check"), result != "ok" {
                loaded.problems.append("the database failed its integrity check: \(result)")
            }
            for row in try Row.fetchAll(db, sql: "SELECT name, count, listed, changed_at, expires_at, owner_pid FROM pasteboard") {
                let text: String = row["name"]
                guard let name = try? PasteboardName(validating: text) else {
                    loaded.problems.append("skipped a stored pasteboard with an invalid name")
                    continue
                }
                var entry = PasteboardEntry(
                    count: UInt64(bitPattern: row["count"]), items: [],
                    isListed: row["listed"], changedAt: UInt64(bitPattern: row["changed_at"]))
                entry.expiresAt = (row["expires_at"] as Int64?).map { UInt64(bitPattern: $0) }
                entry.ownerPID = (row["owner_pid"] as Int64?).map { UInt32(truncatingIfNeeded: $0) }
                loaded.entries[name] = entry
            }
            let rows = try Row.fetchCursor(db, sql: "SELECT pasteboard, item, type, size, data, blob FROM representation ORDER BY pasteboard, item, position")
            var current: (name: PasteboardName, item: Int)? = nil
            while let row = try rows.next() {
                guard let name = try? PasteboardName(validating: row["pasteboard"] as String),
                      let type = try? PasteboardType(validating: row["type"] as String) else { continue }
                let itemIndex: Int = row["item"]
                let size = UInt64(bitPattern: row["size"])
                let payload: Payload
                if let blobID: String = row["blob"] {
                    let blob = Blob(id: blobID, directory: blobDirectory, size: size)
                    guard Self.fileSize(blob.path) == size else {
                        loaded.problems.append("pasteboard '\(name)' item \(itemIndex) lost its \(type) data (file \(blobID) missing or truncated)")
                        continue
                    }
                    payload = .file(blob)
                } else {
                    let data: [UInt8] = (row["data"] as Data?).map { Array($0) } ?? []
                    payload = .inline(data)
                }
                if current?.name != name || current?.item != itemIndex {
                    loaded.entries[name, default: PasteboardEntry()].items.append(Item(representations: []))
                    current = (name, itemIndex)
                }
                let last = loaded.entries[name]!.items.count - 1
                loaded.entries[name]!.items[last].representations.append(Representation(type: type, payload: payload))
            }
            for (name, entry) in loaded.entries where entry.items.contains(where: { $0.representations.isEmpty }) {
                loaded.entries[name]!.items.removeAll { $0.representations.isEmpty }
            }
            return loaded
        }
    }

    // MARK: Saving

    /// Commits one pasteboard's state. Volatile (concealed or transient) contents are recorded
    /// as an empty pasteboard with their change count: the data never touches the disk, and
    /// after a restart the pasteboard is empty with a count no lower than before.
    func save(_ name: PasteboardName, _ entry: PasteboardEntry) throws {
        let volatile = entry.isVolatile
        try database.write { db in
            try db.execute(
                sql: """
                    INSERT INTO pasteboard (name, count, listed, changed_at, expires_at, owner_pid) VALUES (?, ?, ?, ?, ?, ?)
                    ON CONFLICT(name) DO UPDATE SET count = excluded.count, listed = excluded.listed, changed_at = excluded.changed_at,
                    expires_at = excluded.expires_at, owner_pid = excluded.owner_pid
                    """,
                arguments: [
                    name.rawValue, Int64(bitPattern: entry.count), entry.isListed, Int64(bitPattern: entry.changedAt),
                    volatile ? nil : entry.expiresAt.map { Int64(bitPattern: $0) }, volatile ? nil : entry.ownerPID.map { Int64($0) },
                ])
            try db.execute(sql: "DELETE FROM representation WHERE pasteboard = ?", arguments: [name.rawValue])
            guard !volatile else { return }
            let insert = try db.cachedStatement(sql: "INSERT INTO representation (pasteboard, item, position, type, size, data, blob) VALUES (?, ?, ?, ?, ?, ?, ?)")
            for (itemIndex, item) in entry.items.enumerated() {
                for (position, representation) in item.representations.enumerated() {
                    var data: Data? = nil
                    var blobID: String? = nil
                    switch representation.payload {
                    case .inline(let bytes): data = Data(bytes)
                    case .file(let blob): blobID = blob.id
                    }
                    try insert.execute(arguments: [
                        name.rawValue, itemIndex, position, representation.type.rawValue,
                        Int64(bitPattern: representation.size), data, blobID,
                    ])
                }
            }
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

    static func randomID() -> String {
        var generator = SystemRandomNumberGenerator()
        return (0..<2).map { _ in String(generator.next() as UInt64, radix: 16).leftPadded(to: 16) }.joined()
    }

    static func fileSize(_ path: String) -> UInt64? {
        var info = stat()
        guard stat(path, &info) == 0 else { return nil }
        return UInt64(info.st_size)
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
