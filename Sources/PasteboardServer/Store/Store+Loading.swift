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
        /// count has been moved on by one and must be saved.
        var vanished: [PasteboardName] = []
    }

    func load() throws -> Loaded {
        try database.read { db in
            var loaded = Loaded()
            if let result = try String.fetchOne(db, sql: "PRAGMA quick_check"), result != "ok" {
                loaded.problems.append("the database failed its integrity check: \(result)")
            }
            let stored = try Int.fetchOne(db, sql: "SELECT count(*) FROM pasteboard") ?? 0
            loaded.entries.reserveCapacity(stored)
            let rows = try Row.fetchCursor(db, sql: "SELECT name, count, listed, changed_at, expires_at, owner_pid, volatile FROM pasteboard")
            while let row = try rows.next() {
                guard let name = try? PasteboardName(validating: row[0] as String) else {
                    loaded.problems.append("skipped a stored pasteboard with an invalid name")
                    continue
                }
                var entry = PasteboardEntry(
                    count: UInt64(bitPattern: row[1]), items: [],
                    isListed: row[2], changedAt: UInt64(bitPattern: row[3]))
                entry.expiresAt = (row[4] as Int64?).map { UInt64(bitPattern: $0) }
                entry.ownerPID = (row[5] as Int64?).map { UInt32(truncatingIfNeeded: $0) }
                if row[6] as Bool {
                    // Concealed or transient contents did not survive the restart: that is a
                    // change, so readers holding the old count see it.
                    entry.count += 1
                    loaded.vanished.append(name)
                }
                loaded.entries[name] = entry
            }

            // One pass over every generation's rows: those at a pasteboard's own count are its
            // contents, the others are kept for the history rows below.
            var reader = ItemReader(blobDirectory: blobDirectory)
            var earlier: [ItemsKey: [Item]] = [:]
            try reader.read(db, sql: "SELECT pasteboard, count, item, type, size, data, blob FROM contents ORDER BY pasteboard, count, item, position") { name, count, items in
                if loaded.entries[name]?.count == count {
                    loaded.entries[name]!.items = items
                } else {
                    earlier[ItemsKey(name: name, count: count)] = items
                }
            }
            let generations = try Row.fetchCursor(db, sql: "SELECT pasteboard, count, written_at FROM generation ORDER BY pasteboard, count DESC")
            while let row = try generations.next() {
                guard let name = try? PasteboardName(validating: row[0] as String), loaded.entries[name] != nil else { continue }
                let count = UInt64(bitPattern: row[1])
                guard let items = earlier[ItemsKey(name: name, count: count)], !items.isEmpty else { continue }
                loaded.entries[name]!.history.append(Generation(count: count, writtenAt: UInt64(bitPattern: row[2]), items: items))
            }
            loaded.problems += reader.problems
            return loaded
        }
    }

    struct ItemsKey: Hashable {
        let name: PasteboardName
        let count: UInt64
    }
}

/// Turns representation rows (`pasteboard, count, item, type, size, data, blob`, ordered by
/// the first three) into the items of each pasteboard and count.
///
/// One blob file gives one ``Blob`` object however many rows name it (across the current
/// contents and the history), so that it is deleted only when none of them is left.
private struct ItemReader {
    let blobDirectory: String
    var problems: [String] = []
    private var blobs: [String: Blob] = [:]
    private var types: [String: PasteboardType] = [:]

    init(blobDirectory: String) {
        self.blobDirectory = blobDirectory
    }

    /// Calls `group` once for each pasteboard and count, with its items in order.
    mutating func read(_ db: Database, sql: String, group: (PasteboardName, UInt64, [Item]) -> Void) throws {
        var current: (text: String, name: PasteboardName?, count: UInt64)? = nil
        var items: [Item] = []
        var lastItem = -1

        func flush() {
            if let current, let name = current.name {
                let kept = items.filter { !$0.representations.isEmpty }
                if !kept.isEmpty { group(name, current.count, kept) }
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
                current = (text, try? PasteboardName(validating: text), count)
            }
            guard let name = current?.name, let type = type(row[3]) else { continue }
            let itemIndex: Int = row[2]
            if itemIndex != lastItem {
                items.append(Item(representations: []))
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

    /// The row's data: inline bytes, or its blob file when that is intact (nil, reported, when not).
    private mutating func payload(_ row: Row, name: PasteboardName, item: Int, type: PasteboardType) throws -> Payload? {
        let size = UInt64(bitPattern: row[4])
        guard let blobID = row[6] as String? else {
            return .inline(try row.withUnsafeData(atIndex: 5) { data in data.map { [UInt8]($0) } ?? [] })
        }
        let blob = blobs[blobID] ?? Blob(id: blobID, directory: blobDirectory, size: size)
        guard Store.fileSize(blob.path) == size else {
            blob.keepFile()
            problems.append("pasteboard '\(name)' item \(item) lost its \(type) data (file \(blobID) missing or truncated)")
            return nil
        }
        blobs[blobID] = blob
        return .file(blob)
    }
}
