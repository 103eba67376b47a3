import DBus
import Foundation

#if canImport(Glibc)
import Glibc
#endif

/// A file a share hands to a portal, opened read-only: the portals take a descriptor rather
/// than a path (a sandboxed app may not be able to name its files to them).
struct ShareFile: Sendable {
    /// Read-only; the portal gets a duplicate of it.
    let descriptor: UnixFileDescriptor
    /// The file the descriptor is open on.
    let url: URL
    /// The folder made for data exported as bytes, removed by ``discard()``; nil when the file
    /// is the exporter's own (a `FileRepresentation`, a file URL), which is never touched.
    let temporaryFolder: URL?

    /// Writes `data` to a new file named `name`, in a folder of its own under `root` (so the
    /// name is exactly the one given), and opens it.
    static func writing(_ data: Data, named name: String, in root: URL) throws(ShareError) -> ShareFile {
        let folder = root.appendingPathComponent("pasteboard-share-\(UUID().uuidString)", isDirectory: true)
        let file = folder.appendingPathComponent(name)
        do {
            try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
            try data.write(to: file)
        } catch {
            try? FileManager.default.removeItem(at: folder)
            throw ShareError(.failed, "Could not write the shared item to \(folder.path): \(error.localizedDescription)")
        }
        do {
            return try ShareFile(opening: file, temporaryFolder: folder)
        } catch {
            try? FileManager.default.removeItem(at: folder)
            throw error
        }
    }

    init(opening file: URL, temporaryFolder: URL?) throws(ShareError) {
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
    /// extension (or, for a type without one, that of the nearest type it conforms to). Slashes
    /// and NULs become dashes; what would be empty, `.` or `..` is replaced.
    static func fileName(suggested: String?, preview: SharePreview?, type: UTType) -> String {
        if let suggested = component(suggested) { return suggested }
        let base = component(preview?.title) ?? "Shared item"
        guard let pathExtension = type.nearestFilenameExtension, !base.lowercased().hasSuffix("." + pathExtension) else { return base }
        return base + "." + pathExtension
    }

    private static func component(_ name: String?) -> String? {
        guard let name else { return nil }
        let cleaned = String(name.map { $0 == "/" || $0 == "\0" ? "-" : $0 }).trimmingCharacters(in: .whitespacesAndNewlines)
        return cleaned.isEmpty || cleaned == "." || cleaned == ".." ? nil : cleaned
    }
}
