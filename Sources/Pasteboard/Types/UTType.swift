import Foundation
import PasteboardModel

/// A uniform type: what kind of data a value is, as Apple's `UTType` says it, mapped to the
/// MIME types the pasteboard speaks on Linux.
///
/// A type has an ``identifier`` and, when one is known, a ``preferredMIMEType``. The
/// identifier is Apple's where Apple has one (`public.utf8-plain-text`), the one declared with
/// ``init(exportedAs:conformingTo:)`` (`com.example.todo`), or else the MIME type itself
/// (`text/x-diff`). The string written to the server is ``pasteboardType``: the MIME type when
/// there is one, the identifier otherwise.
///
/// ```swift
/// UTType.utf8PlainText.identifier               // "public.utf8-plain-text"
/// UTType.utf8PlainText.preferredMIMEType        // "text/plain;charset=utf-8"
/// UTType(mimeType: "text/html")                 // .html
/// UTType(pasteboardType: "text/uri-list")       // .url
/// UTType.html.conforms(to: .plainText)          // true, as the server says
/// UTType.png.conforms(to: .image)               // true
/// ```
///
/// Two types are equal when they name the same type: identifiers ignore case, and MIME types
/// compare as the server compares them (`text/plain; charset=UTF-8` is `.utf8PlainText`).
///
/// ## Abstract types
///
/// `.item`, `.content`, `.image`, `.movie`, `.audio`, `.audiovisualContent`,
/// `.compositeContent` and the like (`.sourceCode`, `.archive`, `.font`, …) have no MIME type:
/// no one type of bytes is "an image". Their
/// ``pasteboardType`` is their identifier. This library matches them on the client with
/// ``conforms(to:)`` (every `image/…` type conforms to `.image`), which also knows types
/// declared in this process; the server reads a request for `public.image`, `public.audio`,
/// `public.movie` or `public.video` as one for the wildcard `image/*`, `audio/*` or `video/*`,
/// for clients of other languages. `UTType(mimeType: "image/*")` is `.image`, and so on for
/// `video/*`, `audio/*` and `text/*`.
///
/// `.text` and `.data` do have MIME types, the ones the server maps their identifiers to:
/// `text/plain`, which every `text/…` type conforms to, and `application/octet-stream`, which
/// every type conforms to.
public struct UTType: Sendable {
    /// Apple's identifier (`public.png`), a declared identifier (`com.example.todo`), or the
    /// MIME type itself when neither is known (`text/x-diff`).
    public let identifier: String

    /// The MIME type data of this type is written under; `nil` for abstract types and for
    /// declared types given no MIME type.
    public let preferredMIMEType: String?

    /// What equality and hashing compare: the lowercased identifier, or the canonical MIME
    /// spelling when the identifier is a MIME type.
    let key: String

    init(identifier: String, preferredMIMEType: String?) {
        self.identifier = identifier
        self.preferredMIMEType = preferredMIMEType
        if identifier.contains("/"), let type = try? PasteboardType(validating: identifier) {
            key = type.canonicalForm
        } else {
            key = identifier.lowercased()
        }
    }

    /// The string written to and asked of the server: ``preferredMIMEType`` when there is one,
    /// else ``identifier``.
    ///
    /// ```swift
    /// UTType.json.pasteboardType                                // "application/json"
    /// UTType(exportedAs: "com.example.todo").pasteboardType     // "com.example.todo"
    /// UTType.image.pasteboardType                               // "public.image"
    /// ```
    public var pasteboardType: String {
        preferredMIMEType ?? identifier
    }

    /// The customary file name extension, without the dot (`png`, `txt`, `mp4`): this
    /// library's for the common types, else the first the MIME database gives the type's
    /// MIME type; `nil` when none is known.
    public var preferredFilenameExtension: String? {
        filenameExtensions.first
    }

    /// Whether the type is one this library knows or one declared in this process with
    /// ``init(exportedAs:conformingTo:)`` or ``init(importedAs:conformingTo:)``.
    public var isDeclared: Bool {
        BuiltInTypes.byKey[key] != nil || (!isDynamic && UTTypeRegistry.shared.declaration(forKey: key) != nil)
    }

    /// ``pasteboardType`` validated, as the server normalizes it; `nil` only for an identifier
    /// the server would refuse.
    var pasteboardTypeValue: PasteboardType? {
        try? PasteboardType(validating: pasteboardType)
    }
}

// MARK: - Creating types

extension UTType {
    /// The type with an identifier: one of Apple's, one declared in this process, or any
    /// other identifier, which then conforms only to `.data` and `.item`.
    ///
    /// ```swift
    /// UTType("public.png")          // .png
    /// UTType("public.text")         // .text
    /// UTType("com.example.todo")    // the declared type, or an undeclared one
    /// UTType("image/png")           // nil: use init(mimeType:)
    /// ```
    ///
    /// - Parameter identifier: A reverse-DNS identifier, as the server accepts one: printable
    ///   ASCII, no spaces, no `/`, at most 255 bytes.
    /// - Returns: `nil` when `identifier` is not a valid identifier.
    public init?(_ identifier: String) {
        guard !identifier.contains("/"), (try? PasteboardType(validating: identifier)) != nil else {
            return nil
        }
        self = Self.resolving(identifier: identifier)
    }

    /// The type of a MIME type; any valid MIME type gives one.
    ///
    /// A MIME type Apple has an identifier for gives that type (`text/xml` → `.xml`), one
    /// declared in this process gives the declared type, and any other is a type of its own
    /// whose identifier is the MIME type. The wildcards `image/*`, `video/*`, `audio/*` and
    /// `text/*` give `.image`, `.movie`, `.audio` and `.text`, and `*/*` gives `.data`.
    ///
    /// ```swift
    /// UTType(mimeType: "text/plain;charset=utf-8")           // .utf8PlainText
    /// UTType(mimeType: "text/x-diff")?.identifier           // "text/x-diff"
    /// UTType(mimeType: "text/html", conformingTo: .text)    // .html
    /// UTType(mimeType: "image/png", conformingTo: .text)    // nil
    /// UTType(mimeType: "public.png")                        // nil: not a MIME type
    /// ```
    ///
    /// - Parameters:
    ///   - mimeType: `type/subtype`, optionally with `;name=value` parameters.
    ///   - supertype: The type the result must conform to, as in Apple's
    ///     `init(mimeType:conformingTo:)`. `.data`, the default, asks nothing: any MIME type's
    ///     bytes may stand on a pasteboard, a directory's (`inode/directory`) included.
    /// - Returns: `nil` when `mimeType` is not a well-formed MIME type, or its type does not
    ///   conform to `supertype`.
    public init?(mimeType: String, conformingTo supertype: UTType = .data) {
        guard mimeType.contains("/"), let type = try? PasteboardType(validating: mimeType), type.isMIME else {
            return nil
        }
        let resolved = Self.resolving(mime: type)
        guard supertype == .data || resolved.conforms(to: supertype) else { return nil }
        self = resolved
    }

    /// The type of a string read from the server, MIME type or identifier alike: what maps a
    /// pasteboard's types back to `UTType`s.
    ///
    /// ```swift
    /// UTType(pasteboardType: "text/plain;charset=utf-8")   // .utf8PlainText
    /// UTType(pasteboardType: "text/uri-list")              // .url
    /// UTType(pasteboardType: "com.example.todo")           // that type
    /// ```
    ///
    /// - Parameter pasteboardType: A type as the server reports it.
    /// - Returns: `nil` when the string is not a valid type.
    public init?(pasteboardType: String) {
        if pasteboardType.contains("/") {
            self.init(mimeType: pasteboardType)
        } else {
            self.init(pasteboardType)
        }
    }

    /// The type a pasteboard type string stands for; an invalid string gives an undeclared
    /// type with that string as its identifier, so that reading never fails on a type.
    public static func types(for pasteboardType: String) -> UTType {
        UTType(pasteboardType: pasteboardType) ?? UTType(identifier: pasteboardType, preferredMIMEType: nil)
    }

    /// Declares a type this program owns, as Apple's `UTExportedTypeDeclarations` does.
    ///
    /// The declaration is recorded for the whole process, so ``conforms(to:)`` follows it and
    /// ``init(_:)`` finds it. Declaring the same identifier again replaces the declaration.
    /// Declaring one of Apple's identifiers (`public.png`) changes nothing and gives that type.
    ///
    /// ```swift
    /// extension UTType {
    ///     static let todo = UTType(exportedAs: "com.example.todo", conformingTo: .json)
    /// }
    /// UTType.todo.conforms(to: .text)    // true: JSON is text
    /// UTType.todo.pasteboardType         // "com.example.todo", when not declared for all
    /// ```
    ///
    /// When the identifier is declared in the MIME database (with `pbctl types declare` or
    /// ``UTTypeDeclaration/install(_:scope:)``, the analogue of `Info.plist`), the type takes
    /// its MIME type from there, and every program knows what it conforms to: the server
    /// answers a request for `application/json` with a todo, `pbctl paste -t
    /// application/json` prints one. Undeclared, the conformances declared here are known to
    /// this process only: the server matches `com.example.todo` only to itself and to
    /// `application/octet-stream`.
    ///
    /// ```swift
    /// // after: pbctl types declare com.example.todo --mime application/vnd.example.todo+json --conforms-to public.json
    /// UTType.todo.pasteboardType         // "application/vnd.example.todo+json"
    /// ```
    ///
    /// - Parameters:
    ///   - identifier: A reverse-DNS identifier, such as `com.example.todo`. It must be a
    ///     valid identifier (printable ASCII, no spaces, no `/`, at most 255 bytes); an
    ///     invalid one is a programming error and traps.
    ///   - parent: The type this one conforms to; `.data` by default. Every type conforms to
    ///     `.data` whatever its parent, as on the server.
    public init(exportedAs identifier: String, conformingTo parent: UTType? = .data) {
        self = Self.declaring(identifier, preferredMIMEType: nil, parent: parent, isExported: true)
    }

    /// Declares a type this program owns and gives it a MIME type, so that the server and
    /// other programs see `application/vnd.example.todo+json` rather than an identifier.
    ///
    /// Not in Apple's API, where tags come from `Info.plist`. Reading back the MIME type
    /// gives this type.
    ///
    /// ```swift
    /// let todo = UTType(exportedAs: "com.example.todo",
    ///                   preferredMIMEType: "application/vnd.example.todo+json",
    ///                   conformingTo: .json)
    /// UTType(mimeType: "application/vnd.example.todo+json") == todo   // true
    /// ```
    ///
    /// - Parameters:
    ///   - identifier: A reverse-DNS identifier; an invalid one traps.
    ///   - preferredMIMEType: A MIME type; an invalid one traps.
    ///   - parent: The type this one conforms to; `.data` by default.
    public init(exportedAs identifier: String, preferredMIMEType: String, conformingTo parent: UTType? = .data) {
        self = Self.declaring(identifier, preferredMIMEType: preferredMIMEType, parent: parent, isExported: true)
    }

    /// Declares a type another program owns, as Apple's `UTImportedTypeDeclarations` does.
    ///
    /// As ``init(exportedAs:conformingTo:)``, except that an exported declaration of the same
    /// identifier takes precedence: importing never replaces it.
    ///
    /// - Parameters:
    ///   - identifier: A reverse-DNS identifier; an invalid one traps.
    ///   - parent: The type this one conforms to; `.data` by default.
    public init(importedAs identifier: String, conformingTo parent: UTType? = .data) {
        self = Self.declaring(identifier, preferredMIMEType: nil, parent: parent, isExported: false)
    }

    // MARK: Resolution

    /// The type an identifier names: built in, declared, one of Apple's aliases, or
    /// undeclared.
    static func resolving(identifier: String) -> UTType {
        let key = identifier.lowercased()
        if let builtIn = BuiltInTypes.byKey[key] {
            return builtIn.type
        }
        if let declaration = UTTypeRegistry.shared.declaration(forKey: key) {
            return declaration.type
        }
        if let declared = MIMEDatabase.shared.declarations.declaration(forIdentifier: key) {
            return UTType(declared)
        }
        if let alias = BuiltInTypes.appleAliasByKey[key] {
            return UTType(identifier: alias.identifier, preferredMIMEType: alias.mimeType)
        }
        return UTType(identifier: identifier, preferredMIMEType: nil)
    }

    /// The type a validated MIME type names.
    static func resolving(mime type: PasteboardType) -> UTType {
        if let wildcard = BuiltInTypes.wildcards[type.essence] {
            return wildcard
        }
        if let builtIn = BuiltInTypes.byOwnMIME[type.canonicalForm] {
            return builtIn
        }
        if let declaration = UTTypeRegistry.shared.declaration(forMIME: type) {
            return declaration.type
        }
        let database = MIMEDatabase.shared
        if type.parameters.isEmpty, let declared = database.declarations.declaration(forMIME: type) {
            return UTType(declared)
        }
        let resolved = database.resolvingAliases(type)
        for candidate in [type, resolved] {
            guard let identifier = candidate.appleIdentifier else { continue }
            let known = resolving(identifier: identifier)
            // `appleIdentifier` falls back to the essence; keep parameters that the known
            // type does not have (`text/plain;charset=iso-8859-1` is not `.plainText`).
            if candidate.parameters.isEmpty || known.pasteboardTypeValue == candidate {
                return known
            }
        }
        if let declaration = UTTypeRegistry.shared.declaration(forMIME: resolved) {
            return declaration.type
        }
        return UTType(identifier: type.rawValue, preferredMIMEType: type.rawValue)
    }

    private static func declaring(
        _ identifier: String, preferredMIMEType: String?, parent: UTType?, isExported: Bool
    ) -> UTType {
        precondition(
            !identifier.contains("/") && (try? PasteboardType(validating: identifier)) != nil,
            "UTType identifier \"\(identifier)\" is invalid: use printable ASCII without spaces or '/', "
                + "at most 255 bytes, such as \"com.example.todo\".")
        var mime: String?
        // Declared for every program (`pbctl types declare`, `UTTypeDeclaration.install`):
        // the MIME database says which MIME type the data is written under.
        if preferredMIMEType == nil, let declared = MIMEDatabase.shared.declarations.declaration(forIdentifier: identifier) {
            mime = declared.mimeType.rawValue
        }
        if let preferredMIMEType {
            guard let type = try? PasteboardType(validating: preferredMIMEType), type.isMIME,
                preferredMIMEType.contains("/")
            else {
                preconditionFailure(
                    "MIME type \"\(preferredMIMEType)\" for \(identifier) is invalid: write type/subtype, "
                        + "such as \"application/vnd.example.todo+json\".")
            }
            mime = type.rawValue
        }
        if BuiltInTypes.byKey[identifier.lowercased()] != nil
            || BuiltInTypes.appleAliasByKey[identifier.lowercased()] != nil
        {
            return resolving(identifier: identifier)
        }
        let declaration = UTTypeRegistry.Declaration(
            identifier: identifier, preferredMIMEType: mime, parents: parent.map { [$0] } ?? [],
            isExported: isExported)
        return UTTypeRegistry.shared.declare(declaration).type
    }
}

// MARK: - Conformances

extension UTType: Hashable {
    /// Whether two types name the same type: identifiers ignore case, and MIME types compare
    /// as the server compares them.
    public static func == (lhs: UTType, rhs: UTType) -> Bool {
        lhs.key == rhs.key
    }

    /// Hashes what ``==(_:_:)`` compares.
    public func hash(into hasher: inout Hasher) {
        hasher.combine(key)
    }
}

extension UTType: CustomStringConvertible, CustomDebugStringConvertible {
    /// The identifier.
    public var description: String {
        identifier
    }

    /// The identifier, followed by the MIME type when it differs: `public.png (image/png)`.
    public var debugDescription: String {
        if let preferredMIMEType, preferredMIMEType != identifier {
            return "\(identifier) (\(preferredMIMEType))"
        }
        return identifier
    }
}

extension UTType: Codable {
    /// Decodes a type from its identifier or MIME type, as ``types(for:)`` maps it.
    public init(from decoder: any Decoder) throws {
        let container = try decoder.singleValueContainer()
        let text = try container.decode(String.self)
        guard let type = UTType(pasteboardType: text) else {
            throw DecodingError.dataCorruptedError(
                in: container, debugDescription: "\"\(text)\" is neither a type identifier nor a MIME type.")
        }
        self = type
    }

    /// Encodes the type as its ``identifier``.
    public func encode(to encoder: any Encoder) throws {
        var container = encoder.singleValueContainer()
        try container.encode(identifier)
    }
}
