import Foundation

/// What a figure should reach, and whether it did.
enum Goal: Sendable {
    /// ratio to the floor at most this (latencies, process starts).
    case ratioAtMost(Double)
    /// ratio to the floor at least this (throughputs).
    case ratioAtLeast(Double)
    /// the median below this, in the figure's unit (memory).
    case below(Double)
    /// no goal of its own: shown for context (met when there were no errors).
    case informational

    var text: String {
        switch self {
        case .ratioAtMost(let ratio): "≤ \(String(format: "%g", ratio))× floor"
        case .ratioAtLeast(let ratio): "≥ \(String(format: "%g", ratio))× floor"
        case .below(let value): "< \(String(format: "%g", value))"
        case .informational: "—"
        }
    }
}

/// One line of the report: the server's figure, the floor's from the same run, their ratio.
struct Figure: Sendable, Encodable {
    let name: String
    let unit: String
    let median: Double
    let p99: Double
    let floor: Double?
    let floorP99: Double?
    let floorName: String?
    let ratio: Double?
    let goal: String
    let met: Bool
    let count: Int
    let errors: Int

    /// A figure compared with its floor (ratio of the medians).
    init(_ name: String, unit: String, _ sample: Sample, floor: Sample?, floorName: String?, goal: Goal, errors: Int = 0) {
        self.init(name, unit: unit, median: sample.median, p99: sample.p99, count: sample.count,
                  floor: floor.map { ($0.median, $0.p99) }, floorName: floorName, goal: goal, errors: errors)
    }

    init(_ name: String, unit: String, median: Double, p99: Double, count: Int,
         floor: (median: Double, p99: Double)?, floorName: String?, goal: Goal, errors: Int = 0) {
        self.name = name
        self.unit = unit
        self.median = median
        self.p99 = p99
        self.count = count
        self.floor = floor?.median
        self.floorP99 = floor?.p99
        self.floorName = floorName
        self.errors = errors
        ratio = floor.flatMap { $0.median > 0 ? median / $0.median : nil }
        self.goal = goal.text
        switch goal {
        case .ratioAtMost(let limit): met = errors == 0 && (ratio ?? .infinity) <= limit
        case .ratioAtLeast(let limit): met = errors == 0 && (ratio ?? 0) >= limit
        case .below(let limit): met = errors == 0 && median < limit
        case .informational: met = errors == 0
        }
    }
}

/// The table on stdout and the same figures as JSON.
struct Report: Encodable {
    let date: String
    let machine: String
    let quick: Bool
    let figures: [Figure]

    init(quick: Bool, figures: [Figure]) {
        date = ISO8601DateFormatter().string(from: Date())
        var name = utsname()
        uname(&name)
        let release = withUnsafeBytes(of: name.release) { String(decoding: $0.prefix { $0 != 0 }, as: UTF8.self) }
        machine = "\(ProcessInfo.processInfo.activeProcessorCount) cores, \(ProcessInfo.processInfo.physicalMemory >> 20) MiB, Linux \(release)"
        self.quick = quick
        self.figures = figures
    }

    var table: String {
        let header = ["figure", "unit", "median", "p99", "floor", "ratio", "goal", "met"]
        let rows = figures.map { figure in
            [
                figure.name + (figure.errors > 0 ? " (\(figure.errors) errors)" : ""),
                figure.unit,
                Self.number(figure.median),
                Self.number(figure.p99),
                figure.floor.map { Self.number($0) + " (\(figure.floorName ?? "floor"))" } ?? "—",
                figure.ratio.map { Self.number($0) + "×" } ?? "—",
                figure.goal,
                figure.met ? "yes" : "NO",
            ]
        }
        let widths = header.indices.map { column in ([header] + rows).map { $0[column].count }.max() ?? 0 }
        func line(_ cells: [String]) -> String {
            zip(cells, widths).map { $0 + String(repeating: " ", count: $1 - $0.count) }.joined(separator: "  ")
        }
        return ([line(header), line(widths.map { String(repeating: "-", count: $0) })] + rows.map(line))
            .joined(separator: "\n") + "\n\(machine), \(date)\(quick ? ", --quick" : "")\n"
    }

    func writeJSON(to path: String) throws {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.prettyPrinted, .sortedKeys]
        try encoder.encode(self).write(to: URL(fileURLWithPath: path))
    }

    /// Three significant digits, no exponent.
    static func number(_ value: Double) -> String {
        let magnitude = abs(value)
        let decimals = magnitude >= 100 ? 0 : magnitude >= 10 ? 1 : magnitude >= 1 ? 2 : 3
        return String(format: "%.\(decimals)f", value)
    }
}
