import PasteboardModel
import Testing

/// ``FNV1a`` is written down (the commit log's checksums, the names of long declarations'
/// files): it must stay the published FNV-1a, byte by byte, and adding in parts must equal
/// hashing the whole.
struct FNV1aTests {
    @Test(arguments: [
        ("", 0xcbf2_9ce4_8422_2325 as UInt64), ("a", 0xaf63_dc4c_8601_ec8c), ("foobar", 0x8594_4171_f739_67e8),
    ])
    func publishedValues(_ text: String, _ expected: UInt64) {
        #expect(FNV1a.hash(text.utf8) == expected)
    }

    @Test func partsAddUpToTheWhole() {
        var hash = FNV1a()
        hash.add("foo".utf8)
        hash.add([UInt8]("bar".utf8))
        #expect(hash.value == FNV1a.hash("foobar".utf8))
    }
}
