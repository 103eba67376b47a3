import Foundation
import PasteboardModel

// What the pasteboard calls to write and read `Transferable` values.

// MARK: - Writing

/// One representation of a value, exported and ready to write.
struct ExportedRepresentation: Sendable {
    let contentType: UTType
    let visibility: TransferRepresentationVisibility
    /// From `suggestedFileName`.
    let suggestedFileName: String?
    /// Bytes, or a file that belongs to the exporter (stream it; do not delete it).
    let content: TransferContent
}

/// One representation a value offers, its data not yet produced: for writes whose data is
/// produced later, or streamed.
struct ExportCandidate {
    let contentType: UTType
    let visibility: TransferRepresentationVisibility
    let suggestedFileName: String?
    /// The representation is a `FileRepresentation`: `content` will be a file.
    let prefersFile: Bool
    /// Produces the data. Not `@Sendable`, as it holds the value; see
    /// ``sendableTransferEntriesForExport(of:)`` for `Sendable` values.
    let content: () async throws -> TransferContent
}

/// ``ExportCandidate`` for a `Sendable` value, whose `content` may run in any task (a promise
/// resolved when another process reads).
struct SendableExportCandidate: Sendable {
    let contentType: UTType
    let visibility: TransferRepresentationVisibility
    let suggestedFileName: String?
    let prefersFile: Bool
    let content: @Sendable () async throws -> TransferContent
}

/// The representations a value offers, richest first, with their data not yet produced.
///
/// Applies the writing rule: each entry that exports, whose exporting condition holds (for a
/// proxied entry, after converting the value), in declaration order, skipping a content type
/// the server would take for one already listed (`.url` and `.fileURL` are both
/// `text/uri-list`).
///
/// - Throws: What a proxy's conversion throws while checking its conditions.
func transferEntriesForExport<Item: Transferable>(of value: Item) async throws -> [ExportCandidate] {
    var candidates: [ExportCandidate] = []
    for entry in try await offeredEntries(of: value) {
        guard let export = entry.export else { continue }
        candidates.append(
            ExportCandidate(
                contentType: entry.contentType, visibility: entry.visibility,
                suggestedFileName: entry.exportFileName?(value) ?? nil, prefersFile: entry.prefersFile,
                content: { try await export(value) }))
    }
    return candidates
}

/// ``transferEntriesForExport(of:)`` for a `Sendable` value: the closures may be kept and run
/// in any task.
func sendableTransferEntriesForExport<Item: Transferable & Sendable>(
    of value: Item
) async throws -> [SendableExportCandidate] {
    var candidates: [SendableExportCandidate] = []
    for entry in try await offeredEntries(of: value) {
        guard let export = entry.export else { continue }
        candidates.append(
            SendableExportCandidate(
                contentType: entry.contentType, visibility: entry.visibility,
                suggestedFileName: entry.exportFileName?(value) ?? nil, prefersFile: entry.prefersFile,
                content: { try await export(value) }))
    }
    return candidates
}

/// Every representation a value offers, exported now, richest first: what
/// `writeObjects(_:)` writes for one value.
///
/// Works on any value, `any Transferable` included (it is opened), as nothing outlives the
/// call.
///
/// - Throws: What an exporter throws, and `CancellationError` when the task is cancelled.
func exportRepresentations<Item: Transferable>(of value: Item) async throws -> [ExportedRepresentation] {
    var representations: [ExportedRepresentation] = []
    for entry in try await offeredEntries(of: value) {
        guard let export = entry.export else { continue }
        try Task.checkCancellation()
        let content: TransferContent
        do {
            content = try await export(value)
        } catch let error as TransferError where error.code == .notExportable {
            continue
        }
        representations.append(
            ExportedRepresentation(
                contentType: entry.contentType, visibility: entry.visibility,
                suggestedFileName: entry.exportFileName?(value) ?? nil, content: content))
    }
    return representations
}

/// The entries a value offers, in order, one per pasteboard type.
private func offeredEntries<Item: Transferable>(of value: Item) async throws -> [TransferEntry<Item>] {
    var seen: Set<String> = []
    var offered: [TransferEntry<Item>] = []
    for entry in Item.transferEntries {
        let key = entry.contentType.pasteboardTypeValue?.canonicalForm ?? entry.contentType.key
        guard !seen.contains(key), try await entry.offers(value) else { continue }
        seen.insert(key)
        offered.append(entry)
    }
    return offered
}

// MARK: - Reading

/// The representation to read a value with, and which of an item's types to read.
struct ImportMatch<Item>: Sendable {
    /// The entry, which has an importer.
    let entry: TransferEntry<Item>
    /// The item's type to read, as the server spelled it.
    let offeredType: String
    /// Its index in the item's types.
    let offeredIndex: Int
}

extension Transferable {
    /// The content types the type can read, in the order it prefers them (for `CanRead` and
    /// `AvailableType`; abstract types such as `.image` are better matched with
    /// ``importMatch(offering:)``).
    static var importableContentTypes: [UTType] {
        var seen: Set<UTType> = []
        return transferEntries.compactMap { entry in
            guard entry.import != nil, seen.insert(entry.contentType).inserted else { return nil }
            return entry.contentType
        }
    }

    /// The reading rule: the first entry that imports whose content type one of `offered`
    /// conforms to, with the offered type closest to it (the earliest on a tie, as items list
    /// their richest type first).
    ///
    /// ```swift
    /// // An item offering a profile and text, read as String:
    /// String.importMatch(offering: ["com.example.profile", "text/plain;charset=utf-8"])?.offeredType
    /// // "text/plain;charset=utf-8"
    /// ```
    ///
    /// - Parameter offered: An item's types, as the server reports them.
    /// - Returns: `nil` when the type can read none of them.
    static func importMatch(offering offered: [String]) -> ImportMatch<Self>? {
        let offeredTypes = offered.map(UTType.types(for:))
        for entry in transferEntries where entry.import != nil {
            var best: (index: Int, distance: Int)?
            for (index, type) in offeredTypes.enumerated() {
                guard let distance = type.conformanceDistance(to: entry.contentType) else { continue }
                if best == nil || distance < best!.distance {
                    best = (index, distance)
                }
            }
            if let best {
                return ImportMatch(entry: entry, offeredType: offered[best.index], offeredIndex: best.index)
            }
        }
        return nil
    }

    /// Reads a value from an item: picks the representation with ``importMatch(offering:)``,
    /// asks `read` for the data of the chosen type, and imports it.
    ///
    /// A file `read` returns is handed over: a `FileRepresentation` importer that returns
    /// keeps it (it is the importer's own); otherwise (the importer reads bytes, or throws) it
    /// is deleted once the import is over.
    ///
    /// - Parameters:
    ///   - offered: The item's types, as the server reports them.
    ///   - read: Fetches the data of one of them, as bytes or as a new file; told whether the
    ///     representation prefers a file (a `FileRepresentation`), so that large data can be
    ///     streamed to disk.
    /// - Returns: `nil` when the type can read none of the offered types.
    /// - Throws: What `read` and the importer throw.
    static func importValue(
        offering offered: [String],
        read: (_ type: String, _ prefersFile: Bool) async throws -> TransferContent
    ) async throws -> Self? {
        guard let match = importMatch(offering: offered), let importer = match.entry.import else { return nil }
        let content = try await read(match.offeredType, match.entry.prefersFile)
        guard case .file(let file) = content else {
            return try await importer(content)
        }
        do {
            let value = try await importer(content)
            if !match.entry.prefersFile {
                try? FileManager.default.removeItem(at: file)
            }
            return value
        } catch {
            try? FileManager.default.removeItem(at: file)
            throw error
        }
    }
}
