import PostgresNIO

/// Chunks nobody will read: left by a server killed while uploading large data (before the
/// change that would have named them), or provided for a reader on another host that never
/// came to read them.
extension SharedStore {
    /// How old a chunk no change names must be to be taken for left behind: far longer than
    /// any upload or provided answer takes.
    static let leftChunkAge = "1 day"

    /// Deletes the chunks no change names that were written more than ``leftChunkAge`` ago.
    /// Run once as a server opens the store (off its start-up); a failure is logged and left to
    /// the next start.
    func sweepLeftChunks() async {
        do {
            let connection = try await openConnection()
            defer { Task { try? await connection.close() } }
            let swept = try await connection.query("""
                DELETE FROM chunks c WHERE c.made_at < now() - \(Self.leftChunkAge)::interval
                    AND NOT EXISTS (SELECT 1 FROM representations r WHERE r.blob = c.blob)
                RETURNING c.blob
                """, logger: logger)
            var blobs = Set<String>()
            for try await blob in swept.decode(String.self) { blobs.insert(blob) }
            if !blobs.isEmpty { logger.info("store: deleted the chunks of \(blobs.count) large data left behind in \(location)") }
        } catch {
            logger.warning("store: could not look for large data left behind in \(location): \(Self.describe(error))")
        }
    }
}
