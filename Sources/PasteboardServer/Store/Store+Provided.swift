import GRDB

/// The data a promise's writer provided, stored in the rows that held the promise.
extension Store {
    /// Turns every row of `promise` (its contents at the count it was made, and those of later
    /// changes that kept it: appends, restores) into rows holding `data`, the provided bytes
    /// inline or the id of their blob file. Rows already holding data are left alone.
    func keepProvided(_ promise: Promise, data: ChangeRows.Representation.Data, size: UInt64) throws {
        var bytes = SQLValue.null, blobID = SQLValue.null
        switch data {
        case .inline(let inline): bytes = .bytes(inline)
        case .blob(let id): blobID = .text(id)
        case .promised: return
        }
        try transaction { db in
            try db.run(
                """
                UPDATE contents SET size = ?, data = ?, blob = ?, provider = NULL, promise_count = NULL, promise_item = NULL
                WHERE pasteboard = ? AND provider = ? AND promise_count = ? AND promise_item = ? AND type = ?
                """,
                [.integer(size), bytes, blobID, .text(promise.name.rawValue), .text(promise.bus + "/" + promise.provider),
                 .integer(promise.count), .integer(Int(promise.item)), .text(promise.type.rawValue)])
        }
    }
}
