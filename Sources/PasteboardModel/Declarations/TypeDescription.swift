import Foundation

/// What the MIME database knows of one type: what `pbctl types show` prints.
///
/// ```swift
/// let todo = try TypeDescription("com.example.todo", installer: TypeDeclarationInstaller())
/// todo.mimeType      // application/vnd.example.todo+json
/// todo.supertypes    // [application/json, application/javascript, …, application/octet-stream]
/// todo.declaredIn    // ~/.local/share/mime/packages/com.example.todo.xml
/// ```
public struct TypeDescription: Sendable, Equatable {
    /// The declared identifier, else Apple's, else the MIME type itself.
    public let identifier: String
    /// The MIME type, with the parameters it was asked for with (`text/plain;charset=utf-8`, for
    /// `public.utf8-plain-text`), which make it a subtype of the type without them.
    public let mimeType: String
    /// Every type it conforms to, the nearest first; `application/octet-stream` last.
    public let supertypes: [String]
    /// The description for people; empty when the database has none.
    public let comment: String
    /// File name extensions, without the dot.
    public let extensions: [String]
    /// The declaration's package, or the database's file for the type; empty when the type is
    /// known only by its MIME type's syntax (an Apple type without an entry in the database).
    public let declaredIn: String

    /// Looks a type up in the database as it is on disk now.
    ///
    /// - Parameter text: An identifier (`com.example.todo`, `public.json`) or a MIME type.
    /// - Throws: ``TypeDeclarationError/Kind/invalid`` for text that is no type, and
    ///   ``TypeDeclarationError/Kind/notDeclared`` for a type nothing declares.
    public init(_ text: String, installer: TypeDeclarationInstaller) throws(TypeDeclarationError) {
        let database = installer.currentDatabase()
        let declared = database.declarations
        if !text.isMIMESpelling, let declaration = declared.declaration(forIdentifier: text) {
            self.init(declaration: declaration, database: database)
            return
        }
        guard (try? PasteboardType(validating: text)) != nil else {
            throw .invalid("\(MessageText.quoted(text)) is not a type; write an identifier (com.example.todo, public.json) or a MIME type (text/plain)")
        }
        let mime: PasteboardType
        // What was asked for exactly, parameters and Apple identifier included, as copy takes
        // it: `public.utf8-plain-text` is text/plain;charset=utf-8, a subtype of text/plain.
        let exact: (identifier: String?, type: PasteboardType)
        if text.isMIMESpelling {
            let type = (try? PasteboardType(validating: text))!
            guard type.isMIME else {
                // `a/b/c`: a type kept as written, which no MIME database knows or declares.
                throw .init(.notDeclared, "\(MessageText.quoted(text)) is no MIME type, only a name kept as written; the MIME database knows nothing of it")
            }
            mime = type.withoutParameters
            // Apple's identifier only when it stands for exactly this type: public.html is not
            // text/html;charset=utf-8.
            let identifier = type.appleIdentifier.flatMap { identifier in
                AppleTypeIdentifiers.mimeTypeByIdentifier[identifier].flatMap { try? PasteboardType(validating: $0) } == type ? identifier : nil
            }
            exact = (identifier, type)
        } else if let mapped = AppleTypeIdentifiers.mimeTypeByIdentifier[text.lowercased()], let type = try? PasteboardType(validating: mapped) {
            mime = type.withoutParameters
            exact = (text.lowercased(), type)
        } else {
            throw .init(.notDeclared, "\(text) is not declared; declare it with `pbctl types declare \(text) --mime TYPE --conforms-to TYPE`")
        }
        if let declaration = declared.declaration(forMIME: mime) {
            self.init(declaration: declaration, database: database)
            return
        }
        let canonical = database.resolvingAliases(mime)
        let entry = database.entry(of: canonical)
        guard entry != nil || canonical.appleIdentifier != nil else {
            throw .init(.notDeclared, "\(mime) is not a type the MIME database knows; declare it with `pbctl types declare IDENTIFIER --mime \(mime) --conforms-to TYPE`")
        }
        let refined = exact.type != exact.type.withoutParameters
        // A refined type without an identifier of its own is named by its exact MIME type, not
        // by the identifier of the type it refines.
        self.init(
            identifier: exact.identifier ?? (refined ? exact.type.rawValue : canonical.appleIdentifier ?? canonical.rawValue), mimeType: refined ? exact.type.rawValue : canonical.rawValue,
            supertypes: (refined ? [canonical.rawValue] : []) + Self.supertypes(of: canonical, in: database), comment: entry?.comment ?? "",
            extensions: entry?.extensions ?? [], declaredIn: entry?.file ?? "")
    }

    private init(declaration: TypeDeclaration, database: MIMEDatabase) {
        self.init(
            identifier: declaration.identifier, mimeType: declaration.mimeType.rawValue,
            supertypes: Self.supertypes(of: declaration.mimeType, in: database), comment: declaration.comment,
            extensions: declaration.extensions, declaredIn: declaration.file ?? "")
    }

    private init(identifier: String, mimeType: String, supertypes: [String], comment: String, extensions: [String], declaredIn: String) {
        self.identifier = identifier
        self.mimeType = mimeType
        self.supertypes = supertypes
        self.comment = comment
        self.extensions = extensions
        self.declaredIn = declaredIn
    }

    private static func supertypes(of type: PasteboardType, in database: MIMEDatabase) -> [String] {
        var ancestors = database.supertypes(of: type).sorted { ($0.value, $0.key) < ($1.value, $1.key) }.map(\.key)
        if !type.essence.hasPrefix("inode/"), type.essence != "application/octet-stream" {
            ancestors.removeAll { $0 == "application/octet-stream" }
            ancestors.append("application/octet-stream")
        }
        return ancestors
    }
}
