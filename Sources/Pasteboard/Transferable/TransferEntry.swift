import Foundation

// The engine under `Transferable`: every representation of a type flattened into a list of
// entries, each one content type with closures to export and import it. The pasteboard writes
// and reads through these; nothing here knows about D-Bus.
//
// Writing: for each entry, in order, where `export != nil && isExportable(item)` and the
// exporter does not throw `TransferError.notExportable` (an entry that came through a
// `ProxyRepresentation` does when the proxy type's conditions fail), skipping content types
// already written. `exportRepresentations(of:)` does exactly that.
//
// Reading: the first entry with `import != nil` whose content type the pasteboard satisfies.
// `Transferable.importMatch(offering:)` finds it from an item's types.

/// Bytes or a file, as one representation travels.
enum TransferContent: Sendable {
    /// Bytes in memory.
    case data(Data)
    /// A file on disk. A file a `FileRepresentation` exported belongs to the exporter; one
    /// handed to an importer belongs to the importer (see ``TransferEntry/import``).
    case file(URL)
}

extension TransferContent {
    /// The bytes: the data itself, or the file's contents (read off the tasks' pool: the file
    /// may be a large one, see ``BlockingWork``).
    ///
    /// - Throws: The file system's error when the file cannot be read.
    func data() async throws -> Data {
        switch self {
        case .data(let data):
            return data
        case .file(let url):
            return try await BlockingWork.run { _ in try Data(contentsOf: url) }
        }
    }

    /// A file holding the bytes: the file itself, or a new temporary file
    /// (`pasteboard-<UUID>.<extension>`), which then belongs to the caller.
    ///
    /// - Parameter type: Gives the new file its name extension (`.png`).
    /// - Throws: The file system's error when the file cannot be written.
    func file(for type: UTType) async throws -> URL {
        switch self {
        case .file(let url):
            return url
        case .data(let data):
            let file = Self.temporaryFile(for: type)
            try await BlockingWork.run { _ in try data.write(to: file) }
            return file
        }
    }

    /// A new name for a temporary file of `type`: `pasteboard-<UUID>.<extension>` in the
    /// temporary directory. Nothing is created.
    static func temporaryFile(for type: UTType) -> URL {
        var file = FileManager.default.temporaryDirectory.appendingPathComponent("pasteboard-\(UUID().uuidString)")
        if let pathExtension = type.preferredFilenameExtension {
            file.appendPathExtension(pathExtension)
        }
        return file
    }

    /// Whether the content is a file.
    var isFile: Bool {
        if case .file = self { return true }
        return false
    }
}

/// One flattened representation of `Item`, in declaration order.
///
/// The importer takes either kind of ``TransferContent``: a data or `Codable` importer given
/// `.file` reads the file (and leaves it to the caller); a `FileRepresentation` importer given
/// `.data` gets the bytes in a new temporary file, and given `.file` gets that file, as
/// `ReceivedTransferredFile(file:isOriginalFile: false)`, and owns it once it returns (a
/// temporary file it was given is deleted if it throws). `Transferable.importValue(offering:read:)`
/// handles the files for you.
struct TransferEntry<Item>: Sendable {
    /// The type the data is written under and read as.
    let contentType: UTType
    /// Who may read the data (the most restrictive of the modifiers applied).
    let visibility: TransferRepresentationVisibility
    /// From `suggestedFileName`; `nil` when none applies.
    let exportFileName: (@Sendable (Item) -> String?)?
    /// From `exportingCondition`; true when there is none.
    let isExportable: @Sendable (Item) -> Bool
    /// Produces the data; `nil` when the entry is import-only. Throws
    /// `TransferError.notExportable` when a proxied entry's proxy type does not offer it.
    let export: (@Sendable (Item) async throws -> TransferContent)?
    /// Makes a value from the data; `nil` when the entry is export-only.
    let `import`: (@Sendable (TransferContent) async throws -> Item)?
    /// Whether the representation is a `FileRepresentation`, whose data is best streamed.
    var prefersFile: Bool

    init(
        contentType: UTType,
        visibility: TransferRepresentationVisibility = .all,
        exportFileName: (@Sendable (Item) -> String?)? = nil,
        isExportable: @escaping @Sendable (Item) -> Bool = { _ in true },
        export: (@Sendable (Item) async throws -> TransferContent)?,
        import: (@Sendable (TransferContent) async throws -> Item)?,
        prefersFile: Bool = false
    ) {
        self.contentType = contentType
        self.visibility = visibility
        self.exportFileName = exportFileName
        self.isExportable = isExportable
        self.export = export
        self.import = `import`
        self.prefersFile = prefersFile
    }

    /// A copy with some properties replaced.
    func with(
        visibility: TransferRepresentationVisibility? = nil,
        exportFileName: (@Sendable (Item) -> String?)? = nil,
        isExportable: (@Sendable (Item) -> Bool)? = nil
    ) -> TransferEntry {
        TransferEntry(
            contentType: contentType, visibility: visibility ?? self.visibility,
            exportFileName: exportFileName ?? self.exportFileName, isExportable: isExportable ?? self.isExportable,
            export: export, import: self.import, prefersFile: prefersFile)
    }
}

// MARK: - Flattening

extension Transferable {
    /// Every representation of the type, flattened, in declaration order: proxies are
    /// resolved recursively (a `ProxyRepresentation` to `String` contributes `String`'s
    /// entries, mapped through the conversion; a one-way proxy contributes export-only
    /// entries), and modifiers are applied.
    static var transferEntries: [TransferEntry<Self>] {
        let key = ObjectIdentifier(Self.self)
        return TransferFlattening.$typesInProgress.withValue(TransferFlattening.typesInProgress.union([key])) {
            transferRepresentation.flattenedEntries as? [TransferEntry<Self>] ?? []
        }
    }
}

extension TransferRepresentation {
    /// The entries this representation stands for.
    var flattenedEntries: [TransferEntry<Item>] {
        if let primitive = self as? any PrimitiveTransferRepresentation {
            return primitive.entryList as? [TransferEntry<Item>] ?? []
        }
        if Body.self == Never.self {
            return []
        }
        return body.flattenedEntries as? [TransferEntry<Item>] ?? []
    }
}

/// A representation that lists its entries itself rather than through a `body`: the library's
/// representations, modifiers and builder types.
protocol PrimitiveTransferRepresentation {
    /// `[TransferEntry<Item>]`, as `Any` so that the protocol has no associated type.
    var entryList: Any { get }
}

extension Never: PrimitiveTransferRepresentation {
    var entryList: Any { [TransferEntry<Never>]() }
}

/// Guards against proxies that lead back to a type being flattened (`A` proxies to `B`, which
/// proxies to `A`): such a proxy contributes nothing rather than recursing forever.
enum TransferFlattening {
    @TaskLocal static var typesInProgress: Set<ObjectIdentifier> = []
}

/// Runs the body of a library representation's `body` requirement, which is never read.
func transferRepresentationHasNoBody(_ type: Any.Type) -> Never {
    fatalError("\(type) is a primitive transfer representation and has no body")
}
