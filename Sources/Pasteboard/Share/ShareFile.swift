import DBus
import Foundation

#if canImport(Glibc)
import Glibc
#endif

/// The file a share hands to a portal: the item's richest shareable representation as a file,
/// opened read-only, since the portals take a descriptor rather than a path (a sandboxed app
/// may not be able to name its files to them).
struct ShareFile: Sendable {
    /// Read-only; the portal gets a duplicate of it.
    let descriptor: UnixFileDescriptor
    /// The file the descriptor is open on.
    let url: URL
    /// The folder made for data exported as bytes, removed by ``discard()``; nil when the file
    /// is the exporter's own (a `FileRepresentation`, a file URL), which is never touched.
    let temporaryFolder: URL?

    /// Exports `item` with the library's writing rule, keeping only the first representation
    /// (the richest) and leaving out `.ownProcess` ones: sharing hands the data to another
    /// program.
    ///
    /// - `FileRepresentation`: that file.
    /// - a file URL (`.fileURL`): the file it names.
    /// - bytes (`DataRepresentation`, `CodableRepresentation`, proxies to them): a new file in
    ///   a folder of its own under `root`, named by `suggestedFileName`, else by the preview's
    ///   title, else "Shared item", with the content type's extension.
    ///
    /// - Throws: ``ShareError/Code/notShareable`` when nothing is offered, ``ShareError/Code/failed``
    ///   when the file cannot be written or opened, and what the exporter throws.
    static func export<Item: Transferable>(_ item: Item, preview: SharePreview?, in root: URL) async throws -> ShareFile {
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
            return try ShareFile(opening: file, temporaryFolder: nil)
        case .data(let data) where representation.contentType == .fileURL:
            guard let file = URL.urls(inURIList: data).first(where: \.isFileURL) else {
                throw ShareError(.failed, "The \(Item.self) exported as a file URL holds no file URL to share.")
            }
            return try ShareFile(opening: file, temporaryFolder: nil)
        case .data(let data):
            let folder = root.appendingPathComponent("pasteboard-share-\(UUID().uuidString)", isDirectory: true)
            let file = folder.appendingPathComponent(
                fileName(suggested: representation.suggestedFileName, preview: preview, type: representation.contentType))
            do {
                try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
                try data.write(to: file)
                return try ShareFile(opening: file, temporaryFolder: folder)
            } catch {
                try? FileManager.default.removeItem(at: folder)
                if let error = error as? ShareError { throw error }
                throw ShareError(.failed, "Could not write the shared \(Item.self) to \(folder.path): \(error.localizedDescription)")
            }
        }
    }

    private init(opening file: URL, temporaryFolder: URL?) throws(ShareError) {
        let fd = open(file.path, O_RDONLY | O_CLOEXEC)
        guard fd >= 0 else {
            throw ShareError(.failed, "Could not open \(file.path) to share it: \(String(cString: strerror(errno))).")
        }
        descriptor = UnixFileDescriptor(owning: fd)
        url = file
        self.temporaryFolder = temporaryFolder
    }

    /// Removes the file made for the share, if one was. Call it when the portal did not take
    /// the file: once it has, the receiving program opens it by path, maybe later.
    func discard() {
        if let temporaryFolder { try? FileManager.default.removeItem(at: temporaryFolder) }
    }

    /// A file name that is one path component: the suggestion, or the title with the type's
    /// extension. Slashes and NULs become dashes; what would be empty, `.` or `..` is
    /// replaced.
    static func fileName(suggested: String?, preview: SharePreview?, type: UTType) -> String {
        if let suggested = component(suggested) { return suggested }
        let base = component(preview?.title) ?? "Shared item"
        guard let pathExtension = type.preferredFilenameExtension, !base.lowercased().hasSuffix("." + pathExtension) else { return base }
        return base + "." + pathExtension
    }

    private static func component(_ name: String?) -> String? {
        guard let name else { return nil }
        let cleaned = String(name.map { $0 == "/" || $0 == "\0" ? "-" : $0 }).trimmingCharacters(in: .whitespacesAndNewlines)
        return cleaned.isEmpty || cleaned == "." || cleaned == ".." ? nil : cleaned
    }
}
