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
    /// log in doubt, ``logSuspended``): nothing is recorded then.
    ///
    /// The size is checked before anything is encoded: a change's rows are its whole contents
    /// (an append's included), which may be far larger than what the call brought. A record
    /// over ``largestRecord`` is refused too, so that such a change takes the queue: the bus
    /// thread encodes and copies what it records.
    func record(_ changes: [Change]) -> Bool {
        guard let log, !logSuspended else { return false }
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
    /// front of those recorded since. Unless the log is as good as before (``keepsLogDurable(_:)``),
    /// it takes no more changes until a save succeeds.
    func putBack(_ rows: [ChangeRows], failedWith error: any Error) {
        logged = rows + logged
        suspendLogUnlessDurable(after: error)
    }

    /// After the database failed with `error`: unless the log is as good as before
    /// (``keepsLogDurable(_:)``), it takes no more changes until a save succeeds.
    func suspendLogUnlessDurable(after error: any Error) {
        if !Self.keepsLogDurable(error) { logSuspended = true }
    }

    /// The log applied: it may take changes again.
    func logApplied() {
        logSuspended = false
        startLogOverIfApplied()
    }

    /// Whether the log still keeps what it holds when the database fails with `error`: a busy or
    /// locked database (another process holds it) and a full disk (the log's blocks are
    /// reserved) leave it as durable as before. Anything else (a read-only file system, the
    /// state directory deleted, an I/O error) may mean the log's pages never reach the disk
    /// either, or reach a file no start will read.
    static func keepsLogDurable(_ error: any Error) -> Bool {
        guard let error = error as? DatabaseError else { return false }
        return [.SQLITE_BUSY, .SQLITE_LOCKED, .SQLITE_FULL].contains(error.resultCode)
    }

    /// Applies recorded changes in one transaction. Runs on the service queue without the turn
    /// (the database is the queue's alone; the log and ``logged`` are the turn's).
    func apply(_ rows: [ChangeRows]) throws {
        try transaction { db in
            for change in rows {
                try Self.apply(change, to: db)
            }
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
