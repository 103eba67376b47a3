import Foundation
import PasteboardModel
import Testing

@Suite("PasteboardType spelling")
struct PasteboardTypeTests {
    @Test(
        "valid types normalize to exactly this spelling",
        arguments: [
            ("text/plain", "text/plain"),
            ("text/plain;charset=utf-8", "text/plain;charset=utf-8"),
            ("text/plain ; charset=utf-8", "text/plain;charset=utf-8"),
            ("text/plain;  charset=utf-8", "text/plain;charset=utf-8"),
            ("text/plain   ;charset=utf-8", "text/plain;charset=utf-8"),
            ("text/plain;charset=utf-8 ; format=flowed", "text/plain;charset=utf-8;format=flowed"),
            ("text/plain;", "text/plain"),
            ("text/plain ;", "text/plain"),
            ("text/plain;;charset=utf-8", "text/plain;charset=utf-8"),
            ("Text/HTML", "Text/HTML"),
            ("image/svg+xml", "image/svg+xml"),
            ("x-special/gnome-copied-files", "x-special/gnome-copied-files"),
            ("application/x-qt-windows-mime;value=\"FileName\"", "application/x-qt-windows-mime;value=\"FileName\""),
            ("text/plain; name=\"a;b\"", "text/plain;name=\"a;b\""),
            ("text/plain;name=\"a\\\"b\"", "text/plain;name=\"a\\\"b\""),
            ("com.example.todo", "com.example.todo"),
            ("Com.Example.Todo", "Com.Example.Todo"),
            ("UTF8_STRING", "UTF8_STRING"),
            ("com.example;v=1", "com.example;v=1"),
            ("!", "!"),
            (String(repeating: "a", count: 255), String(repeating: "a", count: 255)),
            ("application/" + String(repeating: "b", count: 243), "application/" + String(repeating: "b", count: 243)),
        ])
    func valid(input: String, normalized: String) throws {
        #expect(try PasteboardType(validating: input).rawValue == normalized)
        #expect(try PasteboardType(validating: input).description == normalized)
    }

    @Test(
        "invalid types throw InvalidType",
        arguments: [
            "",
            " text/plain",
            "text/plain ",
            "text/ plain",
            "text /plain",
            "text/plain;charset = utf-8",
            "text/plain;charset= utf-8",
            "text/plain;charset =utf-8",
            "text/plain\t",
            "text/plain;\tcharset=utf-8",
            "text/plain\n",
            "text/plain\r\n",
            "t\u{0}xt/plain",
            "text/plain\u{7F}",
            "téxt/plain",
            "text/plain;charset=utf‑8",
            String(repeating: "a", count: 256),
            "application/" + String(repeating: "b", count: 244),
            "text/plain;name=\"a b\"",
            "text/plain;na me=x",
            "com.example todo",
            "com.example ; v=1",
            " ",
            "text/plain ; charset",
            "a/b/c ; x=1",
        ])
    func invalid(input: String) {
        let error = #expect(throws: PasteboardError.self) { try PasteboardType(validating: input) }
        #expect(error?.code == .invalidType)
        #expect(error.map { !$0.message.isEmpty && $0.message.hasSuffix(".") } == true)
    }

    /// Printable ASCII without white space is a type (the contract's rule): what is no MIME
    /// type is kept as written, as `com.example.todo` is, and matches only its own spelling
    /// (in any letter case).
    @Test(
        "printable ASCII that is no MIME type is kept as written",
        arguments: ["text/", "/plain", "/", "a/b/c", "text/pl@in", "text/plain;charset", "text/plain;=utf-8", "text/plain;charset=", "text/plain;charset=\"utf-8", "x;y", "~!#$%^&*()"])
    func keptAsWritten(input: String) throws {
        let type = try PasteboardType(validating: input)
        #expect(type.rawValue == input)
        #expect(!type.isMIME)
        #expect(type == (try PasteboardType(validating: input.uppercased())))
        #expect(type != .plainText)
    }

    @Test("messages name the problem")
    func messages() {
        func message(_ input: String) -> String {
            do throws(PasteboardError) {
                _ = try PasteboardType(validating: input)
                return ""
            } catch {
                return error.message
            }
        }
        #expect(message("").hasPrefix("The type is empty;"))
        #expect(message(String(repeating: "a", count: 256)).contains("is 256 bytes long"))
        #expect(message("text/ plain").contains("space at byte 5"))
        #expect(message("text/plain\t").contains("tab at byte 10"))
        #expect(message("téxt/plain").contains("non-ASCII character at byte 1"))
        #expect(message("a/b/c ; x=1").contains("not a valid MIME type"))
        #expect(message("text/plain ; charset").contains("has no value"))
        #expect(message("text/plain\u{1}").contains("U+0001"))
    }

    @Test("MIME types expose essence and parameters")
    func parts() throws {
        let type = try PasteboardType(validating: "Text/Plain; CharSet=\"UTF-8\" ;Format=flowed")
        #expect(type.isMIME)
        #expect(type.rawValue == "Text/Plain;CharSet=\"UTF-8\";Format=flowed")
        #expect(type.essence == "text/plain")
        #expect(type.parameters.map(\.name) == ["charset", "format"])
        #expect(type.parameters.map(\.value) == ["UTF-8", "flowed"])
        #expect(type.parameter("CHARSET") == "UTF-8")
        #expect(type.parameter("delsp") == nil)
        #expect(type.canonicalForm == "text/plain;charset=utf-8;format=flowed")
        #expect(type.withoutParameters.rawValue == "Text/Plain")
        #expect(type.withoutParameters == .plainText)
    }

    @Test("identifiers have no parameters and a lowercased essence")
    func identifierParts() throws {
        let type = try PasteboardType(validating: "Com.Example.Todo")
        #expect(!type.isMIME)
        #expect(type.essence == "com.example.todo")
        #expect(type.parameters.isEmpty)
        #expect(type.canonicalForm == "com.example.todo")
        #expect(type.withoutParameters.rawValue == "Com.Example.Todo")
    }

    @Test("non-token parameter values are quoted in the canonical form")
    func canonicalQuoting() throws {
        let type = try PasteboardType(validating: "text/plain;z=\"a;b\";a=\"tok\"")
        #expect(type.canonicalForm == "text/plain;a=tok;z=\"a;b\"")
        #expect(type.parameter("z") == "a;b")
    }

    @Test("common constants")
    func constants() {
        #expect(PasteboardType.utf8PlainText.rawValue == "text/plain;charset=utf-8")
        #expect(PasteboardType.plainText.rawValue == "text/plain")
        #expect(PasteboardType.html.rawValue == "text/html")
        #expect(PasteboardType.uriList.rawValue == "text/uri-list")
        #expect(PasteboardType.json.rawValue == "application/json")
        #expect(PasteboardType.png.rawValue == "image/png")
        #expect(PasteboardType.octetStream.rawValue == "application/octet-stream")
    }

    @Test("Codable writes the normalized spelling and validates on decoding")
    func codable() throws {
        let type = try PasteboardType(validating: "public.utf8-plain-text")
        let encoder = JSONEncoder()
        encoder.outputFormatting = .withoutEscapingSlashes
        let data = try encoder.encode(type)
        #expect(String(decoding: data, as: UTF8.self) == "\"text/plain;charset=utf-8\"")
        #expect(try JSONDecoder().decode(PasteboardType.self, from: data) == .utf8PlainText)
        #expect(throws: PasteboardError.self) {
            try JSONDecoder().decode(PasteboardType.self, from: Data("\"text/ plain\"".utf8))
        }
    }
}
