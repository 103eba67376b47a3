import Foundation

extension Pasteboard {
    /// One generation of a pasteboard's contents, as a clipboard manager lists it.
    public struct HistoryEntry: Sendable, Hashable, Identifiable {
        /// The change count that made it; ``Pasteboard/restore(changeCount:)`` takes it.
        public let changeCount: Int
        /// The change count: one pasteboard's entries never share one.
        public var id: Int { changeCount }
        /// When it was written.
        public let date: Date
        /// Its types, first item first, as ``Pasteboard/types`` listed them then.
        public let types: [UTType]
    }

    /// The contents kept, newest first: the current ones, then earlier generations, up to
    /// `limit` entries (0: as many as the server keeps, its `history-depth`). Concealed and
    /// transient contents never appear; contents written with an expiration date appear only
    /// while they are current.
    ///
    /// ```swift
    /// for entry in try await Pasteboard.general.history(limit: 5) {
    ///     print(entry.changeCount, entry.date, entry.types.map(\.identifier))
    /// }
    /// ```
    public func history(limit: Int = 0) async throws -> [HistoryEntry] {
        precondition(limit >= 0, "a history limit is not negative (0: every entry kept)")
        return try await proxy.history(name.rawValue, limit: UInt32(clamping: limit)).map { entry in
            HistoryEntry(
                changeCount: Int(clamping: entry.count), date: Date(timeIntervalSince1970: Double(entry.time) / 1000),
                types: entry.types.map(UTType.types(for:)))
        }
    }

    /// Makes the generation of `changeCount` (an entry of ``history(limit:)``) the contents
    /// again, as a new change, and returns the pasteboard's new change count. Like any write that replaces the
    /// contents, it ends what this object added since its last ``clearContents()``.
    @discardableResult
    public func restore(changeCount: Int) async throws -> Int {
        guard let count = UInt64(exactly: changeCount) else {
            throw PasteboardError.invalidArgument("\(changeCount) is no change count; take one from history(limit:)")
        }
        return Int(clamping: try await writeReplacing { try await proxy.restore(name.rawValue, count: count) })
    }
}
