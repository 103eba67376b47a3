import PasteboardModel

/// What one change writes to the database, as plain values: the pasteboard's row, the rows of
/// its new contents, and the rows it deletes.
///
/// The ``Store`` applies these, whether the change comes straight from the service or back
/// from the ``CommitLog`` after a restart; the log records them as bytes (``encode(into:)``).
struct ChangeRows: Equatable, Sendable {
    struct Representation: Equatable, Sendable {
        let item: Int
        let position: Int
        let type: String
        let size: UInt64
        /// The bytes of an inline payload, the blob file's id, or a promise's writer.
        let data: Data
        /// The process that may read it, for an item written `owner-only`.
        var owner: UInt32? = nil

        enum Data: Equatable, Sendable {
            case inline([UInt8])
            case blob(String)
            /// Promised data not asked for yet, or asked for in an earlier run: after a restart
            /// the writer is asked (again) on the first read. `provider` is the bus's id and
            /// the writer's unique name, as `BUS/NAME`; `count` and `item` are those the
            /// writer's `WritePromised` gave it, which `Provide` names.
            case promised(provider: String, count: UInt64, item: UInt32)
        }
    }

    let name: String
    let count: UInt64
    let listed: Bool
    let changedAt: UInt64
    let expiresAt: UInt64?
    /// Concealed or transient: only the count reaches the disk.
    let volatile: Bool
    /// The change count of the contents this change replaces (0: none). Usually `count - 1`;
    /// a shared store's change taken in after changes this server did not keep follows its
    /// previous contents with a gap.
    let replaced: UInt64
    /// The previous contents entered the history: their rows stay; else they go.
    let keepsPrevious: Bool
    /// History generations dropped.
    let pruned: [UInt64]
    /// Empty for volatile contents.
    let representations: [Representation]
}

extension ChangeRows.Representation.Data {
    /// The row data of a payload the store holds: inline bytes, or a blob file of the store;
    /// nil for data in memory only (a memfd) or not here yet (a promise).
    init?(stored payload: Payload) {
        switch payload {
        case .inline(let bytes): self = .inline(bytes)
        case .file(let blob) where blob.isOnDisk: self = .blob(blob.id)
        default: return nil
        }
    }
}

extension ChangeRows {
    /// The rows of `change`. Concealed and transient contents stay off the disk: only their
    /// count is saved.
    init(_ change: Store.Change) {
        let entry = change.entry
        let volatile = entry.isVolatile
        var representations: [Representation] = []
        if !volatile {
            for (itemIndex, item) in entry.items.enumerated() {
                for (position, representation) in item.representations.enumerated() {
                    let data: Representation.Data
                    switch representation.payload {
                    case .inline(let bytes): data = .inline(bytes)
                    case .file(let blob): data = .blob(blob.id)
                    case .promised(let promise):
                        data = promise.kept.flatMap(Representation.Data.init(stored:))
                            ?? .promised(provider: promise.bus + "/" + promise.provider, count: promise.count, item: promise.item)
                    }
                    representations.append(Representation(
                        item: itemIndex, position: position, type: representation.type.rawValue, size: representation.size, data: data,
                        owner: item.ownerPID))
                }
            }
        }
        assert(change.replaced < entry.count || entry.count == 0, "'\(change.name)': change \(entry.count) replaces \(change.replaced)")
        self.init(
            name: change.name.rawValue, count: entry.count, listed: entry.isListed, changedAt: entry.changedAt,
            expiresAt: volatile ? nil : entry.expiresAt, volatile: volatile, replaced: change.replaced,
            keepsPrevious: change.keepsPrevious, pruned: change.pruned, representations: representations)
    }

    /// The bytes of inline payloads.
    var inlineBytes: Int {
        representations.reduce(0) { total, representation in
            if case .inline(let bytes) = representation.data { return total + bytes.count }
            return total
        }
    }
}

// MARK: Bytes

extension ChangeRows {
    private enum Flag {
        static let listed: UInt8 = 1
        static let volatile: UInt8 = 2
        static let keepsPrevious: UInt8 = 4
        static let expires: UInt8 = 8
        /// Records before owners were kept per item: one owner for every representation.
        static let owner: UInt8 = 16
        /// Each representation is followed by its owner (its process + 1; 0 for none).
        static let itemOwners: UInt8 = 32
        /// The replaced count follows the flags, for a change that does not follow its previous
        /// contents at once; without it (and in records written before it existed), `count - 1`.
        static let replacedAfterAGap: UInt8 = 64
        /// Every flag a record may have; a record with another is none of this version's.
        static let known = listed | volatile | keepsPrevious | expires | owner | itemOwners | replacedAfterAGap
    }

    /// The replaced count a record need not spell out.
    private static func usualReplaced(_ count: UInt64) -> UInt64 {
        count > 0 ? count - 1 : 0
    }

    private var replacesAfterAGap: Bool { replaced != Self.usualReplaced(count) }

    private var hasItemOwners: Bool { representations.contains { $0.owner != nil } }

    /// How many bytes ``encode(into:)`` appends, without encoding: what a record must have room
    /// for, known before any byte is copied.
    var encodedSize: Int {
        var size = 8 + name.utf8.count + 8 + 8 + 1
        if replacesAfterAGap { size += 8 }
        if expiresAt != nil { size += 8 }
        if hasItemOwners { size += 8 * representations.count }
        size += 8 + 8 * pruned.count + 8
        for representation in representations {
            size += 8 + 8 + 8 + representation.type.utf8.count + 8 + 1
            switch representation.data {
            case .inline(let data): size += 8 + data.count
            case .blob(let id): size += 8 + id.utf8.count
            case .promised(let provider, _, _): size += 8 + provider.utf8.count + 8 + 8
            }
        }
        return size
    }

    func encode(into bytes: inout ByteWriter) {
        bytes.string(name)
        bytes.uint64(count)
        bytes.uint64(changedAt)
        var flags: UInt8 = 0
        if listed { flags |= Flag.listed }
        if volatile { flags |= Flag.volatile }
        if keepsPrevious { flags |= Flag.keepsPrevious }
        if expiresAt != nil { flags |= Flag.expires }
        let itemOwners = hasItemOwners
        if itemOwners { flags |= Flag.itemOwners }
        let afterAGap = replacesAfterAGap
        if afterAGap { flags |= Flag.replacedAfterAGap }
        bytes.byte(flags)
        if afterAGap { bytes.uint64(replaced) }
        if let expiresAt { bytes.uint64(expiresAt) }
        bytes.uint64(UInt64(pruned.count))
        pruned.forEach { bytes.uint64($0) }
        bytes.uint64(UInt64(representations.count))
        for representation in representations {
            bytes.uint64(UInt64(representation.item))
            bytes.uint64(UInt64(representation.position))
            bytes.string(representation.type)
            bytes.uint64(representation.size)
            switch representation.data {
            case .inline(let data):
                bytes.byte(0)
                bytes.bytes(data)
            case .blob(let id):
                bytes.byte(1)
                bytes.string(id)
            case .promised(let provider, let count, let item):
                bytes.byte(2)
                bytes.string(provider)
                bytes.uint64(count)
                bytes.uint64(UInt64(item))
            }
            if itemOwners { bytes.uint64(representation.owner.map { UInt64($0) + 1 } ?? 0) }
        }
    }

    /// Reads what ``encode(into:)`` wrote; nil when the bytes are not such a record.
    init?(from bytes: inout ByteReader) {
        guard let name = bytes.string(), let count = bytes.uint64(), let changedAt = bytes.uint64(), let flags = bytes.byte() else { return nil }
        var expiresAt: UInt64? = nil, ownerPID: UInt32? = nil
        guard flags & ~Flag.known == 0 else { return nil }
        var replaced = Self.usualReplaced(count)
        if flags & Flag.replacedAfterAGap != 0 {
            guard let value = bytes.uint64(), value < count else { return nil }
            replaced = value
        }
        if flags & Flag.expires != 0 {
            guard let value = bytes.uint64() else { return nil }
            expiresAt = value
        }
        if flags & Flag.owner != 0 {
            guard let value = bytes.uint64(), let pid = UInt32(exactly: value) else { return nil }
            ownerPID = pid
        }
        guard let prunedCount = bytes.count() else { return nil }
        var pruned: [UInt64] = []
        for _ in 0..<prunedCount {
            guard let value = bytes.uint64() else { return nil }
            pruned.append(value)
        }
        guard let representationCount = bytes.count() else { return nil }
        var representations: [Representation] = []
        for _ in 0..<representationCount {
            guard let item = bytes.count(), let position = bytes.count(), let type = bytes.string(), let size = bytes.uint64(),
                  let kind = bytes.byte() else { return nil }
            let data: Representation.Data
            switch kind {
            case 0:
                guard let inline = bytes.data() else { return nil }
                data = .inline(inline)
            case 1:
                // An id names a file in the blob directory: never a path.
                guard let id = bytes.string(), Store.isBlobID(id) else { return nil }
                data = .blob(id)
            case 2:
                guard let provider = bytes.string(), let count = bytes.uint64(), let item = bytes.uint64().flatMap(UInt32.init(exactly:)) else { return nil }
                data = .promised(provider: provider, count: count, item: item)
            default:
                return nil
            }
            var owner = ownerPID
            if flags & Flag.itemOwners != 0 {
                guard let value = bytes.uint64(), value <= UInt64(UInt32.max) + 1 else { return nil }
                owner = value == 0 ? nil : UInt32(value - 1)
            }
            representations.append(Representation(item: item, position: position, type: type, size: size, data: data, owner: owner))
        }
        self.init(
            name: name, count: count, listed: flags & Flag.listed != 0, changedAt: changedAt, expiresAt: expiresAt,
            volatile: flags & Flag.volatile != 0, replaced: replaced, keepsPrevious: flags & Flag.keepsPrevious != 0,
            pruned: pruned, representations: representations)
    }
}
