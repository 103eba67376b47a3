import Foundation

// The Foundation types that are `Transferable` out of the box, as on Apple platforms.

extension String: Transferable {
    /// UTF-8 text, written as `text/plain;charset=utf-8`; read from any text.
    ///
    /// Reading takes `text/plain;charset=utf-8` first, then `text/plain;charset=utf-16`, then
    /// any plain text, then any text (a `text/…` type, JSON, XML). Text other than UTF-16 is
    /// read as UTF-8, or as UTF-16 when it starts with a byte order mark; UTF-16 without one is
    /// big-endian, as RFC 2781 says. Bytes that are not valid become U+FFFD rather than failing
    /// the paste.
    public static var transferRepresentation: some TransferRepresentation {
        DataRepresentation(contentType: .utf8PlainText) { string in
            Data(string.utf8)
        } importing: { data in
            String.decodingText(data)
        }
        DataRepresentation(importedContentType: .utf16PlainText) { data in
            String.decodingUTF16(data)
        }
        DataRepresentation(importedContentType: .plainText) { data in
            String.decodingText(data)
        }
        DataRepresentation(importedContentType: .text) { data in
            String.decodingText(data)
        }
    }

    /// Text from bytes offered as the MIME type `type`: UTF-16 when its charset says so
    /// (`utf-16`, `utf-16le`, `utf-16be`), else as ``decodingText(_:)`` reads it.
    static func decodingText(_ data: Data, offeredAs type: String) -> String {
        let parameters = type.lowercased().split(separator: ";").dropFirst().map { $0.filter { !$0.isWhitespace } }
        switch parameters.first(where: { $0.hasPrefix("charset=") })?.dropFirst("charset=".count).trimmingCharacters(in: CharacterSet(charactersIn: "\"")) {
        case "utf-16", "utf-16be": return decodingUTF16(data)
        case "utf-16le": return decodingUTF16(data, littleEndianWithoutMark: true)
        default: return decodingText(data)
        }
    }

    /// Text from bytes: UTF-16 after a byte order mark, UTF-8 otherwise, invalid sequences
    /// replaced.
    static func decodingText(_ data: Data) -> String {
        let bytes = [UInt8](data)
        if bytes.starts(with: [0xEF, 0xBB, 0xBF]) {
            return String(decoding: bytes.dropFirst(3), as: UTF8.self)
        }
        if bytes.starts(with: [0xFF, 0xFE]) || bytes.starts(with: [0xFE, 0xFF]) {
            return decodingUTF16(data)
        }
        return String(decoding: bytes, as: UTF8.self)
    }

    /// UTF-16 text: the byte order its byte order mark gives, big-endian without one (unless
    /// the type said little-endian: `charset=utf-16le`).
    static func decodingUTF16(_ data: Data, littleEndianWithoutMark: Bool = false) -> String {
        var bytes = [UInt8](data)[...]
        var littleEndian = littleEndianWithoutMark
        if bytes.starts(with: [0xFF, 0xFE]) {
            littleEndian = true
            bytes = bytes.dropFirst(2)
        } else if bytes.starts(with: [0xFE, 0xFF]) {
            bytes = bytes.dropFirst(2)
        }
        var units: [UInt16] = []
        units.reserveCapacity(bytes.count / 2)
        var index = bytes.startIndex
        while index + 1 < bytes.endIndex {
            let (first, second) = (UInt16(bytes[index]), UInt16(bytes[index + 1]))
            units.append(littleEndian ? first | second << 8 : first << 8 | second)
            index += 2
        }
        if index < bytes.endIndex {
            units.append(0xFFFD)
        }
        return String(decoding: units, as: UTF16.self)
    }
}

extension Data: Transferable {
    /// The bytes as they are, written as `application/octet-stream`; reading takes the
    /// richest type of an item, whatever it is.
    public static var transferRepresentation: some TransferRepresentation {
        DataRepresentation(contentType: .data) { data in
            data
        } importing: { data in
            data
        }
    }
}

extension URL: Transferable {
    /// A `text/uri-list` (RFC 2483) holding the one URL, ended by CRLF, under `.fileURL` for a
    /// file URL and `.url` for any other (the server writes both as `text/uri-list`), then
    /// the URL as UTF-8 text for text editors.
    ///
    /// Reading takes the first URL of a `text/uri-list`, skipping `#` comment lines; it does
    /// not read URLs from plain text.
    public static var transferRepresentation: some TransferRepresentation {
        DataRepresentation(contentType: .fileURL) { url in
            URL.uriList([url])
        } importing: { data in
            try URL.firstURL(inURIList: data)
        }
        .exportingCondition { url in url.isFileURL }
        DataRepresentation(contentType: .url) { url in
            URL.uriList([url])
        } importing: { data in
            try URL.firstURL(inURIList: data)
        }
        ProxyRepresentation(exporting: { (url: URL) in url.absoluteString })
    }

    /// A `text/uri-list`: each URL on a line of its own, each line ended by CRLF.
    static func uriList(_ urls: [URL]) -> Data {
        Data(urls.map { $0.absoluteString + "\r\n" }.joined().utf8)
    }

    /// The URLs of a `text/uri-list`: lines split at CRLF or LF, blank lines and `#` comments
    /// skipped, surrounding spaces trimmed.
    static func urls(inURIList data: Data) -> [URL] {
        String.decodingText(data)
            .split(omittingEmptySubsequences: true) { $0 == "\n" || $0 == "\r\n" || $0 == "\r" }
            .map { $0.trimmingCharacters(in: .whitespaces) }
            .filter { !$0.isEmpty && !$0.hasPrefix("#") }
            .compactMap { URL(string: $0) }
    }

    static func firstURL(inURIList data: Data) throws -> URL {
        guard let url = urls(inURIList: data).first else {
            throw TransferError.undecodable(
                "The text/uri-list holds no URL; it should hold one URL per line, as \"https://example.com\\r\\n\".")
        }
        return url
    }
}

extension AttributedString: Transferable {
    /// The string with its Foundation attributes as JSON, under `.attributedString`
    /// (`application/vnd.pasteboardd.attributed-string+json`), then the plain characters as
    /// UTF-8 text, so that a text editor receives text and text can be read back as an
    /// `AttributedString` without attributes.
    ///
    /// The JSON is an array of runs, each the run's text and the attributes Foundation can
    /// encode, under their names:
    ///
    /// ```json
    /// [{"text": "Read ", "attributes": {}},
    ///  {"text": "this", "attributes": {"NSLink": "https://example.com"}}]
    /// ```
    ///
    /// Foundation on Linux has no `Codable` `AttributedString`, so the format is this library's;
    /// the attributes kept are those of `AttributeScopes.FoundationAttributes` that can be
    /// encoded (link, language, alternate description, image URL, and the formatting
    /// attributes). Other attributes are dropped.
    public static var transferRepresentation: some TransferRepresentation {
        DataRepresentation(contentType: .attributedString) { string in
            try AttributedStringArchive.encode(string)
        } importing: { data in
            try AttributedStringArchive.decode(data)
        }
        ProxyRepresentation { (string: AttributedString) in
            String(string.characters)
        } importing: { (text: String) in
            AttributedString(text)
        }
    }
}
