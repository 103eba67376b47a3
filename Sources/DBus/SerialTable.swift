/// Values by message serial: what a `[UInt32: Value]` would be for the calls awaiting replies.
///
/// A dictionary's first use in a process makes the type metadata of its storage, and to check
/// that `UInt32` is `Hashable` the Swift runtime searches every protocol conformance the
/// executable holds; in the static `pbctl`, which starts for every copy and paste, that one
/// search cost more than the rest of the table's work in a run. This table needs only arrays.
///
/// Open addressing with linear probing, at most half full; a removal shifts the entries after
/// it back, so there are no tombstones. Serials are never 0 (the D-Bus specification), which
/// marks an empty slot.
struct SerialTable<Value> {
    private var serials: [UInt32] = []
    private var values: [Value?] = []
    private(set) var count = 0

    var isEmpty: Bool { count == 0 }

    subscript(serial: UInt32) -> Value? {
        get { slot(of: serial).flatMap { values[$0] } }
        set {
            if let newValue { insert(newValue, for: serial) } else { _ = removeValue(for: serial) }
        }
    }

    /// Changes the value kept for `serial`, if there is one.
    mutating func update(_ serial: UInt32, _ change: (inout Value) -> Void) {
        guard let index = slot(of: serial) else { return }
        change(&values[index]!)
    }

    @discardableResult
    mutating func removeValue(for serial: UInt32) -> Value? {
        guard let index = slot(of: serial) else { return nil }
        let value = values[index]
        remove(at: index)
        return value
    }

    mutating func removeAll() {
        serials = []
        values = []
        count = 0
    }

    /// Every entry, in no particular order.
    var entries: [(serial: UInt32, value: Value)] {
        var entries: [(serial: UInt32, value: Value)] = []
        entries.reserveCapacity(count)
        for index in serials.indices where serials[index] != 0 { entries.append((serials[index], values[index]!)) }
        return entries
    }

    // MARK: Slots

    private var mask: Int { serials.count - 1 }

    private func home(of serial: UInt32) -> Int { Int(truncatingIfNeeded: serial) & mask }

    private func slot(of serial: UInt32) -> Int? {
        guard serial != 0, count > 0 else { return nil }
        var index = home(of: serial)
        while serials[index] != 0 {
            if serials[index] == serial { return index }
            index = (index + 1) & mask
        }
        return nil
    }

    private mutating func insert(_ value: Value, for serial: UInt32) {
        precondition(serial != 0, "D-Bus serials are never 0")
        if let index = slot(of: serial) {
            values[index] = value
            return
        }
        if (count + 1) * 2 > serials.count { resize(to: max(16, serials.count * 2)) }
        var index = home(of: serial)
        while serials[index] != 0 { index = (index + 1) & mask }
        serials[index] = serial
        values[index] = value
        count += 1
    }

    /// Empties `index`, then moves back each entry after it that may take the hole: one whose
    /// probe from its home slot passed over it.
    private mutating func remove(at index: Int) {
        serials[index] = 0
        values[index] = nil
        count -= 1
        var hole = index
        var next = (index + 1) & mask
        while serials[next] != 0 {
            let home = home(of: serials[next])
            if (next - home) & mask >= (next - hole) & mask {
                serials[hole] = serials[next]
                values[hole] = values[next]
                serials[next] = 0
                values[next] = nil
                hole = next
            }
            next = (next + 1) & mask
        }
    }

    private mutating func resize(to capacity: Int) {
        let old = entries
        serials = [UInt32](repeating: 0, count: capacity)
        values = [Value?](repeating: nil, count: capacity)
        count = 0
        for entry in old { insert(entry.value, for: entry.serial) }
    }
}
