@testable import PasteboardModel
import Testing

/// ``RecentSpellings``, the cache of validated types: two spellings that share its one slot
/// each get their own type, however often they take the slot from each other.
struct RecentSpellingsTests {
    /// Two MIME spellings whose hashes fall in the same slot.
    static func collidingSpellings() -> (String, String)? {
        var bySlot: [Int: String] = [:]
        for number in 0..<100_000 {
            let spelling = "text/x-slot-\(number)"
            let slot = RecentSpellings.slot(of: spelling)
            if let other = bySlot[slot] { return (other, spelling) }
            bySlot[slot] = spelling
        }
        return nil
    }

    @Test func aSharedSlotHoldsOnlyTheLatestSpelling() throws {
        let (first, second) = try #require(Self.collidingSpellings())
        var cache = RecentSpellings()
        #expect(cache.type(spelled: first) == nil)
        let firstType = try PasteboardType(validating: first)
        let secondType = try PasteboardType(validating: second)
        cache.keep(firstType, spelled: first)
        #expect(cache.type(spelled: first)?.rawValue == first)
        #expect(cache.type(spelled: second) == nil)
        cache.keep(secondType, spelled: second)
        #expect(cache.type(spelled: second)?.rawValue == second)
        #expect(cache.type(spelled: first) == nil)
    }

    /// A spelling canonically equivalent to a cached one (U+037E, the Greek question mark, for
    /// `;`), which `==` on strings calls equal, is not answered from the cache: it is not ASCII,
    /// and is refused.
    @Test func anEquivalentSpellingIsNotTheCachedOne() throws {
        let cached = "text/plain;charset=utf-8"
        var equivalent: String?
        for number in 0..<100_000 {
            let candidate = "text/plain\u{37E}charset=utf-8" + (number == 0 ? "" : ";x=\(number)")
            let twin = number == 0 ? cached : "text/plain;charset=utf-8;x=\(number)"
            if RecentSpellings.slot(of: candidate) == RecentSpellings.slot(of: twin) {
                equivalent = candidate
                _ = try PasteboardType(validating: twin)
                break
            }
        }
        let spelling = try #require(equivalent)
        #expect(spelling.unicodeScalars.contains("\u{37E}"))
        #expect(throws: PasteboardError.self) { try PasteboardType(validating: spelling) }
    }

    @Test func validationAnswersEachSpellingWhileTheyTakeTurns() throws {
        let (first, second) = try #require(Self.collidingSpellings())
        for _ in 0..<4 {
            #expect(try PasteboardType(validating: first).rawValue == first)
            #expect(try PasteboardType(validating: second).rawValue == second)
            #expect(try PasteboardType(validating: first.uppercased()).essence == first)
        }
    }
}
