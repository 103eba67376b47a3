/// Apple's uniform type identifiers and the MIME types they stand for on Linux.
///
/// Clients ported from macOS and iOS speak in identifiers (`public.utf8-plain-text`); the Linux
/// desktop, X11 and Wayland speak MIME. Mapping identifiers to MIME on the way in means every
/// pasteboard holds one vocabulary, so a GTK or Qt application reading the same data by MIME
/// type finds it.
extension PasteboardType {
    /// Apple identifiers accepted wherever a type is taken, each with the MIME type it becomes.
    ///
    /// Order matters for the reverse mapping (``appleIdentifier``): when several identifiers
    /// map to one MIME type, the first one listed is the one reported.
    ///
    /// - `public.url` and `public.file-url` both become `text/uri-list` (RFC 2483), the one
    ///   link format GTK, Qt, Firefox and Chromium all read and write on Linux.
    ///   `text/x-moz-url` is Mozilla's private format (UTF-16 "URL, newline, title"), so plain
    ///   URL bytes written under it would be misread. `text/uri-list` reads back as `public.url`,
    ///   the broader of the two.
    /// - `public.text` becomes `text/plain`, which every `text/*` type conforms to, so a request
    ///   for any text matches any text; `text/plain` reads back as `public.plain-text`.
    /// - `public.data` becomes `application/octet-stream`, which every type conforms to.
    ///
    /// Apple's abstract `public.image`, `public.audio`, `public.movie` and `public.video` are
    /// not listed: no bytes are of those types, so they are kept as written, and asked for they
    /// stand for the wildcards `image/*`, `audio/*` and `video/*` (``requestWildcards``).
    public static let appleAliases: [(identifier: String, mimeType: String)] = [
        ("public.utf8-plain-text", "text/plain;charset=utf-8"),
        ("public.plain-text", "text/plain"),
        ("public.text", "text/plain"),
        ("public.utf16-plain-text", "text/plain;charset=utf-16"),
        ("public.html", "text/html"),
        ("public.xhtml", "application/xhtml+xml"),
        ("public.rtf", "text/rtf"),
        ("public.url", "text/uri-list"),
        ("public.file-url", "text/uri-list"),
        ("public.json", "application/json"),
        ("public.xml", "application/xml"),
        ("public.yaml", "application/x-yaml"),
        ("com.netscape.javascript-source", "text/javascript"),
        ("net.daringfireball.markdown", "text/markdown"),
        ("public.comma-separated-values-text", "text/csv"),
        ("public.tab-separated-values-text", "text/tab-separated-values"),
        ("public.utf8-tab-separated-values-text", "text/tab-separated-values;charset=utf-8"),
        ("public.vcard", "text/vcard"),
        ("public.calendar-event", "text/calendar"),
        ("public.email-message", "message/rfc822"),
        ("public.png", "image/png"),
        ("public.jpeg", "image/jpeg"),
        ("public.tiff", "image/tiff"),
        ("com.compuserve.gif", "image/gif"),
        ("com.microsoft.bmp", "image/bmp"),
        ("com.microsoft.ico", "image/vnd.microsoft.icon"),
        ("org.webmproject.webp", "image/webp"),
        ("public.heic", "image/heic"),
        ("public.heif", "image/heif"),
        ("public.svg-image", "image/svg+xml"),
        ("com.adobe.pdf", "application/pdf"),
        ("public.mpeg-4", "video/mp4"),
        ("com.apple.quicktime-movie", "video/quicktime"),
        ("public.mpeg", "video/mpeg"),
        ("public.avi", "video/x-msvideo"),
        ("public.mp3", "audio/mpeg"),
        ("public.mpeg-4-audio", "audio/mp4"),
        ("com.microsoft.waveform-audio", "audio/wav"),
        ("public.midi-audio", "audio/midi"),
        ("public.zip-archive", "application/zip"),
        ("org.gnu.gnu-zip-archive", "application/gzip"),
        ("public.bzip2-archive", "application/x-bzip2"),
        ("org.idpf.epub-container", "application/epub+zip"),
        ("public.data", "application/octet-stream"),
    ]

    /// Apple's abstract types and the media type's wildcard each stands for when asked for:
    /// a request for `public.image` is one for `image/*`, which every image satisfies.
    public static let requestWildcards: [String: String] = [
        "public.image": "image/*",
        "public.audio": "audio/*",
        "public.movie": "video/*",
        "public.video": "video/*",
    ]

    /// Other spellings of MIME types in the table, used only to find an identifier for a MIME
    /// type (``appleIdentifier``); they never change what a type is.
    static let reverseOnlyAliases: [(mimeType: String, identifier: String)] = [
        ("application/rtf", "public.rtf"),
        ("text/xml", "public.xml"),
        ("application/yaml", "public.yaml"),
        ("text/yaml", "public.yaml"),
        ("application/javascript", "com.netscape.javascript-source"),
        ("text/x-vcard", "public.vcard"),
        ("image/x-icon", "com.microsoft.ico"),
        ("audio/x-wav", "com.microsoft.waveform-audio"),
        ("audio/vnd.wave", "com.microsoft.waveform-audio"),
        ("application/x-gzip", "org.gnu.gnu-zip-archive"),
        ("application/x-bzip", "public.bzip2-archive"),
        ("application/x-pdf", "com.adobe.pdf"),
    ]
}

/// Lookup tables built once from ``PasteboardType/appleAliases``.
enum AppleTypeIdentifiers {
    /// Lowercased identifier → MIME spelling.
    static let mimeTypeByIdentifier: [String: String] = {
        var table: [String: String] = [:]
        for (identifier, mimeType) in PasteboardType.appleAliases {
            table[identifier.lowercased()] = mimeType
        }
        return table
    }()

    /// Canonical form of a MIME type → the first identifier that maps to it.
    static let identifierByCanonicalForm: [String: String] = {
        var table: [String: String] = [:]
        let pairs =
            PasteboardType.appleAliases.map { ($0.mimeType, $0.identifier) }
            + PasteboardType.reverseOnlyAliases.map { ($0.mimeType, $0.identifier) }
        for (mimeType, identifier) in pairs {
            guard let type = try? PasteboardType(validating: mimeType), type.isMIME else { continue }
            if table[type.canonicalForm] == nil {
                table[type.canonicalForm] = identifier
            }
        }
        return table
    }()
}
