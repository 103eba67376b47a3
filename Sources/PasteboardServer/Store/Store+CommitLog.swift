import GRDB

/// The store's side of the ``CommitLog``: recording small changes before the database has
/// them, and applying at start what a killed server left there.
extension Store {
    /// The largest record made on the bus thread: the most data a small write brings (256 KiB,
    /// ``PasteboardObject/smallWriteBytes``) and room for the rest of its rows.
    static let largestRecord = 320 * 1024

    /// Records `changes` in the ``CommitLog`` instead of committing them: they are as durable
    /// as committed, and reach the database with the next ``save(_:)``. False when the log
    /// cannot take them (no log, no room, too large, or suspended after a failure that puts the
    /// log in doubt, ``StoreHealth``): nothing is recorded then.
    ///
    /// The size is checked before anything is encoded: a change's rows are its whole contents
    /// (an append's included), which may be far larger than what the call brought. A record
    /// over ``largestRecord`` is refused too, so that such a change takes the queue: the bus
    /// thread encodes and copies what it records.
    func record(_ changes: [Change]) -> Bool {
        guard let log, !health.isLogSuspended else { return false }
        let rows = changes.map(ChangeRows.init)
        let size = rows.reduce(8) { $0 + $1.encodedSize }
        guard size <= Self.largestRecord, log.hasRoom(for: size) else { return false }
        var bytes = ByteWriter(reservingCapacity: size)
        bytes.uint64(UInt64(rows.count))
        rows.forEach { $0.encode(into: &bytes) }
        assert(bytes.bytes.count == size, "ChangeRows.encodedSize disagrees with encode(into:)")
        guard log.append(bytes.bytes) else { return false }
        logged += rows
        return true
    }

    /// The changes recorded and not yet applied, to be applied by ``apply(_:)`` without the
    /// turn; the log keeps their records until ``startLogOverIfApplied()``.
    func takeLogged() -> [ChangeRows] {
        defer { logged = [] }
        return logged
    }

    /// Changes ``takeLogged()`` gave that could not be applied because of `error`, back in
    /// front of those recorded since; the store's ``health`` hears of the failure.
    func putBack(_ rows: [ChangeRows], failedWith error: any Error) {
        logged = rows + logged
        health.databaseFailed(error)
    }

    /// The log applied: it may take changes again, and starts over if nothing waits.
    func logApplied() {
        health.saved()
        startLogOverIfApplied()
    }

    /// Applies recorded changes in one transaction, reduced to what they leave
    /// (``CoalescedChanges``). Runs on the service queue without the turn (the database is the
    /// queue's alone; the log and ``logged`` are the turn's).
    func apply(_ rows: [ChangeRows]) throws {
        try transaction { db in
            try Self.apply(coalescing: rows, to: db)
        }
        // The pasteboard and contents b-trees, plus the data.
        checkpointer.committed(estimatedPages: 2 * rows.count + rows.reduce(0) { $0 + $1.inlineBytes } / 4096)
    }

    /// Starts the log over when every change it records is in the database. (Records applied
    /// while newer ones wait stay until then: a start skips what the database already has.)
    private func startLogOverIfApplied() {
        if logged.isEmpty { log?.reset() }
    }

    /// Applies what a killed server left in the log, then starts the log over. A change the
    /// database already has (the server died between its commit and the log's reset) is
    /// skipped: a pasteboard's count only grows.
    func replayLog() throws {
        guard let log else { return }
        let (payloads, damaged) = log.records()
        var changes: [ChangeRows] = []
        for payload in payloads {
            guard let batch = Self.changes(in: payload) else {
                replayProblem = "the commit log holds a record that cannot be read; the changes from it on are lost"
                break
            }
            changes += batch
        }
        if damaged {
            let problem = "the commit log ends in a damaged record (a change cut short, never answered); it was left out"
            replayProblem = replayProblem.map { "\($0); \(problem)" } ?? problem
        }
        if !changes.isEmpty {
            var applied = 0
            try transaction { db in
                for change in changes {
                    let stored = try UInt64.fetchOne(db, sql: "SELECT count FROM pasteboard WHERE name = ?", arguments: [change.name])
                    if let stored, stored >= change.count { continue }
                    try Self.apply(change, to: db)
                    applied += 1
                }
            }
            replayed = applied
        }
        log.reset()
    }

    /// The changes one record holds (a count, then each change's rows); nil when it does not
    /// read as such.
    private static func changes(in payload: [UInt8]) -> [ChangeRows]? {
        var reader = ByteReader(payload)
        guard let count = reader.count() else { return nil }
        var changes: [ChangeRows] = []
        for _ in 0..<count {
            guard let rows = ChangeRows(from: &reader) else { return nil }
            changes.append(rows)
        }
        return reader.isAtEnd ? changes : nil
    }
}
