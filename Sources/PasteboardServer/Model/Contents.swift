import PasteboardModel

/// One type of an item and its data.
struct Representation: Sendable {
    let type: PasteboardType
    let payload: Payload

    var size: UInt64 { payload.size }
}

/// One item: the same thing in several representations, richest first.
struct Item: Sendable {
    var representations: [Representation]
    /// Written `owner-only` by this process: only its connections may read this item's data
    /// (0: the writer's process was unknown, and nobody may). Each item keeps its own, so an
    /// append by another process neither opens nor closes what was there.
    var ownerPID: UInt32? = nil

    var types: [PasteboardType] { representations.map(\.type) }
    var byteCount: UInt64 { representations.reduce(0) { $0 + $1.size } }

    /// The representation of exactly `type` (any spelling of it).
    func representation(of type: PasteboardType) -> Representation? {
        representations.first { $0.type == type }
    }
}

/// What one name holds: its items and its change count.
struct PasteboardEntry: Sendable {
    /// Never goes backwards, not even across `Remove` or a restart.
    var count: UInt64 = 0
    var items: [Item] = []
    /// Written and not removed since: listed by `ListPasteboards`.
    var isListed = false
    /// Unix time in milliseconds of the last change.
    var changedAt: UInt64 = 0
    /// Written `concealed`: `Changed` carries no types, nothing reaches the disk or history.
    var isConcealed = false
    /// Written `concealed` or `transient`: the contents never reach the disk.
    var isVolatile = false
    /// Unix time in milliseconds when the contents are cleared (`expires-in-ms`).
    var expiresAt: UInt64? = nil

    /// Earlier contents, newest first (never concealed or transient ones).
    var history: [Generation] = []

    /// Whether these contents are listed by `History` while current, and may be restored: not
    /// empty, neither concealed nor transient (the contract's rule). Contents written to expire
    /// are, until their deadline, and a restore keeps it.
    var isListedInHistory: Bool { !items.isEmpty && !isVolatile }

    /// Whether these contents, once replaced, stay in the history as an earlier generation:
    /// listed and restored as lasting ones, and saved. Not contents written to expire, which
    /// would outlive their time there (and come back after a restart); nor, then, do they take
    /// a place of `history-depth` from the lasting ones. (Owner-only items enter it with their
    /// owner, so a restored one stays private; a restored promise is asked of its writer like
    /// the original.)
    var entersHistory: Bool { isListedInHistory && expiresAt == nil }

    /// Whether these contents were written to expire and their time has come.
    func hasExpired(at now: UInt64) -> Bool {
        expiresAt.map { $0 <= now } ?? false
    }

    /// Whether some item was written `owner-only`: reading it needs the caller's process.
    var hasOwnerOnlyItems: Bool { items.contains { $0.ownerPID != nil } }

    /// The types a `Changed` signal announces: none for concealed contents.
    var announcedTypes: [PasteboardType] { isConcealed ? [] : types }

    var byteCount: UInt64 { items.reduce(0) { $0 + $1.byteCount } }

    /// Every type of every item, first item first, without repeats. (Every write's `Changed`
    /// lists them: a handful of types are compared with those before them rather than hashed.)
    var types: [PasteboardType] {
        var result: [PasteboardType] = []
        var seen: Set<PasteboardType>? = nil
        for item in items {
            for type in item.types {
                if seen == nil, result.count >= 16 { seen = Set(result) }
                if seen?.insert(type).inserted ?? !result.contains(type) {
                    result.append(type)
                }
            }
        }
        return result
    }
}

/// Earlier contents of a pasteboard, kept for `History` and `Restore`.
struct Generation: Sendable {
    /// The change count the write that made these contents returned.
    let count: UInt64
    /// Unix time in milliseconds of that write.
    let writtenAt: UInt64
    let items: [Item]
    /// The bytes of all items, counted once: every write sums the history against its limit.
    let byteCount: UInt64

    init(count: UInt64, writtenAt: UInt64, items: [Item]) {
        self.count = count
        self.writtenAt = writtenAt
        self.items = items
        byteCount = items.reduce(0) { $0 + $1.byteCount }
    }

    /// Every type of every item, first item first, without repeats.
    var types: [PasteboardType] {
        var entry = PasteboardEntry()
        entry.items = items
        return entry.types
    }
}
