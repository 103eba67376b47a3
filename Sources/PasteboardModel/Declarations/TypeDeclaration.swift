/// A type declared once for every program: an identifier such as `com.example.todo`, the MIME
/// type its data is written under, and the types it conforms to.
///
/// Apple keeps such declarations in each app's `Info.plist`, where only the system reads them.
/// Here a declaration is a freedesktop shared-mime-info package (see
/// ``TypeDeclaration/packageXML(_:)``), so that the server, `pbctl`, GTK, Qt and file managers
/// all learn that `application/vnd.example.todo+json` is JSON; the identifier rides along in an
/// element of pasteboardd's own namespace, which the specification allows and
/// `update-mime-database` keeps.
///
/// ```swift
/// let todo = try TypeDeclaration(
///     identifier: "com.example.todo", mimeType: "application/vnd.example.todo+json",
///     conformsTo: ["public.json"], extensions: ["todo"], comment: "Todo item")
/// todo.parents     // [application/json]
/// ```
public struct TypeDeclaration: Sendable, Equatable {
    /// The reverse-DNS identifier the Swift bindings know the type by (`com.example.todo`).
    public let identifier: String
    /// The MIME type data of this type is written under, without parameters.
    public let mimeType: PasteboardType
    /// The MIME types this type conforms to directly (shared-mime-info's `sub-class-of`).
    public let parents: [PasteboardType]
    /// File name extensions, without the dot (`todo`).
    public let extensions: [String]
    /// A description for people (`Todo item`).
    public let comment: String
    /// The package file the declaration was read from; `nil` for one not yet installed.
    public let file: String?

    /// The XML namespace of the element that carries the identifier in a package.
    public static let namespace = "https://pasteboardd.org/ns/uttype"

    /// Validates a declaration.
    ///
    /// - Parameters:
    ///   - identifier: A reverse-DNS identifier: letters, digits, `-` and `.`, with at least one
    ///     dot, not one of Apple's (`public.…`, `com.apple.…`).
    ///   - mimeType: `type/subtype` without parameters.
    ///   - conformsTo: At least one type: MIME types, Apple identifiers, or identifiers declared
    ///     before (resolved through `declared`).
    ///   - extensions: File name extensions; a leading `.` or `*.` is dropped.
    ///   - comment: A description; the identifier when `nil` or empty.
    ///   - declared: The declarations known so far, for parents named by identifier.
    /// - Throws: ``TypeDeclarationError`` (``TypeDeclarationError/Kind/invalid``) saying which
    ///   part is wrong and how to write it.
    public init(
        identifier: String, mimeType: String, conformsTo: [String], extensions: [String] = [],
        comment: String? = nil, declared: DeclaredTypes = .none
    ) throws(TypeDeclarationError) {
        try Self.validate(identifier: identifier)
        let mime = try Self.validate(mimeType: mimeType, of: identifier)
        guard !conformsTo.isEmpty else {
            throw .invalid("\(identifier) conforms to nothing; name at least one type with --conforms-to, such as public.json or text/plain")
        }
        var parents: [PasteboardType] = []
        for parent in conformsTo {
            let resolved = try Self.resolve(parent: parent, of: identifier, declared: declared)
            guard resolved != mime else {
                // Most often the MIME type was given as the type it should conform to:
                // `--mime application/json --conforms-to public.json`.
                guard parent != mime.rawValue else {
                    throw .invalid("\(identifier) cannot conform to itself (\(parent)); leave its own MIME type out of --conforms-to")
                }
                throw .invalid("\(identifier) cannot conform to itself: \(parent) is \(mime), the MIME type given it; give \(identifier) a MIME type of its own with --mime, such as application/vnd.example.\(identifier.split(separator: ".").last ?? "type")")
            }
            if !parents.contains(resolved) { parents.append(resolved) }
        }
        let cleanExtensions = try extensions.map { extensionText throws(TypeDeclarationError) in
            try Self.validate(extension: extensionText)
        }
        let text = (comment ?? "").trimmingSpaces
        guard !text.unicodeScalars.contains(where: { $0.value < 0x20 || $0.value == 0x7F }) else {
            throw .invalid("the comment of \(identifier) has control characters; write one line of text")
        }
        self.init(
            trusted: identifier, mimeType: mime, parents: parents, extensions: cleanExtensions,
            comment: text.isEmpty ? identifier : text, file: nil)
    }

    /// A declaration whose parts are already valid (read back from a package).
    init(trusted identifier: String, mimeType: PasteboardType, parents: [PasteboardType], extensions: [String], comment: String, file: String?) {
        self.identifier = identifier
        self.mimeType = mimeType
        self.parents = parents
        self.extensions = extensions
        self.comment = comment
        self.file = file
    }

    /// The same declaration, as read from `file`.
    func located(at file: String) -> TypeDeclaration {
        TypeDeclaration(trusted: identifier, mimeType: mimeType, parents: parents, extensions: extensions, comment: comment, file: file)
    }

    // MARK: Validation

    /// Checks the syntax of an identifier and that it is not one of Apple's.
    public static func validate(identifier: String) throws(TypeDeclarationError) {
        let allowed = identifier.utf8.allSatisfy { byte in
            (byte >= UInt8(ascii: "a") && byte <= UInt8(ascii: "z")) || (byte >= UInt8(ascii: "A") && byte <= UInt8(ascii: "Z"))
                || (byte >= UInt8(ascii: "0") && byte <= UInt8(ascii: "9")) || byte == UInt8(ascii: "-") || byte == UInt8(ascii: ".")
        }
        let parts = identifier.split(separator: ".", omittingEmptySubsequences: false)
        guard allowed, parts.count >= 2, !parts.contains(where: \.isEmpty), identifier.utf8.count <= 255 else {
            throw .invalid("\(MessageText.quoted(identifier)) is not a type identifier; write reverse-DNS of a domain you own: letters, digits and '-' between dots, such as com.example.todo")
        }
        let lowered = identifier.lowercased()
        if lowered.hasPrefix("public.") || lowered.hasPrefix("com.apple.") || lowered.hasPrefix("dyn.")
            || AppleTypeIdentifiers.mimeTypeByIdentifier[lowered] != nil
        {
            throw .invalid("\(identifier) is a system type identifier; declare one of your own domain, such as com.example.todo")
        }
    }

    /// The media types a declared type may have: the IANA registry's, and freedesktop's own
    /// `x-content` and `inode`.
    private static let declarableMedia = MIMEDatabase.standardMedia.union(["x-content", "inode"])

    private static func validate(mimeType: String, of identifier: String) throws(TypeDeclarationError) -> PasteboardType {
        guard mimeType.isMIMESpelling, let type = try? PasteboardType(validating: mimeType), type.isMIME else {
            throw .invalid("\(MessageText.quoted(mimeType)) is not a MIME type; write type/subtype, such as application/vnd.example.todo+json")
        }
        guard type.parameters.isEmpty else {
            throw .invalid("the MIME type of \(identifier) has parameters (\(mimeType)); the MIME database names types without them: write \(type.withoutParameters)")
        }
        // A wildcard names no type of its own: declared, it would stand for every type of its
        // media type.
        guard !type.essence.utf8.contains(UInt8(ascii: "*")) else {
            throw .invalid("\(mimeType) is a wildcard, not a type; give \(identifier) a MIME type of its own, such as application/vnd.example.\(identifier.split(separator: ".").last ?? "type")")
        }
        let media = MIMEDatabase.media(of: type.essence)
        guard Self.declarableMedia.contains(media) else {
            throw .invalid("\(mimeType) has the unknown media type '\(media)'; use one of application, text, image, audio, video, font or model")
        }
        // The database names types in lower case.
        guard let lowered = try? PasteboardType(validating: type.essence) else {
            throw .invalid("\(MessageText.quoted(mimeType)) is not a MIME type; write type/subtype, such as application/vnd.example.todo+json")
        }
        return lowered
    }

    private static func resolve(parent: String, of identifier: String, declared: DeclaredTypes) throws(TypeDeclarationError) -> PasteboardType {
        if !parent.isMIMESpelling, let declaration = declared.declaration(forIdentifier: parent) {
            return declaration.mimeType
        }
        guard let type = try? PasteboardType(validating: parent) else {
            throw .invalid("the supertype \(MessageText.quoted(parent)) of \(identifier) is not a type; write a MIME type (application/json) or an identifier (public.json)")
        }
        // "An image of some kind": the media type's wildcard is the parent, as GIO reads one.
        if !type.isMIME, let wildcard = PasteboardType.requestWildcards[type.essence], let media = try? PasteboardType(validating: wildcard) {
            return media
        }
        guard type.isMIME else {
            if parent.lowercased().hasPrefix("public.") {
                throw .invalid("\(parent) is an abstract type with no MIME type, which the MIME database cannot name as a parent; conform to a concrete type such as public.json, text/plain or image/png")
            }
            throw .invalid("the supertype \(parent) of \(identifier) is not declared; declare it first (pbctl types declare \(parent) …) or name its MIME type")
        }
        return type.withoutParameters
    }

    private static func validate(extension text: String) throws(TypeDeclarationError) -> String {
        var cleaned = Substring(text)
        if cleaned.hasPrefix("*.") { cleaned = cleaned.dropFirst(2) } else if cleaned.hasPrefix(".") { cleaned = cleaned.dropFirst() }
        let allowed = cleaned.utf8.allSatisfy { byte in
            byte > 0x20 && byte < 0x7F && !"/\\*?[]<>&\"'".utf8.contains(byte)
        }
        guard !cleaned.isEmpty, allowed, cleaned.utf8.count <= 64 else {
            throw .invalid("\(MessageText.quoted(text)) is not a file name extension; write it without the dot, such as todo")
        }
        return String(cleaned)
    }
}

extension String {
    /// Whether the text has a `/`, as every MIME type and no identifier does. Spelled with the
    /// UTF-8 view: Foundation's `contains(_:)` on strings needs the whole of Foundation, which
    /// the static `pbctl` does not carry (it crashes there).
    var isMIMESpelling: Bool {
        utf8.contains(UInt8(ascii: "/"))
    }

    /// Without leading and trailing spaces, tabs and line breaks.
    var trimmingSpaces: String {
        let isSpace: (Character) -> Bool = { $0 == " " || $0 == "\t" || $0.isNewline }
        guard let first = firstIndex(where: { !isSpace($0) }), let last = lastIndex(where: { !isSpace($0) }) else { return "" }
        return String(self[first...last])
    }
}
