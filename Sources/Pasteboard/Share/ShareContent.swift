import Foundation

/// What a share hands to a portal: the item's richest shareable representation, as a file or,
/// for a web link, as the link itself (opening a `text/uri-list` file would help nobody).
enum ShareContent: Sendable {
    case file(ShareFile)
    case link(URL)

    /// Exports `item` with the library's writing rule, keeping only the first representation
    /// (the richest) and leaving out `.ownProcess` ones: sharing hands the data to another
    /// program.
    ///
    /// - `FileRepresentation`: that file.
    /// - a URL (`.fileURL`, `.url`): the file it names, or the link.
    /// - bytes (`DataRepresentation`, `CodableRepresentation`, proxies to them): a new file in
    ///   a folder of its own under `root`, named by `suggestedFileName`, else by the preview's
    ///   title, else "Shared item", with the content type's extension.
    ///
    /// - Throws: ``ShareError/Code/notShareable`` when nothing is offered, ``ShareError/Code/failed``
    ///   when the file cannot be written or opened, and what the exporter throws.
    static func export<Item: Transferable>(_ item: Item, preview: SharePreview?, in root: URL) async throws -> ShareContent {
        let offered = try await exportRepresentations(of: item, limit: 1) { $0.visibility != .ownProcess }
        guard let representation = offered.first else {
            throw ShareError(
                .notShareable,
                "\(Item.self) offers nothing to share for this value: its representations' exportingCondition refused it, "
                    + "or they only import, or are visible to their own process only (.visibility(.ownProcess)). "
                    + "Check ShareLink.isAvailable before offering to share.")
        }
        switch representation.content {
        case .file(let file):
            return .file(try ShareFile(opening: file, temporaryFolder: nil))
        case .data(let data) where representation.contentType == .fileURL || representation.contentType == .url:
            guard let url = URL.urls(inURIList: data).first else {
                throw ShareError(.failed, "The \(Item.self) exported as a URL holds no URL to share.")
            }
            return url.isFileURL ? .file(try ShareFile(opening: url, temporaryFolder: nil)) : .link(url)
        case .data(let data):
            let name = ShareFile.fileName(suggested: representation.suggestedFileName, preview: preview, type: representation.contentType)
            // Written off the tasks' pool: a shared video exported as bytes is a large write.
            return .file(try await BlockingWork.run { _ in try ShareFile.writing(data, named: name, in: root) })
        }
    }

    /// Removes what was made for the share (see ``ShareFile/discard()``).
    func discard() {
        if case .file(let file) = self { file.discard() }
    }
}
