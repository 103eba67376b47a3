import PasteboardModel
import Testing

@Suite("Apple identifiers")
struct AppleIdentifierTests {
    /// The identifiers the contract names, with the MIME type each must become.
    static let contract: [(String, String)] = [
        ("public.utf8-plain-text", "text/plain;charset=utf-8"),
        ("public.plain-text", "text/plain"),
        ("public.html", "text/html"),
        ("public.rtf", "text/rtf"),
        ("public.url", "text/uri-list"),
        ("public.file-url", "text/uri-list"),
        ("public.json", "application/json"),
        ("public.png", "image/png"),
        ("public.jpeg", "image/jpeg"),
        ("public.tiff", "image/tiff"),
        ("com.adobe.pdf", "application/pdf"),
        ("public.comma-separated-values-text", "text/csv"),
        ("public.mpeg-4", "video/mp4"),
    ]

    /// Further identifiers that are mapped, spelled out independently of the table.
    static let extra: [(String, String)] = [
        ("public.text", "text/plain"),
        ("public.data", "application/octet-stream"),
        ("public.xml", "application/xml"),
        ("public.svg-image", "image/svg+xml"),
        ("com.compuserve.gif", "image/gif"),
        ("org.webmproject.webp", "image/webp"),
        ("public.mp3", "audio/mpeg"),
        ("public.zip-archive", "application/zip"),
        ("public.utf16-plain-text", "text/plain;charset=utf-16"),
    ]

    @Test("the contract's identifiers map to MIME", arguments: contract + extra)
    func mapsToMIME(identifier: String, mimeType: String) throws {
        let type = try PasteboardType(validating: identifier)
        #expect(type.isMIME)
        #expect(type.rawValue == mimeType)
        #expect(try type == PasteboardType(validating: mimeType))
    }

    @Test("identifiers match ignoring case", arguments: ["PUBLIC.PNG", "Public.Png", "public.PNG"])
    func caseInsensitive(identifier: String) throws {
        #expect(try PasteboardType(validating: identifier).rawValue == "image/png")
    }

    @Test("every entry of the table is valid and maps as listed")
    func wholeTable() throws {
        #expect(PasteboardType.appleAliases.count >= Self.contract.count + Self.extra.count)
        for (identifier, mimeType) in PasteboardType.appleAliases {
            let type = try PasteboardType(validating: identifier)
            #expect(type.isMIME, "\(identifier)")
            #expect(type.rawValue == mimeType, "\(identifier)")
        }
        let identifiers = PasteboardType.appleAliases.map { $0.identifier.lowercased() }
        #expect(Set(identifiers).count == identifiers.count, "an identifier is listed twice")
    }

    @Test("every mapped MIME type reads back as an identifier that maps to it")
    func reverseRoundTrip() throws {
        for (_, mimeType) in PasteboardType.appleAliases {
            let type = try PasteboardType(validating: mimeType)
            let identifier = try #require(type.appleIdentifier, "\(mimeType)")
            #expect(try PasteboardType(validating: identifier) == type, "\(mimeType) → \(identifier)")
        }
    }

    @Test(
        "reverse mapping picks the listed identifier",
        arguments: [
            ("text/plain;charset=utf-8", "public.utf8-plain-text"),
            ("TEXT/PLAIN; CHARSET=UTF-8", "public.utf8-plain-text"),
            ("text/plain", "public.plain-text"),
            ("text/plain;charset=iso-8859-1", "public.plain-text"),
            ("text/html;charset=utf-8", "public.html"),
            ("text/uri-list", "public.url"),
            ("text/rtf", "public.rtf"),
            ("application/rtf", "public.rtf"),
            ("text/xml", "public.xml"),
            ("image/png", "public.png"),
            ("application/pdf", "com.adobe.pdf"),
            ("application/x-pdf", "com.adobe.pdf"),
            ("text/csv", "public.comma-separated-values-text"),
            ("video/mp4", "public.mpeg-4"),
            ("application/octet-stream", "public.data"),
            ("com.example.todo", "com.example.todo"),
        ])
    func reverse(mimeType: String, identifier: String) throws {
        #expect(try PasteboardType(validating: mimeType).appleIdentifier == identifier)
    }

    @Test("MIME types without an identifier have none", arguments: ["application/x-made-up", "x-special/gnome-copied-files"])
    func noReverse(mimeType: String) throws {
        #expect(try PasteboardType(validating: mimeType).appleIdentifier == nil)
    }

    @Test("identifiers that are not Apple's are kept as written")
    func unknownIdentifiers() throws {
        let type = try PasteboardType(validating: "com.example.todo")
        #expect(!type.isMIME)
        #expect(type.rawValue == "com.example.todo")
        #expect(try PasteboardType(validating: "public.made-up").rawValue == "public.made-up")
    }
}
