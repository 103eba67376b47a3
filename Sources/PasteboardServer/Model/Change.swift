import PasteboardModel

/// One change to a pasteboard, as the `Changed` (and `Removed`) signals announce it.
struct Change: Sendable, Equatable {
    let name: PasteboardName
    let count: UInt64
    let types: [PasteboardType]
    /// The change was a `Remove`: `Removed` follows `Changed`.
    let removed: Bool
}
