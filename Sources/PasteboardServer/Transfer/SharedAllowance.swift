import Synchronization

/// How many of something are held at once, out of an allowance: taken, all or part, in one
/// atomic step, and given back when done. Counts the helper threads of ``ParallelFileCopy``
/// and the wide pipes (``WidePipes``), both shared by every transfer at once.
final class SharedAllowance: Sendable {
    private let held = Atomic<Int>(0)

    /// Takes up to `wanted` while fewer than `allowance` are held (those counted); how many it
    /// took, to give back with ``giveBack(_:)``.
    func take(upTo wanted: Int, of allowance: Int) -> Int {
        var current = held.load(ordering: .relaxed)
        while true {
            let granted = max(0, min(wanted, allowance - current))
            guard granted > 0 else { return 0 }
            let (exchanged, found) = held.compareExchange(expected: current, desired: current + granted, ordering: .relaxed)
            if exchanged { return granted }
            current = found
        }
    }

    /// Gives back `count` that ``take(upTo:of:)`` took.
    func giveBack(_ count: Int) {
        if count > 0 { held.subtract(count, ordering: .relaxed) }
    }
}
