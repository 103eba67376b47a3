/// Types already validated, by their exact spelling: a server sees the same few spellings on
/// nearly every call, and parsing one costs more than the rest of a small read.
///
/// One slot per hash of the spelling (direct-mapped), so it is bounded with nothing to evict:
/// a client inventing new spellings only takes the slots of others, which are parsed again.
/// Not a `[String: PasteboardType]`: a dictionary's first use makes the type metadata of its
/// storage, for which the Swift runtime checks that `String` is `Hashable` by searching every
/// protocol conformance the executable holds, more than a short-lived `pbctl` spends on types.
struct RecentSpellings {
    static let slotCount = 256
    private var slots: [(spelling: String, type: PasteboardType)?] = []

    func type(spelled spelling: String) -> PasteboardType? {
        // Byte for byte: `==` on strings compares canonical equivalents equal (`;` and U+037E),
        // and a spelling that is not ASCII must be parsed, to be refused.
        guard !slots.isEmpty, let slot = slots[Self.slot(of: spelling)], slot.spelling.utf8.elementsEqual(spelling.utf8) else { return nil }
        return slot.type
    }

    mutating func keep(_ type: PasteboardType, spelled spelling: String) {
        if slots.isEmpty { slots = Array(repeating: nil, count: Self.slotCount) }
        slots[Self.slot(of: spelling)] = (spelling, type)
    }

    /// The spelling's bytes hashed (``FNV1a``), folded to a slot.
    static func slot(of spelling: String) -> Int {
        let hash = FNV1a.hash(spelling.utf8)
        return Int(truncatingIfNeeded: hash ^ (hash >> 32)) & (slotCount - 1)
    }
}
