import Foundation
import Synchronization

extension MIMEDatabase {
    /// What the database's own file for one type (`mime/application/json.xml`) says of it.
    public struct Entry: Sendable, Equatable {
        /// The file it was read from.
        public let file: String
        /// The description for people; empty when the file has none.
        public let comment: String
        /// File name extensions, without the dot, in the file's order (the customary one first).
        public let extensions: [String]
    }

    /// The entry of `type` (a canonical MIME type; parameters are ignored), from the first of
    /// the database's directories that has one; read once per database, on first use.
    public func entry(of type: PasteboardType) -> Entry? {
        onDemand.entry(of: type.essence, in: directories)
    }

    /// The file name patterns of the database's directories (shared-mime-info's `globs2`),
    /// read once per database, on first use.
    public var globs: MIMEGlobs {
        onDemand.globs(in: directories)
    }
}

/// The files of a database that only some processes need (the server needs none of them),
/// read when first asked for rather than with the database: a database read again after a
/// change starts with a new one of these.
final class MIMEDatabaseFiles: Sendable {
    private struct State {
        var globs: MIMEGlobs?
        /// Essence → its entry, or nil when no directory has one.
        var entries: [String: MIMEDatabase.Entry?] = [:]
    }

    private let state = Mutex(State())

    func globs(in directories: [String]) -> MIMEGlobs {
        if let globs = state.withLock({ $0.globs }) { return globs }
        let globs = MIMEGlobs(directories: directories)
        state.withLock { $0.globs = globs }
        return globs
    }

    func entry(of essence: String, in directories: [String]) -> MIMEDatabase.Entry? {
        if let known = state.withLock({ $0.entries[essence] }) { return known }
        let entry = Self.read(essence, in: directories)
        state.withLock { $0.entries[essence] = .some(entry) }
        return entry
    }

    private static func read(_ essence: String, in directories: [String]) -> MIMEDatabase.Entry? {
        for directory in directories {
            let file = directory + "/mime/" + essence + ".xml"
            guard let data = FileManager.default.contents(atPath: file),
                let element = try? XMLReader.parse(String(decoding: data, as: UTF8.self))
            else { continue }
            return MIMEDatabase.Entry(file: file, comment: element.typeComment, extensions: element.typeExtensions)
        }
        return nil
    }
}
