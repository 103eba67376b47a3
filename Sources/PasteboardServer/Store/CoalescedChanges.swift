/// Several changes' rows reduced to what they leave in the database, name by name: one
/// transaction then writes each pasteboard's row once, and never inserts a generation's rows
/// that a later change of the same transaction deletes.
///
/// A burst of small writes reaches the database together (the ``CommitLog`` keeps them for
/// up to 100 ms): a clipboard manager or a script copying in a loop makes hundreds of changes
/// of one name in that time, of which only the last `history-depth` generations (32 by
/// default) stay. Applied one by one, each change upserts the pasteboard's row, inserts its
/// contents and deletes the generation it pushes out of the history; reduced, the
/// transaction does the part that remains: the row as the last change left it, the deletes of
/// generations that were in the database before, and the inserts of generations still there
/// at the end. The database ends the same either way (the store's tests compare the two).
struct CoalescedChanges {
    /// What the changes of one name leave.
    struct Name {
        let name: String
        /// A `Remove` among the changes: every row of the name stored before goes.
        var deletesAll = false
        /// Generations stored before these changes that they delete, in the order deleted.
        var deleted: [UInt64] = []
        /// The last change: the pasteboard's row as it ends.
        var last: ChangeRows
        /// The changes whose generation's rows remain, in order (each inserts its own).
        var inserted: [ChangeRows] = []
    }

    /// Each name the changes touch, in the order of its first change.
    private(set) var names: [Name] = []

    init(_ changes: [ChangeRows]) {
        var index: [String: Int] = [:]
        for change in changes {
            if let at = index[change.name] {
                names[at].add(change)
            } else {
                index[change.name] = names.count
                var name = Name(name: change.name, last: change)
                name.add(change)
                names.append(name)
            }
        }
    }
}

extension CoalescedChanges.Name {
    /// Folds in the next change of this name, as ``Store/apply(_:to:)`` would apply it.
    mutating func add(_ change: ChangeRows) {
        // What the reduction rests on: a name's counts only grow.
        assert(change.count >= last.count, "'\(name)': change \(change.count) after \(last.count)")
        if !change.listed {
            deletesAll = true
            deleted = []
            inserted = []
        } else if !change.keepsPrevious, change.replaced > 0 {
            delete(change.replaced)
        }
        for count in change.pruned { delete(count) }
        last = change
        // Counts only grow: no later change inserts this generation again, so its rows are the
        // change's own until a later one deletes them.
        if !change.representations.isEmpty { inserted.append(change) }
    }

    /// Deletes generation `count`: from the inserts if one of these changes made it, else from
    /// what the database holds.
    private mutating func delete(_ count: UInt64) {
        if let index = inserted.firstIndex(where: { $0.count == count }) {
            inserted.remove(at: index)
        } else if !deletesAll, !deleted.contains(count) {
            // (After a `Remove`, what the database held is gone already.)
            deleted.append(count)
        }
    }
}
