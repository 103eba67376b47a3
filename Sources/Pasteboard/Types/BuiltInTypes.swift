import PasteboardModel

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
        ("public.delimited-values-text", nil, ["public.text"], nil),
        ("public.comma-separated-values-text", alias, ["public.delimited-values-text"], "csv"),
        ("public.tab-separated-values-text", alias, ["public.delimited-values-text"], "tsv"),
        ("public.utf8-tab-separated-values-text", alias, ["public.tab-separated-values-text"], "tsv"),
        ("public.yaml", alias, ["public.text"], "yaml"),
        ("public.log", "text/x-log", ["public.plain-text"], "log"),
        ("public.source-code", nil, ["public.plain-text"], nil),
        ("public.c-source", "text/x-csrc", ["public.source-code"], "c"),
        ("public.c-header", "text/x-chdr", ["public.source-code"], "h"),
        ("public.c-plus-plus-source", "text/x-c++src", ["public.source-code"], "cpp"),
        ("public.c-plus-plus-header", "text/x-c++hdr", ["public.source-code"], "hpp"),
        ("public.objective-c-source", "text/x-objcsrc", ["public.source-code"], "m"),
        ("public.objective-c-plus-plus-source", "text/x-objc++src", ["public.source-code"], "mm"),
        ("public.swift-source", "text/x-swift", ["public.source-code"], "swift"),
        ("public.make-source", "text/x-makefile", ["public.source-code"], "mk"),
        ("public.script", nil, ["public.source-code"], nil),
        ("com.netscape.javascript-source", alias, ["public.script"], "js"),
        ("public.shell-script", "application/x-shellscript", ["public.script"], "sh"),
        ("public.python-script", "text/x-python", ["public.script"], "py"),
        ("public.ruby-script", "application/x-ruby", ["public.script"], "rb"),
        ("public.perl-script", "application/x-perl", ["public.script"], "pl"),
        ("public.php-script", "application/x-php", ["public.script"], "php"),
        ("com.apple.property-list", nil, ["public.data"], nil),
        ("com.apple.xml-property-list", nil, ["public.xml", "com.apple.property-list"], "plist"),
        ("com.apple.binary-property-list", nil, ["com.apple.property-list"], "plist"),
        ("public.geojson", "application/geo+json", ["public.json"], "geojson"),
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
        ("public.heif", alias, ["public.image"], "heif"),
        ("com.microsoft.ico", alias, ["public.image"], "ico"),
        ("com.apple.icns", "image/x-icns", ["public.image"], "icns"),
        ("public.camera-raw-image", "image/x-dcraw", ["public.image"], nil),
        ("public.3d-content", nil, ["public.content"], nil),
        ("com.pixar.universal-scene-description-mobile", "model/vnd.usdz+zip", ["public.3d-content", "public.zip-archive"], "usdz"),
        ("com.adobe.pdf", alias, ["public.data", "public.composite-content"], "pdf"),
        ("public.archive", nil, ["public.data"], nil),
        ("public.zip-archive", alias, ["public.archive"], "zip"),
        ("org.gnu.gnu-zip-archive", alias, ["public.archive"], "gz"),
        ("public.bzip2-archive", alias, ["public.archive"], "bz2"),
        ("public.tar-archive", "application/x-tar", ["public.archive"], "tar"),
        ("public.disk-image", nil, ["public.data", "public.archive"], nil),
        ("org.idpf.epub-container", alias, ["public.zip-archive", "public.composite-content"], "epub"),
        ("public.spreadsheet", nil, ["public.content"], nil),
        ("public.presentation", nil, ["public.composite-content"], nil),
        ("public.database", nil, ["public.data"], nil),
        ("public.contact", nil, ["public.data", "public.content"], nil),
        ("public.vcard", alias, ["public.contact", "public.text"], "vcf"),
        ("public.message", nil, ["public.data", "public.content"], nil),
        ("public.email-message", alias, ["public.message"], "eml"),
        ("public.calendar-event", alias, ["public.data", "public.content"], "ics"),
        ("public.to-do-item", nil, ["public.data", "public.content"], nil),
        ("public.directory", "inode/directory", ["public.item"], nil),
        ("public.folder", "inode/directory", ["public.directory"], nil),
        ("public.symlink", "inode/symlink", ["public.item"], nil),
        ("public.executable", nil, ["public.item"], nil),
        ("public.unix-executable", "application/x-executable", ["public.data", "public.executable"], nil),
        ("com.microsoft.windows-executable", "application/x-ms-dos-executable", ["public.data", "public.executable"], "exe"),
        ("public.bookmark", nil, ["public.data"], nil),
        ("com.microsoft.internet-shortcut", "application/x-mswinurl", ["public.bookmark"], "url"),
        ("public.font", nil, ["public.data", "public.content"], nil),
        ("com.rsa.pkcs-12", "application/pkcs12", ["public.data"], "p12"),
        ("public.x509-certificate", "application/pkix-cert", ["public.data"], "cer"),
        ("public.audiovisual-content", nil, ["public.data", "public.content"], nil),
        ("public.movie", nil, ["public.audiovisual-content"], nil),
        ("public.audio", nil, ["public.audiovisual-content"], nil),
        ("public.video", nil, ["public.movie"], nil),
        ("public.mpeg-4", alias, ["public.movie"], "mp4"),
        ("com.apple.quicktime-movie", alias, ["public.movie"], "mov"),
        ("public.mp3", alias, ["public.audio"], "mp3"),
        ("public.mpeg-4-audio", alias, ["public.audio"], "m4a"),
        ("public.mpeg", alias, ["public.movie"], "mpg"),
        ("public.mpeg-2-video", "video/mpeg2", ["public.movie"], "m2v"),
        ("public.mpeg-2-transport-stream", "video/mp2t", ["public.movie"], "ts"),
        ("public.avi", alias, ["public.movie"], "avi"),
        ("public.aiff-audio", "audio/x-aiff", ["public.audio"], "aiff"),
        ("com.microsoft.waveform-audio", alias, ["public.audio"], "wav"),
        ("public.midi-audio", alias, ["public.audio"], "mid"),
        ("public.playlist", nil, ["public.data"], nil),
        ("public.m3u-playlist", "audio/x-mpegurl", ["public.playlist", "public.text"], "m3u"),
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

    /// Lowercased file name extension → the built-in types with it, in the table's order.
    static let byExtension: [String: [UTType]] = {
        var types: [String: [UTType]] = [:]
        for row in table {
            guard let fileExtension = row.ext, let entry = byKey[row.identifier.lowercased()] else { continue }
            types[fileExtension.lowercased(), default: []].append(entry.type)
        }
        return types
    }()

    /// Canonical MIME form → the built-in type, for the types whose MIME type is not from the
    /// server's alias table (``UTType/attributedString``).
    static let byOwnMIME: [String: UTType] = {
        var types: [String: UTType] = [:]
        // In the table's order: where two share a MIME type (`.directory`, `.folder`), the
        // first listed is the one a MIME type reads back as.
        for row in table {
            guard let entry = byKey[row.identifier.lowercased()], let mime = entry.type.preferredMIMEType,
                let type = try? PasteboardType(validating: mime), type.appleIdentifier == nil,
                types[type.canonicalForm] == nil
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
        "public.font": ["font/"],
    ]
}
