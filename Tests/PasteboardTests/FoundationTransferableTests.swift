import Foundation
import Testing

@testable import Pasteboard

@Suite("Foundation types are Transferable")
struct FoundationTransferableTests {
    // MARK: String

    @Test("String writes UTF-8 text")
    func stringWrites() async throws {
        let written = try await item("héllo")
        #expect(written.map(\.type) == ["text/plain;charset=utf-8"])
        #expect(written[0].data == Data("héllo".utf8))
    }

    @Test(
        "String reads any text",
        arguments: [
            ("text/plain;charset=utf-8", "plain"), ("text/plain", "no charset"), ("text/html", "<b>html</b>"),
            ("application/json", "{\"a\":1}"), ("text/csv", "a,b"),
        ])
    func stringReads(type: String, text: String) async throws {
        #expect(try await read(String.self, from: [(type, Data(text.utf8))]) == text)
    }

    @Test("String reads UTF-16 text by its charset")
    func stringReadsUTF16() async throws {
        let value = try await read(String.self, from: [("text/plain;charset=utf-16", Data([0x00, 0x68, 0x00, 0x69]))])
        #expect(value == "hi")
    }

    @Test("String does not read images")
    func stringIgnoresImages() async throws {
        #expect(try await read(String.self, from: [("image/png", Data([0x89]))]) == nil)
    }

    @Test("String prefers UTF-8 text over other text in the same item")
    func stringPrefersUTF8() async throws {
        let value = try await read(String.self, from: [("text/html", Data("<i>x</i>".utf8)), ("text/plain;charset=utf-8", Data("x".utf8))])
        #expect(value == "x")
    }

    @Test("text is decoded leniently: byte order marks, invalid UTF-8")
    func textDecoding() {
        #expect(String.decodingText(Data([0xEF, 0xBB, 0xBF, 0x61])) == "a")
        #expect(String.decodingText(Data([0xFF, 0xFE, 0x61, 0x00, 0xE9, 0x00])) == "aé")
        #expect(String.decodingText(Data([0xFE, 0xFF, 0x00, 0x61])) == "a")
        #expect(String.decodingText(Data([0x61, 0xFF, 0x62])) == "a\u{FFFD}b")
        #expect(String.decodingUTF16(Data([0x00, 0x61, 0x00, 0xE9])) == "aé")
        #expect(String.decodingUTF16(Data([0x00, 0x61, 0x00])) == "a\u{FFFD}")
    }

    // MARK: Data

    @Test("Data goes out as octet-stream and reads the richest type")
    func data() async throws {
        let written = try await item(Data([0, 1, 2]))
        #expect(written.map(\.type) == ["application/octet-stream"])
        #expect(try await read(Data.self, from: [("image/png", Data([7])), ("text/plain", Data([8]))]) == Data([7]))
    }

    // MARK: URL

    @Test("a web URL goes out as a uri-list and as text")
    func webURL() async throws {
        let url = URL(string: "https://example.com/a?b=c")!
        let written = try await item(url)
        #expect(written.map(\.type) == ["text/uri-list", "text/plain;charset=utf-8"])
        #expect(written[0].data == Data("https://example.com/a?b=c\r\n".utf8))
        #expect(written[1].data == Data("https://example.com/a?b=c".utf8))
        #expect(try await read(URL.self, from: written) == url)
    }

    @Test("a file URL goes out once as a uri-list, under .fileURL")
    func fileURL() async throws {
        let url = URL(fileURLWithPath: "/example/some file.txt")
        let exported = try await exportRepresentations(of: url)
        #expect(exported.map(\.contentType) == [.fileURL, .utf8PlainText])
        let uriList = try await exported[0].content.data()
        #expect(uriList == Data("file:///example/some%20file.txt\r\n".utf8))
        #expect(try await read(URL.self, from: [("text/uri-list", uriList)]) == url)
    }

    @Test("URLs are read from the first URL of a uri-list, comments skipped")
    func uriListParsing() async throws {
        let list = Data("# a comment\r\n\r\nhttps://one.example\r\nhttps://two.example\n".utf8)
        #expect(URL.urls(inURIList: list) == [URL(string: "https://one.example")!, URL(string: "https://two.example")!])
        #expect(try await read(URL.self, from: [("text/uri-list", list)]) == URL(string: "https://one.example"))
        await #expect(throws: TransferError.self) {
            try await read(URL.self, from: [("text/uri-list", Data("# only a comment\r\n".utf8))])
        }
    }

    @Test("URLs are not read from plain text")
    func urlNotFromText() async throws {
        #expect(try await read(URL.self, from: [("text/plain;charset=utf-8", Data("https://x.example".utf8))]) == nil)
    }

    // MARK: AttributedString

    @Test("an AttributedString goes out with its attributes, then as text")
    func attributedString() async throws {
        var string = AttributedString("Read ")
        var link = AttributedString("this")
        link.link = URL(string: "https://example.com")
        string.append(link)

        let written = try await item(string)
        #expect(written.map(\.type) == ["application/vnd.pasteboardd.attributed-string+json", "text/plain;charset=utf-8"])
        #expect(
            String(decoding: written[0].data, as: UTF8.self)
                == #"[{"attributes":{},"text":"Read "},{"attributes":{"NSLink":{"relative":"https:\/\/example.com"}},"text":"this"}]"#)
        #expect(String(decoding: written[1].data, as: UTF8.self) == "Read this")

        let back = try #require(try await read(AttributedString.self, from: written))
        #expect(back == string)
        #expect(back.runs.count == 2)
    }

    @Test("an AttributedString reads plain text, without attributes")
    func attributedFromText() async throws {
        #expect(try await read(AttributedString.self, from: [("text/plain", Data("plain".utf8))]) == AttributedString("plain"))
    }

    @Test("a text editor reading String from an AttributedString gets the text")
    func textEditorGetsText() async throws {
        let written = try await item(AttributedString("styled"))
        #expect(try await read(String.self, from: written) == "styled")
    }

    @Test("malformed attributed string JSON is undecodable")
    func badAttributedString() async throws {
        await #expect(throws: TransferError.self) {
            try await read(AttributedString.self, from: [("application/vnd.pasteboardd.attributed-string+json", Data("{}".utf8))])
        }
    }

    @Test("the attributed string type is JSON")
    func attributedStringType() {
        #expect(UTType.attributedString.identifier == "org.pasteboardd.attributed-string")
        #expect(UTType.attributedString.conforms(to: .json))
        #expect(UTType(mimeType: "application/vnd.pasteboardd.attributed-string+json") == .attributedString)
    }
}
