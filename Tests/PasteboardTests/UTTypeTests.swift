import Foundation
import Testing

@testable import Pasteboard

@Suite("UTType")
struct UTTypeTests {
    // MARK: Identity and mapping

    @Test(
        "common types have Apple's identifiers and the server's MIME types",
        arguments: [
            (UTType.utf8PlainText, "public.utf8-plain-text", "text/plain;charset=utf-8"),
            (.plainText, "public.plain-text", "text/plain"),
            (.text, "public.text", "text/plain"),
            (.html, "public.html", "text/html"),
            (.rtf, "public.rtf", "text/rtf"),
            (.json, "public.json", "application/json"),
            (.xml, "public.xml", "application/xml"),
            (.png, "public.png", "image/png"),
            (.jpeg, "public.jpeg", "image/jpeg"),
            (.tiff, "public.tiff", "image/tiff"),
            (.gif, "com.compuserve.gif", "image/gif"),
            (.pdf, "com.adobe.pdf", "application/pdf"),
            (.url, "public.url", "text/uri-list"),
            (.fileURL, "public.file-url", "text/uri-list"),
            (.commaSeparatedText, "public.comma-separated-values-text", "text/csv"),
            (.mpeg4Movie, "public.mpeg-4", "video/mp4"),
            (.data, "public.data", "application/octet-stream"),
        ])
    func commonTypes(type: UTType, identifier: String, mimeType: String) {
        #expect(type.identifier == identifier)
        #expect(type.preferredMIMEType == mimeType)
        #expect(type.pasteboardType == mimeType)
        #expect(type.description == identifier)
        #expect(UTType(identifier) == type)
    }

    @Test(
        "abstract types have no MIME type and are written as their identifier",
        arguments: [
            (UTType.image, "public.image"), (.movie, "public.movie"), (.audio, "public.audio"),
            (.content, "public.content"), (.item, "public.item"),
        ])
    func abstractTypes(type: UTType, identifier: String) {
        #expect(type.identifier == identifier)
        #expect(type.preferredMIMEType == nil)
        #expect(type.pasteboardType == identifier)
    }

    @Test("MIME types map back to Apple's types")
    func mimeToType() {
        #expect(UTType(mimeType: "text/plain;charset=utf-8") == .utf8PlainText)
        #expect(UTType(mimeType: "Text/Plain; CharSet=UTF-8") == .utf8PlainText)
        #expect(UTType(mimeType: "text/plain") == .plainText)
        #expect(UTType(mimeType: "text/html") == .html)
        #expect(UTType(mimeType: "text/xml") == .xml)
        #expect(UTType(mimeType: "application/x-pdf") == .pdf)
        #expect(UTType(mimeType: "image/pjpeg") == .jpeg)
        #expect(UTType(mimeType: "text/uri-list") == .url)
        #expect(UTType(mimeType: "image/*") == .image)
        #expect(UTType(mimeType: "video/*") == .movie)
        #expect(UTType(mimeType: "*/*") == .data)
    }

    @Test("a MIME type with parameters no Apple type has stays itself")
    func mimeWithParameters() throws {
        let latin1 = try #require(UTType(mimeType: "text/plain;charset=iso-8859-1"))
        #expect(latin1 != .plainText)
        #expect(latin1.identifier == "text/plain;charset=iso-8859-1")
        #expect(latin1.conforms(to: .plainText))
        #expect(latin1.conforms(to: .text))
        #expect(!latin1.conforms(to: .utf8PlainText))
    }

    @Test("an unknown MIME type is a type of its own")
    func unknownMIME() throws {
        let diff = try #require(UTType(mimeType: "text/x-diff"))
        #expect(diff.identifier == "text/x-diff")
        #expect(diff.preferredMIMEType == "text/x-diff")
        #expect(diff.pasteboardType == "text/x-diff")
        #expect(diff == UTType(mimeType: "TEXT/X-DIFF"))
        #expect(!diff.isDeclared)
    }

    @Test("invalid strings give no type")
    func invalid() {
        #expect(UTType("image/png") == nil)
        #expect(UTType("") == nil)
        #expect(UTType("has space") == nil)
        #expect(UTType(mimeType: "public.png") == nil)
        #expect(UTType(mimeType: "text/ plain") == nil)
        #expect(UTType(mimeType: "nonsense") == nil)
        #expect(UTType(pasteboardType: "text/") == nil)
    }

    @Test("pasteboard type strings map back, MIME and identifiers alike")
    func pasteboardTypes() {
        #expect(UTType(pasteboardType: "text/plain;charset=utf-8") == .utf8PlainText)
        #expect(UTType(pasteboardType: "public.png") == .png)
        #expect(UTType(pasteboardType: "com.example.undeclared")?.identifier == "com.example.undeclared")
        #expect(UTType.types(for: "text/html") == .html)
        #expect(UTType.types(for: "bad type").identifier == "bad type")
    }

    @Test("identifiers ignore case")
    func identifierCase() {
        #expect(UTType("PUBLIC.PNG") == .png)
        #expect(UTType("Public.Text") == .text)
        #expect(UTType("com.Example.Thing") == UTType("com.example.thing"))
    }

    @Test("Apple identifiers without a static still have their MIME type")
    func otherAppleIdentifiers() throws {
        let yaml = try #require(UTType("public.yaml"))
        #expect(yaml.preferredMIMEType == "application/x-yaml")
        #expect(yaml.conforms(to: .text))
        #expect(UTType("public.heic") == .heic)
    }

    @Test("types are Codable as their identifier")
    func codable() throws {
        let types: [UTType] = [.utf8PlainText, .image, UTType(mimeType: "text/x-diff")!, .fileURL]
        let data = try JSONEncoder().encode(types)
        #expect(String(decoding: data, as: UTF8.self) == #"["public.utf8-plain-text","public.image","text\/x-diff","public.file-url"]"#)
        #expect(try JSONDecoder().decode([UTType].self, from: data) == types)
        #expect(throws: DecodingError.self) { try JSONDecoder().decode([UTType].self, from: Data(#"["a b"]"#.utf8)) }
    }

    @Test("file name extensions of common types")
    func extensions() {
        #expect(UTType.png.preferredFilenameExtension == "png")
        #expect(UTType.utf8PlainText.preferredFilenameExtension == "txt")
        #expect(UTType.mpeg4Movie.preferredFilenameExtension == "mp4")
        #expect(UTType.image.preferredFilenameExtension == nil)
    }

    // MARK: Conformance

    @Test(
        "conformance follows the server and Apple's hierarchy",
        arguments: [
            (UTType.utf8PlainText, UTType.plainText, true),
            (.plainText, .text, true),
            (.text, .data, true),
            (.utf8PlainText, .data, true),
            (.plainText, .utf8PlainText, false),
            (.html, .text, true),
            (.html, .plainText, true),
            (.json, .text, true),
            (.xml, .text, true),
            (.commaSeparatedText, .text, true),
            (.png, .image, true),
            (.image, .data, true),
            (.png, .data, true),
            (.png, .content, true),
            (.image, .png, false),
            (.png, .jpeg, false),
            (.png, .text, false),
            (.mpeg4Movie, .movie, true),
            (.mpeg4Movie, .audiovisualContent, true),
            (.mpeg4Movie, .content, true),
            (.movie, .audio, false),
            (.pdf, .compositeContent, true),
            (.pdf, .content, true),
            (.pdf, .text, false),
            (.fileURL, .url, true),
            (.url, .fileURL, true),  // the same MIME type on the pasteboard
            (.data, .item, true),
            (.item, .data, false),
            (.content, .data, false),
            (.data, .text, false),
        ])
    func conformance(type: UTType, parent: UTType, expected: Bool) {
        #expect(type.conforms(to: parent) == expected)
    }

    @Test("every type conforms to itself, to .item and to .data")
    func everyType() throws {
        let types: [UTType] = [
            .png, .text, .image, UTType(mimeType: "application/x-whatever")!, UTType("com.example.loose")!,
        ]
        for type in types {
            #expect(type.conforms(to: type))
            #expect(type.conforms(to: .item))
            #expect(type.conforms(to: .data))
        }
    }

    @Test("MIME types conform to the abstract type of their top-level type")
    func mimePrefixes() throws {
        #expect(UTType(mimeType: "image/x-xcf")!.conforms(to: .image))
        #expect(UTType(mimeType: "video/x-matroska")!.conforms(to: .movie))
        #expect(UTType(mimeType: "audio/flac")!.conforms(to: .audio))
        #expect(UTType(mimeType: "audio/flac")!.conforms(to: .content))
        #expect(UTType(mimeType: "text/x-diff")!.conforms(to: .text))
        #expect(UTType(mimeType: "text/x-diff")!.conforms(to: .content))
        #expect(!UTType(mimeType: "application/x-whatever")!.conforms(to: .content))
    }

    @Test("isSubtype and isSupertype")
    func subtypes() {
        #expect(UTType.png.isSubtype(of: .image))
        #expect(!UTType.png.isSubtype(of: .png))
        #expect(UTType.image.isSupertype(of: .png))
    }

    // MARK: Declarations

    @Test("an exported type conforms to its parent, transitively")
    func exportedType() throws {
        let todo = UTType(exportedAs: "com.example.tests.todo", conformingTo: .json)
        #expect(todo.identifier == "com.example.tests.todo")
        #expect(todo.preferredMIMEType == nil)
        #expect(todo.pasteboardType == "com.example.tests.todo")
        #expect(todo.isDeclared)
        #expect(todo.conforms(to: .json))
        #expect(todo.conforms(to: .text))
        #expect(todo.conforms(to: .content))
        #expect(todo.conforms(to: .data))
        #expect(!todo.conforms(to: .png))
        #expect(!UTType.json.conforms(to: todo))
        #expect(UTType("com.example.tests.todo") == todo)
        #expect(UTType(pasteboardType: "COM.EXAMPLE.TESTS.TODO") == todo)
    }

    @Test("declared types chain")
    func chain() {
        let base = UTType(exportedAs: "com.example.tests.chain.base", conformingTo: .image)
        let derived = UTType(exportedAs: "com.example.tests.chain.derived", conformingTo: base)
        #expect(derived.conforms(to: base))
        #expect(derived.conforms(to: .image))
        #expect(derived.conforms(to: .content))
        #expect(!base.conforms(to: derived))
    }

    @Test("an undeclared identifier conforms only to itself, .data and .item")
    func undeclared() throws {
        let loose = try #require(UTType("com.example.tests.never-declared"))
        #expect(!loose.isDeclared)
        #expect(loose.conforms(to: .data))
        #expect(!loose.conforms(to: .text))
    }

    @Test("a declared MIME type reads back as the declared type")
    func declaredMIME() throws {
        let profile = UTType(
            exportedAs: "com.example.tests.profile", preferredMIMEType: "application/vnd.example.tests.profile+json",
            conformingTo: .json)
        #expect(profile.pasteboardType == "application/vnd.example.tests.profile+json")
        #expect(UTType(mimeType: "application/vnd.example.tests.profile+json") == profile)
        #expect(UTType(pasteboardType: "application/vnd.example.tests.profile+json")?.identifier == "com.example.tests.profile")
        #expect(profile.conforms(to: .text))
    }

    @Test("an imported declaration does not replace an exported one")
    func importedAfterExported() {
        let exported = UTType(exportedAs: "com.example.tests.owned", conformingTo: .image)
        _ = UTType(importedAs: "com.example.tests.owned", conformingTo: .text)
        #expect(exported.conforms(to: .image))
        #expect(!exported.conforms(to: .text))

        let imported = UTType(importedAs: "com.example.tests.foreign", conformingTo: .html)
        #expect(imported.conforms(to: .text))
    }

    @Test("declaring one of Apple's identifiers gives Apple's type")
    func redeclaringApple() {
        #expect(UTType(exportedAs: "public.png", conformingTo: .text) == .png)
        #expect(!UTType.png.conforms(to: .text))
    }

    @Test("declarations from many tasks at once are all kept")
    func concurrentDeclarations() async {
        await withTaskGroup(of: Void.self) { group in
            for index in 0..<64 {
                group.addTask {
                    _ = UTType(exportedAs: "com.example.tests.concurrent.t\(index)", conformingTo: .json)
                }
            }
        }
        for index in 0..<64 {
            #expect(UTType("com.example.tests.concurrent.t\(index)")?.conforms(to: .text) == true)
        }
    }
}
