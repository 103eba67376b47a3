import Foundation
import GRDB
import PasteboardModel
@testable import PasteboardServer
import Testing
import TestSupport

/// A transaction of many changes writes what they leave (``CoalescedChanges``): the database
/// must end exactly as applying each change in turn leaves it, whatever the changes are.
struct CoalescedChangesTests {
    /// Changes of a few names, as the service makes them: counts that only grow, writes that
    /// keep the previous generation or not and push old ones out of the history, clears,
    /// removes, concealed contents (rows without representations), blobs and promises.
    struct Changes {
        var random: SeededRandom
        var counts: [String: UInt64] = [:]
        var generations: [String: [UInt64]] = [:]

        init(seed: UInt64) {
            random = SeededRandom(seed: seed)
        }

        mutating func make(_ number: Int) -> [ChangeRows] {
            (0..<number).map { _ in change() }
        }

        private mutating func change() -> ChangeRows {
            let name = ["general", "find", "a'b"].randomElement(using: &random)!
            let replaced = counts[name, default: 0]
            let count = replaced + UInt64.random(in: 1...2, using: &random)
            counts[name] = count
            let kind = Int.random(in: 0..<20, using: &random)
            let listed = kind != 0
            let volatile = kind == 1
            let keepsPrevious = listed && !volatile && kind > 5
            var kept = generations[name, default: []]
            if !listed { kept = [] }
            // Up to three generations kept: the oldest go, as `history-depth` 3 would push them.
            var pruned: [UInt64] = []
            while kept.count > 3 { pruned.append(kept.removeFirst()) }
            if Bool.random(using: &random), let extra = kept.first, kept.count > 1 {
                pruned.append(extra)
                kept.removeFirst()
            }
            let representations: [ChangeRows.Representation] = !listed || volatile || kind == 2 ? [] : (0..<Int.random(in: 1...3, using: &random)).map { index in
                let data: ChangeRows.Representation.Data = switch Int.random(in: 0..<4, using: &random) {
                case 0: .blob(String(format: "%032x", Int.random(in: 0..<1_000_000, using: &random)))
                case 1: .promised(provider: "bus/:1.\(index)", count: count, item: UInt32(index))
                default: .inline((0..<Int.random(in: 0..<8, using: &random)).map { _ in UInt8.random(in: 0...255, using: &random) })
                }
                return ChangeRows.Representation(
                    item: index / 2, position: index % 2, type: ["text/plain", "image/png", "text/html"][index], size: UInt64(index * 10),
                    data: data, owner: index == 2 ? 42 : nil)
            }
            if keepsPrevious || representations.isEmpty == false { kept.append(count) }
            generations[name] = kept
            return ChangeRows(
                name: name, count: count, listed: listed, changedAt: 1_000 + count, expiresAt: kind == 3 ? 9_000 + count : nil,
                volatile: volatile, replaced: replaced, keepsPrevious: keepsPrevious, pruned: pruned, representations: representations)
        }
    }

    /// Every row of both tables, in a fixed order, as text.
    static func dump(_ store: Store) throws -> [String] {
        try store.database.read { db in
            let pasteboards = try Row.fetchAll(db, sql: "SELECT * FROM pasteboard ORDER BY name")
            let contents = try Row.fetchAll(db, sql: "SELECT * FROM contents ORDER BY pasteboard, count, item, position")
            return (pasteboards + contents).map(\.description)
        }
    }

    static func store() throws -> (Store, String) {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("pasteboard-coalesce-\(UUID().uuidString)").path
        return (try Store(directory: directory), directory)
    }

    @Test(arguments: 1...40)
    func aTransactionEndsAsTheChangesOneByOneWould(seed: Int) throws {
        var changes = Changes(seed: UInt64(seed))
        // Rows the database holds before: the transaction deletes some of them.
        let before = changes.make(12)
        let batch = changes.make(Int.random(in: 1...60, using: &changes.random))
        let (oneByOne, first) = try Self.store()
        let (coalesced, second) = try Self.store()
        defer {
            try? FileManager.default.removeItem(atPath: first)
            try? FileManager.default.removeItem(atPath: second)
        }
        for store in [oneByOne, coalesced] {
            try store.transaction { db in for change in before { try Store.apply(change, to: db) } }
        }
        try oneByOne.transaction { db in for change in batch { try Store.apply(change, to: db) } }
        try coalesced.apply(batch)
        let expected = try Self.dump(oneByOne)
        #expect(try Self.dump(coalesced) == expected, "seed \(seed)")
        #expect(expected.count > 3, "the changes leave rows to compare")
    }

    /// A burst of one name's writes inserts only the generations that stay.
    @Test func aBurstWritesOnlyWhatStays() throws {
        var changes = Changes(seed: 7)
        let burst = (0..<200).map { _ in changes.make(1)[0] }
        let coalesced = CoalescedChanges(burst)
        let inserted = coalesced.names.reduce(0) { $0 + $1.inserted.count }
        #expect(inserted < 20, "\(inserted) generations inserted of 200 changes")
        #expect(coalesced.names.count <= 3)
    }
}

/// What a change tells the store to drop of the contents before it.
struct ChangeRowsOfThePreviousContentsTests {
    static func entry(count: UInt64, text: String, expiresAt: UInt64? = nil) -> PasteboardEntry {
        var entry = PasteboardEntry()
        entry.count = count
        entry.isListed = true
        entry.items = [Item(representations: [Representation(type: .plainText, payload: .inline(Array(text.utf8)))])]
        entry.expiresAt = expiresAt
        return entry
    }

    /// Contents that do not enter the history (here, written to expire) lose their rows when
    /// replaced, also when the new change does not follow them at once (another server's,
    /// taken in after changes this one did not keep): the change names the count it replaces.
    @Test func theRowsOfContentsThatDoNotEnterTheHistoryGoAfterAGap() throws {
        let name = try PasteboardName(validating: "general")
        let expiring = Self.entry(count: 5, text: "code", expiresAt: .max)
        let next = PasteboardService.change(name, Self.entry(count: 6, text: "next"), after: expiring, removed: false, Limits())
        #expect(!next.keepsPrevious && next.replaced == 5 && next.pruned.isEmpty)
        let afterAGap = PasteboardService.change(name, Self.entry(count: 9, text: "remote"), after: expiring, removed: false, Limits())
        #expect(!afterAGap.keepsPrevious && afterAGap.replaced == 5 && afterAGap.pruned.isEmpty)
        // Lasting contents enter the history and keep their rows, gap or not.
        let lasting = PasteboardService.change(name, Self.entry(count: 9, text: "remote"), after: Self.entry(count: 5, text: "kept"), removed: false, Limits())
        #expect(lasting.keepsPrevious && lasting.pruned.isEmpty)
    }

    static func rows(count: UInt64, replaced: UInt64) -> ChangeRows {
        ChangeRows(
            name: "general", count: count, listed: true, changedAt: 1_000, expiresAt: 2_000, volatile: false, replaced: replaced,
            keepsPrevious: false, pruned: [1],
            representations: [.init(item: 0, position: 0, type: "text/plain", size: 2, data: .inline([104, 105]))])
    }

    static func decoded(_ bytes: [UInt8]) -> ChangeRows? {
        var reader = ByteReader(bytes)
        return ChangeRows(from: &reader)
    }

    /// The commit log keeps the replaced count of a change after a gap, and only then: a
    /// record of the usual change is byte for byte what it was before the count was kept, so
    /// that such records (in a log left by an earlier version) read back as `count - 1`.
    @Test func theCommitLogKeepsTheReplacedCountOnlyAfterAGap() throws {
        for rows in [Self.rows(count: 9, replaced: 5), Self.rows(count: 9, replaced: 8), Self.rows(count: 1, replaced: 0)] {
            var writer = ByteWriter()
            rows.encode(into: &writer)
            #expect(writer.bytes.count == rows.encodedSize)
            #expect(Self.decoded(writer.bytes) == rows)
        }
        var usual = ByteWriter(), gap = ByteWriter()
        Self.rows(count: 9, replaced: 8).encode(into: &usual)
        Self.rows(count: 9, replaced: 5).encode(into: &gap)
        #expect(gap.bytes.count == usual.bytes.count + 8)
        // A record as the version before wrote it, field by field: the usual change's bytes
        // now, read back as replacing `count - 1`.
        var earlier = ByteWriter()
        earlier.string("general")
        earlier.uint64(9)        // count
        earlier.uint64(1_000)    // changed at
        earlier.byte(1 | 8)      // listed, expires
        earlier.uint64(2_000)    // expires at
        earlier.uint64(1)        // pruned: [1]
        earlier.uint64(1)
        earlier.uint64(1)        // one representation
        earlier.uint64(0)        // item
        earlier.uint64(0)        // position
        earlier.string("text/plain")
        earlier.uint64(2)        // size
        earlier.byte(0)          // inline
        earlier.bytes([104, 105])
        #expect(earlier.bytes == usual.bytes)
        #expect(Self.decoded(earlier.bytes)?.replaced == 8)
        let nameLength = 8 + "general".utf8.count
        // A flag this version does not know: no record of its.
        var unknown = usual.bytes
        unknown[nameLength + 16] |= 128
        #expect(Self.decoded(unknown) == nil)
        // A replaced count at or above the change's own is no record of ours.
        var damaged = gap.bytes
        let field = nameLength + 17
        damaged.replaceSubrange(field..<field + 8, with: withUnsafeBytes(of: UInt64(9).littleEndian, Array.init))
        #expect(Self.decoded(damaged) == nil)
    }

    /// The store deletes the rows of the count named, not of the one before the change.
    @Test func theStoreDeletesTheRowsOfTheReplacedCount() throws {
        let (store, directory) = try CoalescedChangesTests.store()
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let name = try PasteboardName(validating: "general")
        let expiring = Self.entry(count: 5, text: "code", expiresAt: .max)
        try store.save([Store.Change(name: name, entry: expiring, replaced: 0)])
        let remote = Self.entry(count: 9, text: "remote")
        try store.save([PasteboardService.change(name, remote, after: expiring, removed: false, Limits())])
        let counts = try store.database.read { db in
            try Int64.fetchAll(db, sql: "SELECT DISTINCT count FROM contents WHERE pasteboard = 'general' ORDER BY count")
        }
        #expect(counts == [9], "the expiring contents' rows went")
    }

    /// Concealed contents vanish at a restart, a change saved as such; the generation before
    /// them entered the history and keeps its rows, on a store that moves the count on and on
    /// one that does not (a shared store's local copy, whose counts the database decides).
    @Test(arguments: [true, false])
    func contentsThatVanishAtARestartLeaveTheHistoryWhole(movingOn: Bool) throws {
        let (store, directory) = try CoalescedChangesTests.store()
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let name = try PasteboardName(validating: "general")
        let plain = Self.entry(count: 1, text: "kept")
        try store.save([Store.Change(name: name, entry: plain, replaced: 0)])
        var secret = Self.entry(count: 2, text: "hunter2")
        secret.isConcealed = true
        secret.isVolatile = true
        try store.save([PasteboardService.change(name, secret, after: plain, removed: false, Limits())])

        // What a restart does with it: the vanished contents' change, saved.
        let loaded = try store.load(movingOn: movingOn)
        #expect(loaded.vanished == [name])
        try store.save(name, loaded.entries[name]!)

        let again = try store.load(movingOn: movingOn).entries[name]!
        #expect(again.items.isEmpty)
        #expect(again.history.map(\.count) == [1], "the plain generation stays in the history")
    }
}
