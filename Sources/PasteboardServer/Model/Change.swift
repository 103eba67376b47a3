import PasteboardModel

/// One change to a pasteboard, as the `Changed` (and `Removed`) signals announce it.
struct Change: Sendable, Equatable {
    let name: PasteboardName
    let count: UInt64
    let types: [PasteboardType]
    /// The change was a `Remove`: `Removed` follows `Changed`.
    let removed: Bool
    /// The change listed the name or unlisted it: the `Pasteboards` property changed with it,
    /// and `PropertiesChanged` follows.
    var relisted = false
}

extension Change {
    /// The change that left `name` at `count`, `listed` or not, after contents that were
    /// listed (`wasListed`) or not: a `Remove` when it unlisted the name, announced without
    /// types.
    init(name: PasteboardName, count: UInt64, types: [PasteboardType], listed: Bool, after wasListed: Bool) {
        let removed = wasListed && !listed
        self.init(name: name, count: count, types: removed ? [] : types, removed: removed, relisted: listed != wasListed)
    }
}
