import Foundation
import PasteboardModel
import Testing

@Suite("PasteboardName")
struct PasteboardNameTests {
    @Test(
        "valid names are kept exactly",
        arguments: [
            "general",
            "a",
            "my pasteboard",
            "Notes – drafts",
            "日本語",
            "📋 clips",
            "tab-free\u{A0}nbsp",
            "~!@#$%^&*()",
            // Around the noncharacters: the characters just beside them are fine.
            "\u{FDCF}\u{FDF0}\u{FFFD}\u{EFFF}\u{1FFFD}\u{10FFFD}",
            String(repeating: "x", count: 255),
            String(repeating: "日", count: 85),  // 255 bytes
        ])
    func valid(name: String) throws {
        let validated = try PasteboardName(validating: name)
        #expect(validated.rawValue == name)
        #expect(validated.description == name)
    }

    @Test(
        "invalid names throw InvalidName",
        arguments: [
            "",
            String(repeating: "x", count: 256),
            String(repeating: "日", count: 86),  // 258 bytes
            "a\u{0}b",
            "\t",
            "line\nbreak",
            "carriage\r",
            "escape\u{1B}[0m",
            "delete\u{7F}",
            "next line\u{85}",
            "c1 end\u{9F}",
            "\u{1F}",
            // Unicode noncharacters, which sd-bus refuses in a message.
            String(Unicode.Scalar(UInt32(0xFFFF))!),
            "x" + String(Unicode.Scalar(UInt32(0xFFFE))!),
            String(Unicode.Scalar(UInt32(0xFDD0))!) + " first",
            "last " + String(Unicode.Scalar(UInt32(0xFDEF))!),
            "plane 1 " + String(Unicode.Scalar(UInt32(0x1FFFF))!),
            "plane 16 " + String(Unicode.Scalar(UInt32(0x10FFFE))!),
        ])
    func invalid(name: String) {
        let error = #expect(throws: PasteboardError.self) { try PasteboardName(validating: name) }
        #expect(error?.code == .invalidName)
        #expect(error?.message.contains("1 to 255 bytes of UTF-8 without control characters") == true)
    }

    @Test("messages say what was wrong, without raw control characters")
    func messages() {
        func message(_ name: String) -> String {
            do throws(PasteboardError) {
                _ = try PasteboardName(validating: name)
                return ""
            } catch {
                return error.message
            }
        }
        #expect(message("").hasPrefix("The pasteboard name is empty;"))
        #expect(message(String(repeating: "x", count: 300)).contains("is 300 bytes long"))
        let control = message("ab\u{9}c")
        #expect(control.contains("U+0009 at byte 2"))
        #expect(control.contains("\"ab\\u{9}c\""))
        #expect(!control.unicodeScalars.contains { $0.value < 0x20 })
        #expect(message("日\u{85}").contains("U+0085 at byte 3"))
    }

    @Test("standard names")
    func standardNames() throws {
        #expect(PasteboardName.standardNames.map(\.rawValue) == ["general", "find", "drag", "font", "ruler"])
        #expect(PasteboardName.general.isStandard)
        #expect(try PasteboardName(validating: "ruler") == .ruler)
        #expect(try !PasteboardName(validating: "General").isStandard)
    }

    @Test("names compare by bytes, not by Unicode equivalence")
    func byteEquality() throws {
        let composed = try PasteboardName(validating: "caf\u{E9}")
        let decomposed = try PasteboardName(validating: "cafe\u{301}")
        #expect(composed != decomposed)
        #expect(Set([composed, decomposed]).count == 2)
        #expect(try composed == PasteboardName(validating: "café"))
    }

    @Test("Codable round trip, and decoding validates")
    func codable() throws {
        let name = try PasteboardName(validating: "drafts")
        let data = try JSONEncoder().encode([name])
        #expect(String(decoding: data, as: UTF8.self) == "[\"drafts\"]")
        #expect(try JSONDecoder().decode([PasteboardName].self, from: data) == [name])
        #expect(throws: PasteboardError.self) {
            try JSONDecoder().decode([PasteboardName].self, from: Data("[\"\"]".utf8))
        }
    }
}
