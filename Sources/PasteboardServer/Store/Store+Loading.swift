import Foundation
import GRDB
import PasteboardModel

/// Reading the whole store back at start-up.
///
/// This runs before the server takes its bus name, so it is written for speed: rows are read
/// through cursors by column index (no row copies, no name lookups), representation rows arrive
/// grouped by pasteboard and are turned into items as they stream past, and each distinct type
/// string is parsed once.
extension Store {
    /// What the store holds, and what it found wrong (rows whose file is missing or truncated
    /// are dropped from their item and reported, never silently).
    struct Loaded {
        var entries: [PasteboardName: PasteboardEntry] = [:]
        var problems: [String] = []
        /// Pasteboards whose concealed or transient contents were lost with the last run; their
        /// count has been moved on by one (unless loaded for a shared store) and must be saved.
        var vanished: [PasteboardName] = []
        /// Rows whose blob file is missing or truncated, left out (and reported): deleted, so
        /// the loss is reported once.
        var lostRows: [RowKey] = []
        /// Blob files that could not be checked (permissions, an I/O error): their rows are left
        /// out for this run but kept, and the files must not be taken for orphans.
        var uncheckedBlobs: Set<String> = []
    }

    /// The primary key of a `contents` row.
    struct RowKey {
        let pasteboard: String
        let count: Int64
        let item: Int64
        let position: Int64
    }

    /// - Parameter movingOn: Whether contents lost with the last run (concealed or transient)
    ///   move their pasteboard's count on by one, a change of their own. On a store shared
    ///   with other servers they do not: counts are the database's, which never had those
    ///   contents (the other servers hold the pasteboard empty at that count already).
    func load(movingOn: Bool = true) throws -> Loaded {
        try database.read { db in
            var loaded = Loaded()
            if let result = try String.fetchOne(db, sql: "PRAGMA quick_check"), result != "ok" {
                loaded.problems.append("the database failed its integrity check: \(result)")
            }
            let stored = try Int.fetchOne(db, sql: "SELECT count(*) FROM pasteboard") ?? 0
            loaded.entries.reserveCapacity(stored)
            let rows = try Row.fetchCursor(db, sql: "SELECT name, count, listed, changed_at, expires_at, volatile FROM pasteboard")
            while let row = try rows.next() {
                guard let name = try? PasteboardName(validating: row[0] as String) else {
                    loaded.problems.append("skipped a stored pasteboard with an invalid name")
                    continue
                }
                var entry = PasteboardEntry(
                    count: UInt64(bitPattern: row[1]), items: [],
                    isListed: row[2], changedAt: UInt64(bitPattern: row[3]))
                entry.expiresAt = (row[4] as Int64?).map { UInt64(bitPattern: $0) }
                if row[5] as Bool {
                    // Concealed or transient contents did not survive the restart: that is a
                    // change, so readers holding the old count see it.
                    if movingOn { entry.count += 1 }
                    loaded.vanished.append(name)
                }
                loaded.entries[name] = entry
            }

            // One pass over every generation's rows, in the table's own order: those at a
            // pasteboard's own count are its contents, the others its history (oldest first
            // here, so each history is turned around at the end).
            var reader = ItemReader(blobDirectory: blobDirectory, spare: spare)
            try reader.read(db, sql: """
                SELECT pasteboard, count, item, type, size, data, blob, written_at, position, provider, promise_count, promise_item, owner_pid
                FROM contents ORDER BY pasteboard, count, item, position
                """) { name, count, writtenAt, items in
                guard let entry = loaded.entries[name] else { return }
                if entry.count == count {
                    loaded.entries[name]!.items = items
                } else if count < entry.count {
                    loaded.entries[name]!.history.append(Generation(count: count, writtenAt: writtenAt, items: items))
                }
            }
            for (name, entry) in loaded.entries where entry.history.count > 1 {
                loaded.entries[name]!.history.reverse()
            }
            loaded.problems += reader.problems
            loaded.lostRows = reader.lost
            loaded.uncheckedBlobs = reader.unchecked
            return loaded
        }
    }
}

/// Turns representation rows (`pasteboard, count, item, type, size, data, blob, written_at,
/// position, provider, promise_count, promise_item, owner_pid`, ordered by the first three) into
/// the items of each pasteboard and count.
///
/// One blob file gives one ``Blob`` object however many rows name it (across the current
/// contents and the history), so that it is deleted only when none of them is left.
private struct ItemReader {
    let blobDirectory: String
    let spare: SpareBlobFile
    var problems: [String] = []
    /// The rows left out because their file is missing or truncated.
    var lost: [Store.RowKey] = []
    /// The files that could not be checked.
    var unchecked: Set<String> = []
    private var blobs: [String: Blob] = [:]
    private var types: [String: PasteboardType] = [:]

    init(blobDirectory: String, spare: SpareBlobFile) {
        self.spare = spare
        self.blobDirectory = blobDirectory
    }

    /// Calls `group` once for each pasteboard and count, with when it was written and its items
    /// in order.
    mutating func read(_ db: Database, sql: String, group: (PasteboardName, UInt64, UInt64, [Item]) -> Void) throws {
        var current: (text: String, name: PasteboardName?, count: UInt64, writtenAt: UInt64)? = nil
        var items: [Item] = []
        var lastItem = -1

        func flush() {
            if let current, let name = current.name {
                let kept = items.filter { !$0.representations.isEmpty }
                if !kept.isEmpty { group(name, current.count, current.writtenAt, kept) }
            }
            items.removeAll(keepingCapacity: true)
            lastItem = -1
        }

        let rows = try Row.fetchCursor(db, sql: sql)
        while let row = try rows.next() {
            let text: String = row[0]
            let count = UInt64(bitPattern: row[1])
            if current?.text != text || current?.count != count {
                flush()
                current = (text, try? PasteboardName(validating: text), count, UInt64(bitPattern: row[7]))
            }
            guard let name = current?.name, let type = type(row[3]) else { continue }
            let itemIndex: Int = row[2]
            if itemIndex != lastItem {
                items.append(Item(representations: [], ownerPID: (row[12] as Int64?).map { UInt32(truncatingIfNeeded: $0) }))
                lastItem = itemIndex
            }
            guard let payload = try payload(row, name: name, item: itemIndex, type: type) else { continue }
            items[items.count - 1].representations.append(Representation(type: type, payload: payload))
        }
        flush()
    }

    private mutating func type(_ text: String) -> PasteboardType? {
        if let known = types[text] { return known }
        guard let type = try? PasteboardType(validating: text) else { return nil }
        types[text] = type
        return type
    }

    /// The row's data: inline bytes, a promise, or its blob file when that is intact (nil,
    /// reported, when not).
    private mutating func payload(_ row: Row, name: PasteboardName, item: Int, type: PasteboardType) throws -> Payload? {
        if let stored = row[9] as String? {
            // BUS/NAME: a unique name never holds a slash.
            let (bus, provider) = stored.lastIndex(of: "/").map { (String(stored[..<$0]), String(stored[stored.index(after: $0)...])) } ?? ("", stored)
            let count = UInt64(bitPattern: row[10] as Int64? ?? 0)
            let promised = UInt32(truncatingIfNeeded: row[11] as Int64? ?? 0)
            return .promised(Promise(provider: provider, bus: bus, name: name, count: count, item: promised, type: type))
        }
        let size = UInt64(bitPattern: row[4])
        guard let blobID = row[6] as String? else {
            return .inline(try row.withUnsafeData(atIndex: 5) { data in data.map { [UInt8]($0) } ?? [] })
        }
        let blob = blobs[blobID] ?? Blob(id: blobID, directory: blobDirectory, size: size, spare: spare)
        var info = stat()
        let found = stat(blob.path, &info) == 0
        guard found, UInt64(info.st_size) == size else {
            blob.keepFile()
            if !found, errno != ENOENT {
                // Unreadable now (permissions, an I/O error) is not gone: the row stays, for a
                // start that can read the file.
                problems.append("pasteboard '\(name)' item \(item): the file of its \(type) data (\(blobID)) cannot be checked (\(String(cString: strerror(errno)))); it is left out until a start can")
                unchecked.insert(blobID)
                return nil
            }
            problems.append("pasteboard '\(name)' item \(item) lost its \(type) data (file \(blobID) missing or truncated)")
            lost.append(Store.RowKey(pasteboard: row[0], count: row[1], item: row[2], position: row[8]))
            return nil
        }
        blobs[blobID] = blob
        return .file(blob)
    }
}
