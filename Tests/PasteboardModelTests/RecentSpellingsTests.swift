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

    @Test func validationAnswersEachSpellingWhileTheyTakeTurns() throws {
        let (first, second) = try #require(Self.collidingSpellings())
        for _ in 0..<4 {
            #expect(try PasteboardType(validating: first).rawValue == first)
            #expect(try PasteboardType(validating: second).rawValue == second)
            #expect(try PasteboardType(validating: first.uppercased()).essence == first)
        }
    }
}
