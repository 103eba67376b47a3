import PasteboardModel

/// A type this program declares for every program on the machine: the analogue of an
/// `Info.plist`'s `UTExportedTypeDeclarations`.
///
/// On Apple's systems a custom type's conformances are known only to apps whose `Info.plist`
/// declares it. Here the declaration is installed once into the freedesktop MIME database
/// (a shared-mime-info package, then `update-mime-database`), where `pasteboardd`, `pbctl`,
/// GTK, Qt and file managers all find it; a running server honours it at once.
///
/// ```swift
/// extension UTType {
///     static let todo = UTType(exportedAs: "com.example.todo", conformingTo: .json)
/// }
///
/// // once, at install time or on first start:
/// try UTTypeDeclaration.install([
///     UTTypeDeclaration(identifier: "com.example.todo", mimeType: "application/vnd.example.todo+json",
///                       conformingTo: [.json], filenameExtensions: ["todo"], description: "Todo item")
/// ])
/// UTType.todo.pasteboardType   // "application/vnd.example.todo+json", in every program
/// ```
///
/// Install before the first use of the `UTType` (a `static let` is made once per process).
public struct UTTypeDeclaration: Sendable, Equatable {
    /// Where declarations go.
    public enum Scope: Sendable {
        /// This user's data directory (`~/.local/share/mime`): no privileges needed.
        case user
        /// The machine's (the first of `XDG_DATA_DIRS`, usually `/usr/local/share/mime`): every
        /// user; needs root, as a package's post-install script has.
        case system
    }

    /// The reverse-DNS identifier (`com.example.todo`).
    public var identifier: String
    /// The MIME type data of the type is written under (`application/vnd.example.todo+json`).
    public var mimeType: String
    /// The types it conforms to; each must have a MIME type (`.json`, `.plainText`, `.png`, or
    /// a type declared before).
    public var conformingTo: [UTType]
    /// File name extensions, without the dot.
    public var filenameExtensions: [String]
    /// A description for people; the identifier when `nil`.
    public var description: String?

    public init(identifier: String, mimeType: String, conformingTo: [UTType], filenameExtensions: [String] = [], description: String? = nil) {
        self.identifier = identifier
        self.mimeType = mimeType
        self.conformingTo = conformingTo
        self.filenameExtensions = filenameExtensions
        self.description = description
    }

    /// Installs declarations, each replacing an earlier one of the same identifier, in order
    /// (so a later one may conform to an earlier one).
    ///
    /// - Returns: The package written for each declaration.
    /// - Throws: `TypeDeclarationError` saying what to change: a malformed part, an identifier
    ///   or MIME type already another type's, `update-mime-database` missing (install
    ///   shared-mime-info), a folder not writable. Declarations installed before the failing
    ///   one stay installed; nothing of the failing one is.
    @discardableResult
    public static func install(_ declarations: [UTTypeDeclaration], scope: Scope = .user) throws(TypeDeclarationError) -> [String] {
        let installer = TypeDeclarationInstaller()
        var files: [String] = []
        for declaration in declarations {
            let declared = try TypeDeclaration(
                identifier: declaration.identifier, mimeType: declaration.mimeType,
                conformsTo: declaration.conformingTo.map { $0.preferredMIMEType ?? $0.identifier },
                extensions: declaration.filenameExtensions, comment: declaration.description,
                declared: installer.currentDatabase().declarations)
            files.append(try installer.declare(declared, scope: scope.installerScope))
        }
        return files
    }

    /// Removes the declarations of these identifiers made in `scope`.
    ///
    /// - Throws: `TypeDeclarationError` (`.notDeclared` for an identifier `scope` does not
    ///   declare); those removed before stay removed.
    public static func uninstall(identifiers: [String], scope: Scope = .user) throws(TypeDeclarationError) {
        let installer = TypeDeclarationInstaller()
        for identifier in identifiers {
            try installer.undeclare(identifier: identifier, scope: scope.installerScope)
        }
    }
}

extension UTTypeDeclaration.Scope {
    var installerScope: TypeDeclarationInstaller.Scope {
        switch self {
        case .user: .user
        case .system: .system
        }
    }
}

extension UTType {
    /// The type of a declaration read from the MIME database.
    init(_ declaration: TypeDeclaration) {
        self.init(identifier: declaration.identifier, preferredMIMEType: declaration.mimeType.rawValue)
    }
}
