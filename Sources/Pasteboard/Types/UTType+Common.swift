import PasteboardModel

// MARK: - Common types

extension UTType {
    // Top of the hierarchy.

    /// `public.item`: every type conforms to it. Abstract; no MIME type.
    public static let item = BuiltInTypes.type("public.item")
    /// `public.content`: text, images, audio, video and documents. Abstract; no MIME type.
    public static let content = BuiltInTypes.type("public.content")
    /// `public.data` (`application/octet-stream`): any bytes; every type but `.item` and
    /// `.content` conforms to it, as every type conforms to `application/octet-stream` on the
    /// server.
    public static let data = BuiltInTypes.type("public.data")
    /// `public.composite-content`: documents such as PDF. Abstract; no MIME type.
    public static let compositeContent = BuiltInTypes.type("public.composite-content")

    // Text.

    /// `public.text` (`text/plain`): any text. The server maps the identifier to `text/plain`,
    /// which every `text/…` type and the text-based `application/…` types conform to.
    public static let text = BuiltInTypes.type("public.text")
    /// `public.plain-text` (`text/plain`): text in an unstated encoding (UTF-8 on Linux).
    public static let plainText = BuiltInTypes.type("public.plain-text")
    /// `public.utf8-plain-text` (`text/plain;charset=utf-8`).
    public static let utf8PlainText = BuiltInTypes.type("public.utf8-plain-text")
    /// `public.utf16-plain-text` (`text/plain;charset=utf-16`).
    public static let utf16PlainText = BuiltInTypes.type("public.utf16-plain-text")
    /// `public.html` (`text/html`).
    public static let html = BuiltInTypes.type("public.html")
    /// `public.rtf` (`text/rtf`).
    public static let rtf = BuiltInTypes.type("public.rtf")
    /// `public.json` (`application/json`).
    public static let json = BuiltInTypes.type("public.json")
    /// `public.xml` (`application/xml`).
    public static let xml = BuiltInTypes.type("public.xml")
    /// `public.comma-separated-values-text` (`text/csv`).
    public static let commaSeparatedText = BuiltInTypes.type("public.comma-separated-values-text")
    /// `public.tab-separated-values-text` (`text/tab-separated-values`).
    public static let tabSeparatedText = BuiltInTypes.type("public.tab-separated-values-text")

    // Links.

    /// `public.url` (`text/uri-list`): one URL per line, as RFC 2483 says.
    public static let url = BuiltInTypes.type("public.url")
    /// `public.file-url` (`text/uri-list`): the server writes file URLs under the same MIME
    /// type as other URLs, so `text/uri-list` reads back as `.url`.
    public static let fileURL = BuiltInTypes.type("public.file-url")

    // Images.

    /// `public.image`: any image; every `image/…` type conforms to it. Abstract; no MIME type.
    public static let image = BuiltInTypes.type("public.image")
    /// `public.png` (`image/png`).
    public static let png = BuiltInTypes.type("public.png")
    /// `public.jpeg` (`image/jpeg`).
    public static let jpeg = BuiltInTypes.type("public.jpeg")
    /// `public.tiff` (`image/tiff`).
    public static let tiff = BuiltInTypes.type("public.tiff")
    /// `com.compuserve.gif` (`image/gif`).
    public static let gif = BuiltInTypes.type("com.compuserve.gif")
    /// `com.microsoft.bmp` (`image/bmp`).
    public static let bmp = BuiltInTypes.type("com.microsoft.bmp")
    /// `org.webmproject.webp` (`image/webp`).
    public static let webP = BuiltInTypes.type("org.webmproject.webp")
    /// `public.heic` (`image/heic`).
    public static let heic = BuiltInTypes.type("public.heic")
    /// `public.svg-image` (`image/svg+xml`).
    public static let svg = BuiltInTypes.type("public.svg-image")

    // Documents.

    /// `com.adobe.pdf` (`application/pdf`).
    public static let pdf = BuiltInTypes.type("com.adobe.pdf")
    /// `public.zip-archive` (`application/zip`).
    public static let zip = BuiltInTypes.type("public.zip-archive")

    // Audio and video.

    /// `public.audiovisual-content`: any audio or video; every `audio/…` and `video/…` type
    /// conforms to it. Abstract; no MIME type.
    public static let audiovisualContent = BuiltInTypes.type("public.audiovisual-content")
    /// `public.movie`: any video; every `video/…` type conforms to it. Abstract; no MIME type.
    public static let movie = BuiltInTypes.type("public.movie")
    /// `public.audio`: any audio; every `audio/…` type conforms to it. Abstract; no MIME type.
    public static let audio = BuiltInTypes.type("public.audio")
    /// `public.mpeg-4` (`video/mp4`).
    public static let mpeg4Movie = BuiltInTypes.type("public.mpeg-4")
    /// `com.apple.quicktime-movie` (`video/quicktime`).
    public static let quickTimeMovie = BuiltInTypes.type("com.apple.quicktime-movie")
    /// `public.mp3` (`audio/mpeg`).
    public static let mp3 = BuiltInTypes.type("public.mp3")
    /// `public.mpeg-4-audio` (`audio/mp4`).
    public static let mpeg4Audio = BuiltInTypes.type("public.mpeg-4-audio")

    // This library's own.

    /// `org.pasteboardd.attributed-string`
    /// (`application/vnd.pasteboardd.attributed-string+json`): an `AttributedString` with its
    /// Foundation attributes, as JSON. Conforms to `.json`.
    ///
    /// Not one of Apple's types: Foundation on Linux has no `Codable` `AttributedString`, so
    /// this library defines the format (see `AttributedString`'s `Transferable` conformance).
    public static let attributedString = BuiltInTypes.type("org.pasteboardd.attributed-string")
}

// MARK: - The table behind them

/// The types this library knows without a declaration: their MIME types (from the server's
/// alias table, so the two always agree), their Apple-style parents and file name extensions.
enum BuiltInTypes {
    struct Entry: Sendable {
        let type: UTType
        /// Identifiers of the direct parents, as Apple declares them.
        let parents: [String]
        let filenameExtension: String?
    }

    /// Identifier, parents, extension; the MIME type comes from `PasteboardType.appleAliases`
    /// unless given.
    private static let table: [(identifier: String, mime: String?, parents: [String], ext: String?)] = [
        ("public.item", nil, [], nil),
        ("public.content", nil, ["public.item"], nil),
        ("public.data", alias, ["public.item"], nil),
        ("public.composite-content", nil, ["public.content"], nil),
        ("public.text", alias, ["public.data", "public.content"], nil),
        ("public.plain-text", alias, ["public.text"], "txt"),
        ("public.utf8-plain-text", alias, ["public.plain-text"], "txt"),
        ("public.utf16-plain-text", alias, ["public.plain-text"], "txt"),
        ("public.html", alias, ["public.text"], "html"),
        ("public.rtf", alias, ["public.text"], "rtf"),
        ("public.json", alias, ["public.text"], "json"),
        ("public.xml", alias, ["public.text"], "xml"),
        ("public.comma-separated-values-text", alias, ["public.text"], "csv"),
        ("public.tab-separated-values-text", alias, ["public.text"], "tsv"),
        ("public.url", alias, ["public.data"], nil),
        ("public.file-url", alias, ["public.url"], nil),
        ("public.image", nil, ["public.data", "public.content"], nil),
        ("public.png", alias, ["public.image"], "png"),
        ("public.jpeg", alias, ["public.image"], "jpeg"),
        ("public.tiff", alias, ["public.image"], "tiff"),
        ("com.compuserve.gif", alias, ["public.image"], "gif"),
        ("com.microsoft.bmp", alias, ["public.image"], "bmp"),
        ("org.webmproject.webp", alias, ["public.image"], "webp"),
        ("public.heic", alias, ["public.image"], "heic"),
        ("public.svg-image", alias, ["public.image"], "svg"),
        ("com.adobe.pdf", alias, ["public.data", "public.composite-content"], "pdf"),
        ("public.zip-archive", alias, ["public.data"], "zip"),
        ("public.audiovisual-content", nil, ["public.data", "public.content"], nil),
        ("public.movie", nil, ["public.audiovisual-content"], nil),
        ("public.audio", nil, ["public.audiovisual-content"], nil),
        ("public.mpeg-4", alias, ["public.movie"], "mp4"),
        ("com.apple.quicktime-movie", alias, ["public.movie"], "mov"),
        ("public.mp3", alias, ["public.audio"], "mp3"),
        ("public.mpeg-4-audio", alias, ["public.audio"], "m4a"),
        (
            "org.pasteboardd.attributed-string", "application/vnd.pasteboardd.attributed-string+json",
            ["public.json"], "json"
        ),
    ]

    /// A marker in ``table``: take the MIME type from the server's alias table.
    private static let alias: String? = "<alias>"

    /// Lowercased identifier → Apple's spelling and the MIME type the server maps it to.
    static let appleAliasByKey: [String: (identifier: String, mimeType: String)] = {
        var aliases: [String: (identifier: String, mimeType: String)] = [:]
        for (identifier, mimeType) in PasteboardType.appleAliases {
            let normalized = (try? PasteboardType(validating: mimeType))?.rawValue ?? mimeType
            aliases[identifier.lowercased()] = (identifier, normalized)
        }
        return aliases
    }()

    /// Key → entry, for every type in ``table``.
    static let byKey: [String: Entry] = {
        var entries: [String: Entry] = [:]
        for row in table {
            let mime = row.mime == alias ? appleAliasByKey[row.identifier.lowercased()]?.mimeType : row.mime
            let type = UTType(identifier: row.identifier, preferredMIMEType: mime)
            entries[type.key] = Entry(type: type, parents: row.parents, filenameExtension: row.ext)
        }
        return entries
    }()

    /// Canonical MIME form → the built-in type, for the types whose MIME type is not from the
    /// server's alias table (``UTType/attributedString``).
    static let byOwnMIME: [String: UTType] = {
        var types: [String: UTType] = [:]
        for entry in byKey.values {
            guard let mime = entry.type.preferredMIMEType, let type = try? PasteboardType(validating: mime),
                type.appleIdentifier == nil
            else { continue }
            types[type.canonicalForm] = entry.type
        }
        return types
    }()

    /// The built-in type with this identifier; the identifier must be in ``table``.
    static func type(_ identifier: String) -> UTType {
        guard let entry = byKey[identifier.lowercased()] else {
            preconditionFailure("\(identifier) is not a built-in type")
        }
        return entry.type
    }

    /// The abstract types the MIME wildcards stand for.
    static let wildcards: [String: UTType] = [
        "image/*": type("public.image"),
        "video/*": type("public.movie"),
        "audio/*": type("public.audio"),
        "text/*": type("public.text"),
        "*/*": type("public.data"),
    ]

    /// Abstract types matched by MIME prefix: key → the `type/` prefixes that conform to it.
    static let prefixesByAbstractKey: [String: [String]] = [
        "public.image": ["image/"],
        "public.movie": ["video/"],
        "public.audio": ["audio/"],
        "public.audiovisual-content": ["video/", "audio/"],
    ]
}
