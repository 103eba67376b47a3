import Logging
import NIOCore
import NIOSSL
import PostgresNIO
import Synchronization

#if canImport(Glibc)
import Glibc
#endif

/// The PostgreSQL database several servers share: each pasteboard's change count and current
/// contents, the count compared and set in one statement (so that of two servers writing the
/// same count, one wins), and a `NOTIFY` per change for the others.
///
/// One connection for reads and writes (the service queue uses it one call at a time) and one
/// that only listens; either is opened again after a failure.
final class SharedStore: Sendable {
    static let channel = "pasteboardd"
    static let schemaVersion = 4
    /// How many recent changes of each pasteboard the database keeps, so that a server that
    /// hears of several at once takes each in, in order.
    static let keptChanges: Int64 = 64
    /// How many changes of a name are recorded as announced (a few dozen bytes each), for a
    /// server that missed them (its contents replaced before it read them, or the database
    /// away) to announce them still.
    static let keptAnnouncements: Int64 = 1024
    /// Large data travels in rows of this many bytes.
    static let chunkSize = 1 << 20

    let location: PostgresLocation
    /// This server, in the notifications it sends (so it skips its own).
    let origin: String
    /// The database's own id, made with its tables (a database made again has another): the
    /// name of the folder of each server's local copy of it (``localFolder(in:)``).
    var id: String { storeID.withLock { $0 } }
    private let storeID = Mutex<String>("")
    let logger: Logger
    private let connection = Mutex<PostgresConnection?>(nil)
    /// Whether ``lock(_:)`` opened a transaction that ``commit(_:)`` or ``release()`` ends.
    private let inTransaction = Atomic<Bool>(false)
    private let nextID = Atomic<Int>(1)

    private init(location: PostgresLocation, origin: String, logger: Logger) {
        self.location = location
        self.origin = origin
        self.logger = logger
    }

    /// Connects and creates or migrates the schema.
    ///
    /// - Throws: what to fix, in words: the server cannot be reached, the password or user is
    ///   wrong, the database does not exist.
    static func open(_ location: PostgresLocation, origin: String, logger: Logger) async throws(SharedStoreError) -> SharedStore {
        let store = SharedStore(location: location, origin: origin, logger: logger)
        let id = try await store.withConnection { connection in
            try await connection.withTransaction(logger: store.logger) { connection in
                try await store.migrate(connection, location: location)
            }
        }
        store.storeID.withLock { $0 = id }
        Task.detached { await store.sweepLeftChunks() }
        return store
    }

    /// Where a server whose state directory is `stateDirectory` keeps its local copy of this
    /// database (its history, the contents that stay home): a folder of its own, so that
    /// neither the pasteboards of the SQLite store kept there nor those of another database
    /// are taken for this one's.
    func localFolder(in stateDirectory: String) -> String {
        stateDirectory + "/shared/" + id
    }

    /// Creates the tables, or checks their version; one server at a time (servers started
    /// together would otherwise create them twice). Returns the database's id.
    private func migrate(_ connection: PostgresConnection, location: PostgresLocation) async throws -> String {
        // Keyed by the database as well: advisory locks are the whole PostgreSQL server's, and
        // servers of other databases on it (the tests' dozens) need not wait for each other.
        try await connection.query("SELECT pg_advisory_xact_lock(\(Self.migrationLock), hashtext(current_database()))", logger: logger)
        try await connection.query("CREATE TABLE IF NOT EXISTS pasteboardd_schema (version integer NOT NULL)", logger: logger)
        try await connection.query("""
            CREATE TABLE IF NOT EXISTS pasteboards (
                name text PRIMARY KEY, count bigint NOT NULL, listed boolean NOT NULL,
                changed_at bigint NOT NULL, expires_at bigint, private_to text)
            """, logger: logger)
        try await connection.query("""
            CREATE TABLE IF NOT EXISTS representations (
                name text NOT NULL, count bigint NOT NULL, item integer NOT NULL, position integer NOT NULL,
                type text NOT NULL, data bytea, promise_provider text, promise_bus text,
                PRIMARY KEY (name, item, position))
            """, logger: logger)
        let versions = try await connection.query("SELECT version FROM pasteboardd_schema", logger: logger).collect()
        let version = try versions.first?.decode(Int.self) ?? 0
        if version > Self.schemaVersion {
            throw SharedStoreError.unusable("the database \(location) was made by a newer pasteboardd (schema \(version)); upgrade this one")
        }
        if version < 2 {
            // 2: large data in chunks of its own, read only when asked for.
            try await connection.query("ALTER TABLE representations ADD COLUMN IF NOT EXISTS blob text, ADD COLUMN IF NOT EXISTS size bigint", logger: logger)
            try await connection.query("""
                CREATE TABLE IF NOT EXISTS chunks (blob text NOT NULL, seq integer NOT NULL, data bytea NOT NULL, PRIMARY KEY (blob, seq))
                """, logger: logger)
        }
        if version < 3 {
            // 3: each recent change kept, not only the current one.
            try await connection.query("""
                CREATE TABLE IF NOT EXISTS generations (
                    name text NOT NULL, count bigint NOT NULL, listed boolean NOT NULL, changed_at bigint NOT NULL,
                    expires_at bigint, private_to text, PRIMARY KEY (name, count))
                """, logger: logger)
            try await connection.query("ALTER TABLE representations DROP CONSTRAINT IF EXISTS representations_pkey", logger: logger)
            try await connection.query("ALTER TABLE representations ADD PRIMARY KEY (name, count, item, position)", logger: logger)
            try await connection.query("""
                INSERT INTO generations (name, count, listed, changed_at, expires_at, private_to)
                SELECT name, count, listed, changed_at, expires_at, private_to FROM pasteboards ON CONFLICT DO NOTHING
                """, logger: logger)
        }
        if versions.isEmpty {
            try await connection.query("INSERT INTO pasteboardd_schema (version) VALUES (\(Self.schemaVersion))", logger: logger)
        } else if version < Self.schemaVersion {
            try await connection.query("UPDATE pasteboardd_schema SET version = \(Self.schemaVersion)", logger: logger)
        }
        // When each chunk was written, so that those a server left behind (killed while
        // uploading, or its reader gone) can be told from uploads still in progress.
        // Looked up first (the table found as ALTER TABLE finds it, by the search path): ALTER
        // TABLE locks the whole table even when the column is there, which would hold up the
        // other servers' large data at every start.
        let madeAt = try await connection.query("""
            SELECT 1 FROM pg_attribute WHERE attrelid = to_regclass('chunks') AND attname = 'made_at' AND NOT attisdropped
            """, logger: logger).collect()
        if madeAt.isEmpty {
            try await connection.query("ALTER TABLE chunks ADD COLUMN IF NOT EXISTS made_at timestamptz NOT NULL DEFAULT now()", logger: logger)
        }
        // Each change as the servers announce it (count, listed, types), kept past a `Remove`
        // (which drops the contents and history), so that every server can announce every
        // change, also those whose contents were replaced before it read them.
        try await connection.query("""
            CREATE TABLE IF NOT EXISTS announcements (
                name text NOT NULL, count bigint NOT NULL, listed boolean NOT NULL, types text NOT NULL,
                PRIMARY KEY (name, count))
            """, logger: logger)
        // 4: an id of the database's own, for the folder of each server's local copy.
        try await connection.query("ALTER TABLE pasteboardd_schema ADD COLUMN IF NOT EXISTS id text", logger: logger)
        try await connection.query("""
            UPDATE pasteboardd_schema SET id = md5(random()::text || clock_timestamp()::text || current_database()) WHERE id IS NULL
            """, logger: logger)
        let ids = try await connection.query("SELECT id FROM pasteboardd_schema", logger: logger).collect()
        return try ids.first?.decode(String.self) ?? ""
    }

    /// The advisory lock (with the database's name) that makes one server at a time create or
    /// migrate a database's tables.
    static let migrationLock: Int32 = 0x7061_7374  // "past"
    /// The advisory lock (with the database's name) taken by a commit that lists a new name,
    /// so that `max-pasteboards` counts every other server's new names too.
    static let listingLock: Int32 = 0x6c69_7374  // "list"

    // MARK: Reading

    /// A pasteboard as the database has it.
    struct Row: Sendable {
        let name: String
        let count: UInt64
        let listed: Bool
        let changedAt: UInt64
        let expiresAt: UInt64?
        /// The server whose contents these are and stayed with it (concealed, transient or
        /// owner-only): the database has the count only.
        let privateTo: String?
        /// Each item's representations, in order.
        var items: [[Representation]]
        /// The types `Changed` names for this change on the other servers (none for contents
        /// that stayed home); recorded in the announcements, not read back with the row.
        var announced: [String] = []

        struct Representation: Sendable {
            let type: String
            /// The data, when small enough to travel in the row.
            let data: [UInt8]?
            let promiseProvider: String?
            let promiseBus: String?
            /// Larger data: the chunks it is in, and its size (read when asked for).
            var blob: String? = nil
            var size: UInt64? = nil
        }
    }

    /// Every pasteboard's change count.
    func counts() async throws(SharedStoreError) -> [String: UInt64] {
        try await withConnection { connection in
            var counts: [String: UInt64] = [:]
            for try await (name, count) in try await connection.query("SELECT name, count FROM pasteboards", logger: logger).decode((String, Int64).self) {
                counts[name] = UInt64(count)
            }
            return counts
        }
    }

    /// The change count of `name` (0 when the database has none).
    func count(of name: String) async throws(SharedStoreError) -> UInt64 {
        try await withConnection { connection in
            var count: UInt64 = 0
            for try await found in try await connection.query("SELECT count FROM pasteboards WHERE name = \(name)", logger: logger).decode(Int64.self) {
                count = UInt64(found)
            }
            return count
        }
    }

    /// The changes of `name` after `count` the database keeps, oldest first: each of the last
    /// ``keptChanges``, but those before a `Remove`, which drops them.
    func changes(of name: String, after count: UInt64) async throws(SharedStoreError) -> [UInt64] {
        try await withConnection { connection in
            var counts: [UInt64] = []
            let rows = try await connection.query(
                "SELECT count FROM generations WHERE name = \(name) AND count > \(Int64(clamping: count)) ORDER BY count", logger: logger)
            for try await count in rows.decode(Int64.self) {
                counts.append(UInt64(count))
            }
            return counts
        }
    }

    /// A change as it was announced: enough to announce it again elsewhere.
    struct Announcement: Sendable, Equatable {
        let count: UInt64
        let listed: Bool
        let types: [String]
    }

    /// The announcements of `name` between two counts (both excluded), oldest first: as many
    /// of those changes as the database still records (the last ``keptAnnouncements``).
    func announcements(of name: String, after first: UInt64, before last: UInt64) async throws(SharedStoreError) -> [Announcement] {
        try await withConnection { connection in
            var found: [Announcement] = []
            let rows = try await connection.query("""
                SELECT count, listed, types FROM announcements
                WHERE name = \(name) AND count > \(Int64(clamping: first)) AND count < \(Int64(clamping: last)) ORDER BY count
                """, logger: logger)
            for try await (count, listed, types) in rows.decode((Int64, Bool, String).self) {
                found.append(Announcement(count: UInt64(count), listed: listed, types: types.isEmpty ? [] : types.split(separator: "\n").map(String.init)))
            }
            return found
        }
    }

    /// One pasteboard as of change `count` (while the database keeps it; nil: its current
    /// contents), and its items.
    func load(_ name: String, count wanted: UInt64? = nil) async throws(SharedStoreError) -> Row? {
        try await withConnection { connection in
            let rows = if let wanted {
                try await connection.query("""
                    SELECT count, listed, changed_at, expires_at, private_to FROM generations WHERE name = \(name) AND count = \(Int64(wanted))
                    UNION ALL SELECT count, listed, changed_at, expires_at, private_to FROM pasteboards
                    WHERE name = \(name) AND NOT EXISTS (SELECT 1 FROM generations WHERE name = \(name) AND count = \(Int64(wanted)))
                    """, logger: logger)
            } else {
                try await connection.query(
                    "SELECT count, listed, changed_at, expires_at, private_to FROM pasteboards WHERE name = \(name)", logger: logger)
            }
            var found: Row?
            for try await (count, listed, changedAt, expiresAt, privateTo) in rows.decode((Int64, Bool, Int64, Int64?, String?).self) {
                found = Row(name: name, count: UInt64(count), listed: listed, changedAt: UInt64(changedAt), expiresAt: expiresAt.map(UInt64.init), privateTo: privateTo, items: [])
            }
            guard var row = found else { return nil }
            let representations = try await connection.query("""
                SELECT item, type, data, promise_provider, promise_bus, blob, size FROM representations
                WHERE name = \(name) AND count = \(Int64(row.count)) ORDER BY item, position
                """, logger: logger)
            for try await (item, type, data, provider, bus, blob, size) in representations.decode((Int, String, ByteBuffer?, String?, String?, String?, Int64?).self) {
                while row.items.count <= item { row.items.append([]) }
                row.items[item].append(Row.Representation(
                    type: type, data: data.map { Array($0.readableBytesView) }, promiseProvider: provider, promiseBus: bus,
                    blob: blob, size: size.map { UInt64($0) }))
            }
            return row
        }
    }

    // MARK: Writing

    /// Commits `rows` in one transaction, each only if its count is above the pasteboard's (the
    /// row is held by ``lock(_:)``, and what other servers wrote taken in, so it is), and
    /// notifies the other servers.
    ///
    /// - Throws: ``SharedStoreError/raced(_:)`` when another server changed one of them first
    ///   (nothing is written), ``SharedStoreError/unavailable(_:)`` when the database cannot be
    ///   reached.
    ///
    /// A row that lists a name the database did not list is refused with
    /// ``SharedStoreError/quota(_:)`` when more than `maxListed` names would then be listed:
    /// such commits take turns (an advisory lock), so that servers listing names at the same
    /// moment cannot pass the limit together.
    func commit(_ rows: [Row], maxListed: UInt64 = .max) async throws(SharedStoreError) {
        try await withConnection { connection in
            if !inTransaction.load(ordering: .relaxed) {
                try await connection.query("BEGIN", logger: logger)
                inTransaction.store(true, ordering: .relaxed)
            }
            do {
                for row in rows {
                    try await write(row, on: connection, maxListed: maxListed)
                }
                try await connection.query("COMMIT", logger: logger)
                inTransaction.store(false, ordering: .relaxed)
            } catch {
                _ = try? await connection.query("ROLLBACK", logger: logger)
                inTransaction.store(false, ordering: .relaxed)
                throw error
            }
        }
    }

    /// Opens a transaction that holds `name` until ``commit(_:)`` or ``release()``, and returns
    /// its count (nil: not in the database yet): a change made on what this reads cannot be
    /// beaten by another server's, which waits for it.
    func lock(_ name: String) async throws(SharedStoreError) -> UInt64? {
        try await withConnection { connection in
            if !inTransaction.load(ordering: .relaxed) {
                try await connection.query("BEGIN", logger: logger)
                inTransaction.store(true, ordering: .relaxed)
            }
            var count: UInt64?
            for try await found in try await connection.query("SELECT count FROM pasteboards WHERE name = \(name) FOR UPDATE", logger: logger).decode(Int64.self) {
                count = UInt64(found)
            }
            return count
        }
    }

    /// Ends the transaction ``lock(_:)`` opened when nothing was committed in it.
    func release() async {
        guard inTransaction.load(ordering: .relaxed) else { return }
        inTransaction.store(false, ordering: .relaxed)
        _ = try? await withConnection { connection in try await connection.query("ROLLBACK", logger: logger) }
    }

    private func write(_ row: Row, on connection: PostgresConnection, maxListed: UInt64) async throws {
        let count = Int64(row.count)
        let expires = row.expiresAt.map { Int64(clamping: $0) }
        // The name's row is held already (lock(_:)): whether it was listed is read as it is
        // updated, in the same round trip.
        let updatedRows = try await connection.query("""
            WITH previous AS (SELECT listed FROM pasteboards WHERE name = \(row.name))
            UPDATE pasteboards SET count = \(count), listed = \(row.listed), changed_at = \(Int64(clamping: row.changedAt)),
                expires_at = \(expires), private_to = \(row.privateTo)
            WHERE name = \(row.name) AND count < \(count) RETURNING (SELECT listed FROM previous)
            """, logger: logger)
        var updated: Bool?
        for try await previous in updatedRows.decode(Bool?.self) { updated = previous ?? false }
        let wasListed: Bool
        if let previous = updated {
            wasListed = previous
        } else {
            // Not there yet (first written through the database), or moved on: one of the two.
            let inserted = try await connection.query("""
                INSERT INTO pasteboards (name, count, listed, changed_at, expires_at, private_to)
                VALUES (\(row.name), \(count), \(row.listed), \(Int64(clamping: row.changedAt)), \(expires), \(row.privateTo))
                ON CONFLICT (name) DO NOTHING RETURNING name
                """, logger: logger).collect()
            guard !inserted.isEmpty else { throw SharedStoreError.raced(row.name) }
            wasListed = false
        }
        if row.listed, !wasListed, maxListed < UInt64(Int64.max) {
            try await connection.query("SELECT pg_advisory_xact_lock(\(Self.listingLock), hashtext(current_database()))", logger: logger)
            var total: Int64 = 0
            for try await found in try await connection.query("SELECT count(*) FROM pasteboards WHERE listed", logger: logger).decode(Int64.self) {
                total = found
            }
            if UInt64(max(0, total)) > maxListed {
                throw SharedStoreError.quota("there are already \(maxListed) pasteboards (max-pasteboards); remove some first")
            }
        }
        // The generation, and the change as announced (types are printable ASCII: a newline
        // parts them) with the oldest announcements beyond those kept dropped, in one statement:
        // one round trip, as the generation alone took.
        try await connection.query("""
            WITH trimmed AS (DELETE FROM announcements WHERE name = \(row.name) AND count <= \(count - Self.keptAnnouncements)),
            announced AS (
                INSERT INTO announcements (name, count, listed, types)
                VALUES (\(row.name), \(count), \(row.listed), \(row.announced.joined(separator: "\n"))) ON CONFLICT DO NOTHING)
            INSERT INTO generations (name, count, listed, changed_at, expires_at, private_to)
            VALUES (\(row.name), \(count), \(row.listed), \(Int64(clamping: row.changedAt)), \(expires), \(row.privateTo))
            ON CONFLICT DO NOTHING
            """, logger: logger)
        for (item, representations) in row.items.enumerated() {
            for (position, representation) in representations.enumerated() {
                let data = representation.data.map { ByteBuffer(bytes: $0) }
                let size = representation.size.map { Int64($0) }
                try await connection.query("""
                    INSERT INTO representations (name, count, item, position, type, data, promise_provider, promise_bus, blob, size)
                    VALUES (\(row.name), \(count), \(item), \(position), \(representation.type), \(data),
                        \(representation.promiseProvider), \(representation.promiseBus), \(representation.blob), \(size))
                    ON CONFLICT DO NOTHING
                    """, logger: logger)
            }
        }
        // Changes older than the kept ones go, and the chunks only they used; a `Remove` drops
        // every earlier one (the contents and the history go with it).
        let oldest = row.listed ? count - Self.keptChanges : count - 1
        try await connection.query("DELETE FROM generations WHERE name = \(row.name) AND count <= \(oldest)", logger: logger)
        var dropped: [String] = []
        let gone = try await connection.query("DELETE FROM representations WHERE name = \(row.name) AND count <= \(oldest) RETURNING blob", logger: logger)
        for try await blob in gone.decode(String?.self) {
            if let blob { dropped.append(blob) }
        }
        for blob in Set(dropped) {
            try await connection.query("""
                DELETE FROM chunks WHERE blob = \(blob) AND NOT EXISTS (SELECT 1 FROM representations WHERE blob = \(blob))
                """, logger: logger)
        }
        try await connection.query("SELECT pg_notify(\(Self.channel), \(Notice.changed(name: row.name, count: row.count).payload(from: origin)))", logger: logger)
    }

    // MARK: Large data

    /// Copies the file `fd` (from its start) into chunks named `blob`, on a connection of its
    /// own (the service queue's may be in a transaction): 1 MiB at a time, never held whole.
    func upload(_ fd: Int32, as blob: String) async throws(SharedStoreError) {
        do {
            let connection = try await openConnection()
            defer { Task { try? await connection.close() } }
            try await connection.query("DELETE FROM chunks WHERE blob = \(blob)", logger: logger)
            var buffer = ByteBufferAllocator().buffer(capacity: Self.chunkSize)
            var sequence = 0, offset: off_t = 0
            while true {
                buffer.clear()
                let count = buffer.writeWithUnsafeMutableBytes(minimumWritableBytes: Self.chunkSize) { raw in
                    max(pread(fd, raw.baseAddress, Self.chunkSize, offset), 0)
                }
                if count == 0 { break }
                offset += off_t(count)
                try await connection.query("INSERT INTO chunks (blob, seq, data) VALUES (\(blob), \(sequence), \(buffer))", logger: logger)
                sequence += 1
            }
        } catch {
            throw .unavailable("the PostgreSQL store \(location) \(Self.describe(error))")
        }
    }

    /// Writes the chunks of `blob` to `fd`, in order, as they arrive.
    func download(_ blob: String, to fd: Int32) async throws(SharedStoreError) -> UInt64 {
        do {
            let connection = try await openConnection()
            defer { Task { try? await connection.close() } }
            var total: UInt64 = 0
            for try await chunk in try await connection.query("SELECT data FROM chunks WHERE blob = \(blob) ORDER BY seq", logger: logger).decode(ByteBuffer.self) {
                try chunk.withUnsafeReadableBytes { raw in
                    var written = 0
                    while written < raw.count {
                        let count = Glibc.write(fd, raw.baseAddress! + written, raw.count - written)
                        if count < 0, errno == EINTR { continue }
                        guard count > 0 else { throw SharedStoreError.unavailable("cannot keep the data: \(String(cString: strerror(errno)))") }
                        written += count
                    }
                }
                total += UInt64(chunk.readableBytes)
            }
            return total
        } catch let error as SharedStoreError {
            throw error
        } catch {
            throw .unavailable("the PostgreSQL store \(location) \(Self.describe(error))")
        }
    }

    // MARK: Listening

    /// What the servers tell each other through `NOTIFY`, each message from one `origin`.
    enum Notice: Sendable, Equatable {
        /// A change committed: its pasteboard and count.
        case changed(name: String, count: UInt64)
        /// The server on the bus `bus` is asked for the data of a promise of its own client
        /// (`request` names the question, for the answer).
        case asked(bus: String, request: String, name: String, count: UInt64, item: UInt32, type: String)
        /// The data asked for with `request` is in the chunks named `chunks`.
        case answered(request: String, chunks: String)
        /// The data asked for with `request` could not be had, and why.
        case refused(request: String, reason: String)

        /// `c ORIGIN COUNT NAME`, `a ORIGIN BUS REQUEST COUNT ITEM TYPE\tNAME`, `r ORIGIN REQUEST
        /// CHUNKS`, `f ORIGIN REQUEST\tREASON`: names and reasons last, as they may hold spaces.
        func payload(from origin: String) -> String {
            switch self {
            case .changed(let name, let count): "c \(origin) \(count) \(name)"
            case .asked(let bus, let request, let name, let count, let item, let type): "a \(origin) \(bus) \(request) \(count) \(item) \(type)\t\(name)"
            case .answered(let request, let chunks): "r \(origin) \(request) \(chunks)"
            case .refused(let request, let reason): "f \(origin) \(request)\t\(reason.prefix(1000))"
            }
        }

        /// The message and its origin; nil for one that is not understood.
        init?(payload: String, origin: inout String) {
            let fields = payload.split(separator: " ", maxSplits: 2, omittingEmptySubsequences: false)
            guard fields.count == 3 else { return nil }
            origin = String(fields[1])
            let rest = String(fields[2])
            switch fields[0] {
            case "c":
                let parts = rest.split(separator: " ", maxSplits: 1, omittingEmptySubsequences: false)
                guard parts.count == 2, let count = UInt64(parts[0]) else { return nil }
                self = .changed(name: String(parts[1]), count: count)
            case "a":
                let (head, name) = Self.splitTab(rest)
                let parts = head.split(separator: " ")
                guard parts.count == 5, let name, let count = UInt64(parts[2]), let item = UInt32(parts[3]) else { return nil }
                self = .asked(bus: String(parts[0]), request: String(parts[1]), name: name, count: count, item: item, type: String(parts[4]))
            case "r":
                let parts = rest.split(separator: " ")
                guard parts.count == 2 else { return nil }
                self = .answered(request: String(parts[0]), chunks: String(parts[1]))
            case "f":
                let (request, reason) = Self.splitTab(rest)
                self = .refused(request: request, reason: reason ?? "")
            default:
                return nil
            }
        }

        private static func splitTab(_ text: String) -> (String, String?) {
            guard let tab = text.firstIndex(of: "\t") else { return (text, nil) }
            return (String(text[..<tab]), String(text[text.index(after: tab)...]))
        }
    }

    /// Sends `notice` to the other servers, on a connection of its own (the service queue's may
    /// be in a transaction).
    func send(_ notice: Notice) async throws(SharedStoreError) {
        do {
            let connection = try await openConnection()
            defer { Task { try? await connection.close() } }
            try await connection.query("SELECT pg_notify(\(Self.channel), \(notice.payload(from: origin)))", logger: logger)
        } catch {
            throw .unavailable("the PostgreSQL store \(location) \(Self.describe(error))")
        }
    }

    /// Deletes the chunks named `chunks` (provided data, once read), on a connection of its own
    /// (the service queue's may be in a transaction).
    func deleteChunks(_ chunks: String) async {
        guard let connection = try? await openConnection() else { return }
        _ = try? await connection.query("DELETE FROM chunks WHERE blob = \(chunks)", logger: logger)
        try? await connection.close()
    }

    /// Listens for the other servers' messages until cancelled: `heard` for each, in the order
    /// they were sent; `caughtUp` each time listening (re)starts, after which whatever changed
    /// while it was not listening must be read from the database. A lost connection is opened
    /// again, every second until the database answers.
    func listen(heard: @escaping @Sendable (Notice) -> Void, caughtUp: @escaping @Sendable () -> Void) -> Task<Void, Never> {
        Task { [self] in
            var reported = false
            while !Task.isCancelled {
                do {
                    let listener = try await openConnection()
                    defer { Task { try? await listener.close() } }
                    try await listener.listen(on: Self.channel) { notifications in
                        if reported { logger.notice("store: listening to \(location) again") }
                        reported = false
                        caughtUp()
                        for try await notification in notifications {
                            var from = ""
                            guard let notice = Notice(payload: notification.payload, origin: &from), from != origin else { continue }
                            heard(notice)
                        }
                    }
                } catch {
                    if !reported { logger.warning("store: lost \(location) (\(Self.describe(error))); trying again every second") }
                    reported = true
                }
                try? await Task.sleep(for: .seconds(1))
            }
        }
    }

    // MARK: Connecting

    private var configuration: PostgresConnection.Configuration {
        get throws {
            var configuration = try location.socketPath.map {
                PostgresConnection.Configuration(unixSocketPath: $0, username: location.user, password: location.password, database: location.database)
            } ?? PostgresConnection.Configuration(
                host: location.host, port: location.port, username: location.user, password: location.password,
                database: location.database, tls: try location.tlsSetting())
            configuration.options.connectTimeout = .seconds(3)
            return configuration
        }
    }

    /// Gives up the service queue's connection (it stopped answering): the next call opens
    /// a new one, and the transaction it had open ends with it.
    func abandonConnection() {
        inTransaction.store(false, ordering: .relaxed)
        if let existing = connection.withLock({ $0.take() }) { Task { try? await existing.close() } }
    }

    /// A new connection: for work that must not join the service queue's transaction (large
    /// data, messages), and for listening.
    func openConnection() async throws -> PostgresConnection {
        try await PostgresConnection.connect(configuration: configuration, id: nextID.add(1, ordering: .relaxed).newValue, logger: logger)
    }

    /// Runs `body` on the connection, opening it first if need be; a failure of the connection
    /// itself closes it, so the next call opens a new one.
    private func withConnection<Result: Sendable>(_ body: (PostgresConnection) async throws -> Result) async throws(SharedStoreError) -> Result {
        do {
            let open: PostgresConnection
            if let existing = connection.withLock({ $0 }), !existing.isClosed {
                open = existing
            } else {
                open = try await openConnection()
                connection.withLock { $0 = open }
            }
            return try await body(open)
        } catch let error as SharedStoreError {
            throw error
        } catch {
            inTransaction.store(false, ordering: .relaxed)
            if let existing = connection.withLock({ $0.take() }) { Task { try? await existing.close() } }
            throw .unavailable("the PostgreSQL store \(location) \(Self.describe(error))")
        }
    }

    /// What went wrong, in words: PostgreSQL's own message when it sent one.
    static func describe(_ error: any Error) -> String {
        if let error = error as? PSQLError {
            if let message = error.serverInfo?[.message] {
                return "refused: \(message)"
            }
            if let underlying = error.underlying as? NIOSSLError, case .handshakeFailed = underlying {
                return "refused TLS: its certificate was not accepted (\(underlying)); give the authority that issued it with sslrootcert=/path/ca.pem and the host name it was issued for, or sslmode=require not to check it"
            }
            if let underlying = error.underlying {
                return "cannot be reached: \(underlying)"
            }
            switch error.code {
            case .authMechanismRequiresPassword:
                return "asks for a password and none was given: put it in the password file (~/.pgpass or PGPASSFILE, used only when of mode 0600) or PGPASSWORD"
            case .sslUnsupported:
                return "does not take TLS connections, which sslmode=require or stricter asks for: enable ssl on the server, or use sslmode=prefer"
            case .unsupportedAuthMechanism:
                return "asks for an authentication method this server cannot answer: use scram-sha-256, md5 or password in pg_hba.conf"
            case .serverClosedConnection, .uncleanShutdown:
                return "closed the connection"
            default:
                return "failed: \(error.code)"
            }
        }
        if let error = error as? PostgresTransactionError {
            return describe(error.closureError ?? error.commitError ?? error.beginError ?? error)
        }
        return "failed: \(error)"
    }
}

/// Why the shared store could not do something.
enum SharedStoreError: Error, Sendable, CustomStringConvertible {
    /// Another server changed the pasteboard first: read it again and redo the change.
    case raced(String)
    /// The database cannot be reached (or refused): the message names it.
    case unavailable(String)
    /// The database cannot be used by this server.
    case unusable(String)
    /// A limit held across the servers would be passed: the message says which.
    case quota(String)

    var description: String {
        switch self {
        case .raced(let name): "another server changed '\(name)' at the same moment"
        case .unavailable(let message), .unusable(let message), .quota(let message): message
        }
    }
}
