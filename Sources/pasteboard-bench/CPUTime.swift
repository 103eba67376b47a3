#if canImport(Glibc)
import Glibc
#endif

/// The CPU time a process has used, every thread together, from the scheduler's own
/// accounting (`/proc/PID/task/*/schedstat`, in nanoseconds).
///
/// Wall-clock ratios swing with the machine; CPU time per call is what each side spends, and
/// it says where a latency gap comes from: the server, the bus routing its larger messages, or
/// the client making and reading them. `/proc/PID/stat` would count in 10 ms ticks, too coarse
/// for a few thousand calls. A thread that ends takes its time with it, so only the time of
/// the threads still running is summed: the server's bus thread and queues run from start to
/// end, and a worker thread of Dispatch that exits mid-run is at most a few samples of an
/// idle queue.
enum CPUTime {
    /// The nanoseconds `pid` (this process when nil) has run so far.
    static func nanoseconds(of pid: pid_t? = nil) -> UInt64 {
        let folder = pid.map { "/proc/\($0)/task" } ?? "/proc/self/task"
        guard let directory = opendir(folder) else { return 0 }
        defer { closedir(directory) }
        var total: UInt64 = 0
        while let entry = readdir(directory) {
            let name = withUnsafeBytes(of: entry.pointee.d_name) { String(decoding: $0.prefix { $0 != 0 }, as: UTF8.self) }
            guard name.first?.isNumber == true else { continue }
            total += runTime(folder + "/" + name + "/schedstat")
        }
        return total
    }

    /// The first field of a `schedstat` file: nanoseconds spent on a CPU.
    private static func runTime(_ path: String) -> UInt64 {
        let fd = open(path, O_RDONLY | O_CLOEXEC)
        guard fd >= 0 else { return 0 }
        defer { close(fd) }
        var buffer = [UInt8](repeating: 0, count: 128)
        let count = buffer.withUnsafeMutableBytes { read(fd, $0.baseAddress, $0.count) }
        guard count > 0 else { return 0 }
        var value: UInt64 = 0
        for byte in buffer.prefix(count) {
            guard byte >= UInt8(ascii: "0"), byte <= UInt8(ascii: "9") else { break }
            value = value * 10 + UInt64(byte - UInt8(ascii: "0"))
        }
        return value
    }
}

/// The CPU time a service, the bus daemon and this process (the client) spend per round of a
/// figure, in microseconds: measured over a block of rounds to one service, read before and
/// after the block only, so that the reading costs nothing per round.
struct CPUShare {
    let service: Double
    let bus: Double
    let client: Double

    /// Runs `body` and divides what each process spent meanwhile by `rounds`. This process is
    /// read last before and first after, so that reading the others is not counted as its.
    static func measure(rounds: Int, service: pid_t, bus: pid_t, _ body: () async throws -> Void) async rethrows -> CPUShare {
        let serviceBefore = CPUTime.nanoseconds(of: service), busBefore = CPUTime.nanoseconds(of: bus)
        let clientBefore = CPUTime.nanoseconds()
        try await body()
        let client = CPUTime.nanoseconds() &- clientBefore
        let busTime = CPUTime.nanoseconds(of: bus) &- busBefore
        // A server's work right after the last reply (its `Changed`) is done within a
        // millisecond. Its commit log's background save, 100 ms after a write, is not waited
        // for: the save of the block's last writes falls after it, as that of the writes just
        // before the block (the timed rounds, the same calls) fell inside it.
        usleep(2_000)
        let serviceTime = CPUTime.nanoseconds(of: service) &- serviceBefore
        let scale = Double(rounds) * 1_000
        return CPUShare(service: Double(serviceTime) / scale, bus: Double(busTime) / scale, client: Double(client) / scale)
    }
}

extension CPUShare {
    /// The three processes' CPU per round, each against the same process's in `floor`'s
    /// rounds (informational figures: the latency and throughput figures carry the goals).
    func figures(per round: String, against floor: CPUShare, floorName: String, count: Int) -> [Figure] {
        [("the service", \CPUShare.service), ("dbus-daemon", \.bus), ("the client", \.client)].map { who, side in
            Figure("  CPU per \(round): \(who)", unit: "µs", median: self[keyPath: side], p99: self[keyPath: side], count: count,
                   floor: (floor[keyPath: side], floor[keyPath: side]), floorName: floorName, goal: .informational)
        }
    }
}
