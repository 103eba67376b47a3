import Foundation
import PasteboardModel

// What the pasteboard calls to write and read `Transferable` values.

// MARK: - Writing

/// One representation of a value, exported and ready to write.
struct ExportedRepresentation: Sendable {
    let contentType: UTType
    let visibility: TransferRepresentationVisibility
    /// Bytes, or a file that belongs to the exporter (stream it; do not delete it).
    let content: TransferContent
    /// The name `suggestedFileName` gives the data as a file; nil when none applies.
    var suggestedFileName: String? = nil
}

/// Every representation a value offers, exported now, richest first: what
/// `writeObjects(_:)` writes for one value.
///
/// Applies the writing rule: each entry that exports, whose exporting condition holds (for a
/// proxied entry, after converting the value), in declaration order, skipping a content type
/// the server would take for one already exported (`.url` and `.fileURL` are both
/// `text/uri-list`). An entry whose exporter throws `TransferError.notExportable` is skipped
/// and does not hide a later entry of the same type.
///
/// Works on any value, `any Transferable` included (it is opened), as nothing outlives the
/// call.
///
/// - Throws: What an exporter throws, and `CancellationError` when the task is cancelled.
func exportRepresentations<Item: Transferable>(of value: Item) async throws -> [ExportedRepresentation] {
    try await exportRepresentations(of: value, limit: .max) { _ in true }
}

/// ``exportRepresentations(of:)`` narrowed (a separate function, since a closure of `Item`
/// keeps an `any Transferable` from being opened).
///
/// - Parameters:
///   - limit: Stops after this many representations: sharing wants only the richest, and
///     must not run the other exporters.
///   - include: Further narrows the entries offered (sharing leaves out `.ownProcess` ones).
func exportRepresentations<Item: Transferable>(
    of value: Item, limit: Int, where include: (TransferEntry<Item>) -> Bool
) async throws -> [ExportedRepresentation] {
    var seen: Set<String> = []
    var representations: [ExportedRepresentation] = []
    for entry in Item.transferEntries where representations.count < limit {
        guard let export = entry.export, entry.isExportable(value), include(entry) else { continue }
        let key = entry.contentType.pasteboardTypeValue?.canonicalForm ?? entry.contentType.key
        guard !seen.contains(key) else { continue }
        try Task.checkCancellation()
        let content: TransferContent
        do {
            // A proxied entry's exporter converts the value once and checks the proxy type's
            // conditions itself, throwing `notExportable` when they fail.
            content = try await export(value)
        } catch let error as TransferError where error.code == .notExportable {
            continue
        }
        seen.insert(key)
        representations.append(ExportedRepresentation(
            contentType: entry.contentType, visibility: entry.visibility, content: content,
            suggestedFileName: entry.exportFileName?(value)))
    }
    return representations
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
