@testable import DBus
import Testing
import TestSupport

/// ``SerialTable``, the pending calls' table, against a `Dictionary` doing the same: the
/// removal that shifts entries back is where an open-addressing table goes wrong, so the runs
/// remove as much as they insert, in clusters that wrap around the end of the slots.
struct SerialTableTests {
    @Test func emptyTableFindsNothing() {
        var table = SerialTable<String>()
        #expect(table.isEmpty)
        #expect(table[1] == nil)
        #expect(table[0] == nil)
        #expect(table.removeValue(for: 7) == nil)
        table[7] = nil
        #expect(table.isEmpty)
    }

    @Test func keepsReplacesAndRemoves() {
        var table = SerialTable<String>()
        table[5] = "five"
        table[5] = "cinq"
        table[21] = "twenty-one"  // the same home slot as 5 in 16 slots
        #expect(table.count == 2)
        #expect(table[5] == "cinq")
        #expect(table.removeValue(for: 5) == "cinq")
        // 21 was placed after 5 and must have moved back into its place, still found.
        #expect(table[21] == "twenty-one")
        #expect(table[5] == nil)
        table.update(21) { $0 += "!" }
        table.update(99) { $0 += "?" }
        #expect(table[21] == "twenty-one!")
        #expect(table.entries.map(\.serial) == [21])
        table.removeAll()
        #expect(table.isEmpty && table[21] == nil)
    }

    /// Random inserts, replacements and removals, checked against a dictionary after each.
    @Test(arguments: [1, 2, 3, 4, 5, 6, 7, 8])
    func behavesAsADictionary(seed: UInt64) {
        var generator = SeededRandom(seed: seed)
        var table = SerialTable<UInt64>()
        var model: [UInt32: UInt64] = [:]
        // Serials from a narrow range (collisions and clusters) or sequential ones, as a
        // connection numbers its messages, some near the wrap-around of the slots.
        var next: UInt32 = seed % 2 == 0 ? .max - 5_000 : 1
        for step in 0..<20_000 {
            let serial: UInt32
            if generator.next() % 3 == 0 {
                serial = UInt32(truncatingIfNeeded: generator.next() % 200) + 1
            } else {
                serial = next
                next = next == .max ? 1 : next + 1
            }
            switch generator.next() % 5 {
            case 0, 1:
                let value = generator.next()
                table[serial] = value
                model[serial] = value
            case 2:
                #expect(table.removeValue(for: serial) == model.removeValue(forKey: serial))
            case 3:
                let victim = model.keys.randomElement(using: &generator)
                if let victim {
                    #expect(table.removeValue(for: victim) == model.removeValue(forKey: victim))
                }
            default:
                #expect(table[serial] == model[serial])
            }
            if step % 997 == 0 || model.count < 3 {
                #expect(table.count == model.count)
                #expect(Dictionary(uniqueKeysWithValues: table.entries.map { ($0.serial, $0.value) }) == model)
                for (serial, value) in model { #expect(table[serial] == value) }
            }
        }
        #expect(table.count == model.count)
        for (serial, value) in model { #expect(table[serial] == value) }
    }
}
