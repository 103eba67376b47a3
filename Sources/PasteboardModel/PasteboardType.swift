import Synchronization

/// A type of data on a pasteboard: a MIME type, or an identifier that is not one.
///
/// The pasteboard speaks MIME (`text/plain;charset=utf-8`, `image/png`), the vocabulary of the
/// Linux desktop and of X11 and Wayland clipboards. Apple's identifiers are accepted and
/// mapped to MIME (see ``appleAliases``); any other identifier, such as `com.example.todo`, is
/// kept as written.
///
/// A valid type is 1 to 255 bytes of printable ASCII. Spaces are allowed only around the `;`
/// between MIME parameters, and are dropped. A well-formed MIME type (`type/subtype`, then
/// `;name=value` parameters) is normalised as one; anything else, `/` or not (`a/b/c`), is an
/// identifier kept as written, as the contract has it. (Text with spaces must be a MIME type.)
///
/// ```swift
/// try PasteboardType(validating: "text/plain ; charset=utf-8").rawValue  // "text/plain;charset=utf-8"
/// try PasteboardType(validating: "public.png").rawValue                  // "image/png"
/// try PasteboardType(validating: "com.example.todo").rawValue            // "com.example.todo"
/// try PasteboardType(validating: "text/ plain")                          // throws InvalidType
/// ```
///
/// Two types are equal when they are spellings of the same type: MIME type, subtype and
/// parameter names ignore case, the `charset` value ignores case, parameter order does not
/// matter, and identifiers ignore case. Other parameter values are compared exactly, as
/// RFC 9110 says. Conformance between different types is ``MIMEDatabase``'s job.
public struct PasteboardType: Hashable, Sendable, CustomStringConvertible {
    /// The normalized spelling: spaces dropped and Apple identifiers mapped to MIME; case as
    /// the caller wrote it.
    public let rawValue: String

    /// Whether this is a MIME type (as opposed to an identifier kept as written).
    public let isMIME: Bool

    /// For a MIME type, the lowercased `type/subtype` without parameters; for an identifier,
    /// the lowercased identifier.
    public let essence: String

    /// The MIME parameters in the order written, names lowercased, values without quotes;
    /// empty for an identifier.
    public let parameters: [(name: String, value: String)]

    /// A spelling shared by every spelling of this type, for use as a key (as in an index).
    ///
    /// ```swift
    /// try PasteboardType(validating: "Text/Plain; CharSet=\"UTF-8\"").canonicalForm  // "text/plain;charset=utf-8"
    /// ```
    public let canonicalForm: String

    /// Validates and normalizes a type.
    ///
    /// - Parameter text: A MIME type such as `text/plain;charset=utf-8`, an Apple identifier
    ///   such as `public.utf8-plain-text`, or any other identifier.
    /// - Throws: ``PasteboardError/Code/invalidType`` when the text is empty, longer than 255
    ///   bytes, not printable ASCII, has a space anywhere but around a `;`, or has spaces
    ///   without being a well-formed MIME type.
    public init(validating text: String) throws(PasteboardError) {
        if let known = Self.recentlyValidated.withLock({ $0.type(spelled: text) }) {
            self = known
            return
        }
        let type = try Self(parsing: text)
        // What a declared identifier stands for changes with the MIME database: not kept.
        if text.utf8.contains(UInt8(ascii: "/")) || type.isAppleIdentifierSpelling(text) {
            Self.recentlyValidated.withLock { $0.keep(type, spelled: text) }
        }
        self = type
    }

    /// Whether `text` (no `/` in it) is one of Apple's identifiers, whose meaning never changes.
    private func isAppleIdentifierSpelling(_ text: String) -> Bool {
        isMIME && AppleTypeIdentifiers.mimeTypeByIdentifier[text.lowercased().filter { $0 != " " }] != nil
    }

    /// Types already validated, by their exact spelling (see ``RecentSpellings``).
    private static let recentlyValidated = Mutex(RecentSpellings())

    private init(parsing text: String) throws(PasteboardError) {
        let (compact, hadSpaces) = try TypeSyntax.compact(text)
        if compact.utf8.contains(UInt8(ascii: "/")) {
            do throws(PasteboardError) {
                self.init(mime: try TypeSyntax.parseMIME(compact, original: text))
            } catch {
                // Printable ASCII that is no MIME type (`a/b/c`, `text/`) is kept as written, as
                // the contract has any type that is neither MIME nor Apple's; its spaces, which
                // only MIME parameters may have, are not.
                guard !hadSpaces else { throw error }
                self.init(identifier: compact)
            }
            return
        }
        if let mimeType = AppleTypeIdentifiers.mimeTypeByIdentifier[compact.lowercased()],
            let mime = try? TypeSyntax.parseMIME(mimeType, original: mimeType)
        {
            self.init(mime: mime)
            return
        }
        // An identifier declared in the MIME database (`pbctl types declare`) is its MIME type.
        if !hadSpaces, let declaration = MIMEDatabase.shared.declarations.declaration(forIdentifier: compact) {
            self = declaration.mimeType
            return
        }
        if hadSpaces {
            throw .invalidType(
                "The type \(MessageText.quoted(text)) has spaces but is not a MIME type; spaces are "
                    + "allowed only around the ';' between MIME parameters, as in \"text/plain ; charset=utf-8\".")
        }
        self.init(identifier: compact)
    }

    private init(identifier: String) {
        rawValue = identifier
        isMIME = false
        essence = identifier.lowercased()
        parameters = []
        canonicalForm = essence
    }

    private init(mime: TypeSyntax.MIME) {
        rawValue = Self.spelled(mime.head, mime.parameters.map { ($0.name, $0.spelledValue) })
        isMIME = true
        essence = mime.head.lowercased()
        parameters = mime.parameters.map { (name: $0.name.lowercased(), value: $0.value) }
        canonicalForm = Self.canonicalForm(essence: essence, parameters: parameters)
    }

    /// A type spelled by this module, which tests prove valid.
    private init(constant text: String) {
        do {
            try self.init(validating: text)
        } catch {
            preconditionFailure("built-in type \(text) is invalid: \(error)")
        }
    }

    /// `essence;name=value;…` with names lowercased, `charset` values lowercased, values that
    /// are not tokens quoted, and parameters sorted.
    static func canonicalForm(essence: String, parameters: [(name: String, value: String)]) -> String {
        let pairs = parameters.map { parameter in
            (
                name: parameter.name,
                value: TypeSyntax.canonicalValue(
                    parameter.name == "charset" ? parameter.value.lowercased() : parameter.value)
            )
        }
        .sorted { ($0.name, $0.value) < ($1.name, $1.value) }
        return spelled(essence, pairs)
    }

    /// `head;name=value;…`, appended piece by piece: `joined(separator:)`'s first use costs a
    /// short-lived process like pbctl a search of every protocol conformance it holds.
    private static func spelled(_ head: String, _ parameters: [(name: String, value: String)]) -> String {
        var text = head
        for parameter in parameters { text += ";" + parameter.name + "=" + parameter.value }
        return text
    }

    /// The value of a parameter, found by name ignoring case; `nil` when absent.
    ///
    /// ```swift
    /// try PasteboardType(validating: "text/plain;charset=utf-8").parameter("CharSet")  // "utf-8"
    /// ```
    public func parameter(_ name: String) -> String? {
        let wanted = name.lowercased()
        return parameters.first { $0.name == wanted }?.value
    }

    /// The same MIME type without parameters (`text/plain;charset=utf-8` → `text/plain`);
    /// an identifier is returned as it is.
    public var withoutParameters: PasteboardType {
        guard isMIME, !parameters.isEmpty else { return self }
        return PasteboardType(constant: String(rawValue.prefix { $0 != ";" }))
    }

    /// The Apple identifier for this type, for clients that build a `UTType` from it.
    ///
    /// For a MIME type, the identifier mapped to it in ``appleAliases`` (also found for a few
    /// other spellings, such as `text/xml` → `public.xml`), else the one for its essence
    /// (`text/html;charset=utf-8` → `public.html`), else `nil`. For an identifier, the
    /// identifier itself.
    public var appleIdentifier: String? {
        guard isMIME else { return rawValue }
        if let identifier = AppleTypeIdentifiers.identifierByCanonicalForm[canonicalForm] {
            return identifier
        }
        if !parameters.isEmpty {
            return AppleTypeIdentifiers.identifierByCanonicalForm[essence]
        }
        return nil
    }

    public var description: String {
        rawValue
    }

    public static func == (lhs: Self, rhs: Self) -> Bool {
        lhs.canonicalForm == rhs.canonicalForm
    }

    public func hash(into hasher: inout Hasher) {
        hasher.combine(canonicalForm)
    }
}

// MARK: - Common types

extension PasteboardType {
    /// `text/plain;charset=utf-8`: text, as `pbctl copy` writes valid UTF-8.
    public static let utf8PlainText = PasteboardType(constant: "text/plain;charset=utf-8")
    /// `text/plain`: any plain text; every `text/*` type conforms to it.
    public static let plainText = PasteboardType(constant: "text/plain")
    /// `text/html`.
    public static let html = PasteboardType(constant: "text/html")
    /// `text/uri-list`: one or more URLs, one per line (`public.url`, `public.file-url`).
    public static let uriList = PasteboardType(constant: "text/uri-list")
    /// `application/json`.
    public static let json = PasteboardType(constant: "application/json")
    /// `image/png`.
    public static let png = PasteboardType(constant: "image/png")
    /// `application/octet-stream`: any bytes; every type except `inode/*` conforms to it.
    public static let octetStream = PasteboardType(constant: "application/octet-stream")
}

// MARK: - Codable

extension PasteboardType: Codable {
    /// Decodes a type from a single string, validating it as ``init(validating:)`` does.
    public init(from decoder: any Decoder) throws {
        let container = try decoder.singleValueContainer()
        try self.init(validating: container.decode(String.self))
    }

    /// Encodes the type as its ``rawValue``.
    public func encode(to encoder: any Encoder) throws {
        var container = encoder.singleValueContainer()
        try container.encode(rawValue)
    }
}
