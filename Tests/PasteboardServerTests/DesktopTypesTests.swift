@testable import PasteboardServer
import PasteboardModel
import Testing

/// What an X11 app answers for a text target is stored as UTF-8: `STRING` is Latin-1;
/// `UTF8_STRING` and `TEXT` are kept when they are UTF-8 and taken for Latin-1 when not.
struct DesktopTypesTests {
    @Test("UTF8_STRING and TEXT answers are kept when valid UTF-8, a NUL in them or not", arguments: ["UTF8_STRING", "TEXT"])
    func validUTF8IsKept(target: String) throws {
        for text in ["café ✓", "café\u{0}✓", "\u{0}", ""] {
            #expect(try DesktopTypes.utf8(target, of: .inline(Array(text.utf8))) == nil, "\(Array(text.utf8))")
        }
    }

    @Test("UTF8_STRING and TEXT answers that are not UTF-8 are taken for Latin-1", arguments: ["UTF8_STRING", "TEXT"])
    func invalidUTF8IsLatin1(target: String) throws {
        #expect(try DesktopTypes.utf8(target, of: .inline([0x63, 0x61, 0x66, 0xE9])) == Array("café".utf8))
        #expect(try DesktopTypes.utf8(target, of: .inline([0x00, 0xE9, 0x00])) == Array("\u{0}é\u{0}".utf8))
    }

    @Test func stringIsAlwaysLatin1() throws {
        #expect(try DesktopTypes.utf8("STRING", of: .inline(Array("é".utf8))) == Array("Ã©".utf8))
        #expect(try DesktopTypes.utf8("text/plain;charset=utf-8", of: .inline([0xE9])) == nil)
    }

    /// A copy of more types than the limit keeps the first ones, and its text among them.
    @Test func textIsKeptPastTheLimit() throws {
        let offered = (0..<70).map { "application/x-t\($0)" } + ["TEXT", "UTF8_STRING", "image/png"]
        let imported = DesktopBridge.importedTypes(offered, limit: 5)
        #expect(imported.types.map(\.rawValue) == ["application/x-t0", "application/x-t1", "application/x-t2", "application/x-t3", "text/plain;charset=utf-8"])
        #expect(imported.sourceTypes[.utf8PlainText] == "UTF8_STRING")
        #expect(imported.sourceTypes[try PasteboardType(validating: "application/x-t4")] == nil)
        #expect(imported.leftOut == 67)
        let withinTheLimit = DesktopBridge.importedTypes(["image/png", "STRING", "text/html"], limit: 5)
        #expect(withinTheLimit.types.map(\.rawValue) == ["image/png", "text/plain;charset=utf-8", "text/html"])
    }
}
