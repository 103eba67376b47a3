#if canImport(Glibc)
import Glibc
#endif

/// Monotonic time in nanoseconds.
func monotonicNanoseconds() -> UInt64 {
    var now = timespec()
    clock_gettime(CLOCK_MONOTONIC, &now)
    return UInt64(now.tv_sec) * 1_000_000_000 + UInt64(now.tv_nsec)
}

/// Runs `body` and returns how long it took, in microseconds.
func timed<T>(_ body: () async throws -> T) async rethrows -> (value: T, micros: Double) {
    let start = monotonicNanoseconds()
    let value = try await body()
    return (value, Double(monotonicNanoseconds() - start) / 1_000)
}

/// Repeated measurements of one quantity, and the order statistics the report quotes.
struct Sample: Sendable {
    private(set) var values: [Double] = []

    init(_ values: [Double] = []) {
        self.values = values
    }

    mutating func add(_ value: Double) {
        values.append(value)
    }

    var count: Int { values.count }
    var median: Double { percentile(0.5) }
    var p99: Double { percentile(0.99) }

    /// The nearest-rank percentile `fraction` (0...1); 0 for an empty sample.
    func percentile(_ fraction: Double) -> Double {
        guard !values.isEmpty else { return 0 }
        let sorted = values.sorted()
        let rank = Int((fraction * Double(sorted.count)).rounded(.up)) - 1
        return sorted[min(max(rank, 0), sorted.count - 1)]
    }
}
