import PasteboardModel
import Testing

@Suite("PasteboardType equality")
struct TypeEqualityTests {
    @Test(
        "spellings of one type are equal and hash alike",
        arguments: [
            ("text/plain;charset=utf-8", "TEXT/PLAIN;CHARSET=UTF-8"),
            ("text/plain;charset=utf-8", "text/plain ; charset=utf-8"),
            ("text/plain;charset=utf-8", "text/plain;charset=\"utf-8\""),
            ("text/plain;charset=utf-8", "Text/Plain;CharSet=Utf-8"),
            ("text/plain;charset=utf-8;format=flowed", "text/plain;format=flowed;charset=utf-8"),
            ("text/plain", "text/plain;"),
            ("text/plain;charset=utf-8", "public.utf8-plain-text"),
            ("image/png", "PUBLIC.PNG"),
            ("public.url", "public.file-url"),
            ("com.example.todo", "COM.Example.Todo"),
            ("text/plain;name=ab", "text/plain;name=\"a\\b\""),
        ])
    func equal(first: String, second: String) throws {
        let a = try PasteboardType(validating: first)
        let b = try PasteboardType(validating: second)
        #expect(a == b)
        #expect(a.hashValue == b.hashValue)
        #expect(a.canonicalForm == b.canonicalForm)
    }

    @Test(
        "different types are not equal",
        arguments: [
            ("text/plain", "text/plain;charset=utf-8"),
            ("text/plain;charset=utf-8", "text/plain;charset=utf-16"),
            ("text/plain;format=Flowed", "text/plain;format=flowed"),
            ("image/png", "image/jpeg"),
            ("application/x-pdf", "application/pdf"),
            ("com.example.todo", "com.example.todos"),
            ("text/plain;a=b", "text/plain;a=b;a=c"),
        ])
    func notEqual(first: String, second: String) throws {
        #expect(try PasteboardType(validating: first) != PasteboardType(validating: second))
    }

    @Test("a set keeps one entry per type")
    func setDeduplicates() throws {
        let spellings = ["text/plain;charset=utf-8", "public.utf8-plain-text", "TEXT/PLAIN; charset=UTF-8", "image/png", "public.png"]
        let types = try Set(spellings.map(PasteboardType.init(validating:)))
        #expect(types.count == 2)
        #expect(types.contains(.png))
        #expect(types.contains(.utf8PlainText))
    }
}
