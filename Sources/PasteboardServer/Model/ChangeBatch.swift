import PasteboardModel

/// Changes made on the service queue and not yet committed: the calls of one batch see them,
/// the bus thread does not, and the store receives them in one transaction.
///
/// Committing several changes at once is what lets many clients write at the speed of one: the
/// pages a transaction touches and the log's commit record are shared by all its changes. A
/// reply still means committed: the calls of a batch are answered once it is.
struct ChangeBatch {
    /// The newest state of each name the batch changed.
    private(set) var staged: [PasteboardName: PasteboardEntry] = [:]
    /// The store's changes, in order.
    private(set) var saves: [Store.Change] = []
    /// Each changed name's committed state before the batch, to put back if the commit fails.
    private(set) var before: [PasteboardName: PasteboardEntry] = [:]
    /// How many names were listed before the batch.
    let listedBefore: Int

    init(listedCount: Int) {
        listedBefore = listedCount
    }

    var isEmpty: Bool { saves.isEmpty }

    mutating func stage(_ change: Store.Change, replacing committed: @autoclosure () -> PasteboardEntry) {
        if before[change.name] == nil { before[change.name] = committed() }
        staged[change.name] = change.entry
        saves.append(change)
    }
}
