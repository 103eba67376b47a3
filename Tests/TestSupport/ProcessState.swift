import Foundation

/// The state the kernel gives process `pid` in `/proc/PID/stat`: `R` running, `S` sleeping,
/// `T` stopped, `Z` a zombie waiting to be reaped, …; nil when there is no such process.
/// Read without reaping it, for tests that stop, signal or outlive a process.
public func processState(_ pid: pid_t) -> Character? {
    // The name in brackets may hold spaces and brackets itself: the state follows the last ')'.
    guard let stat = try? String(contentsOfFile: "/proc/\(pid)/stat", encoding: .utf8),
          let end = stat.lastIndex(of: ")")
    else { return nil }
    return stat[stat.index(after: end)...].first { $0 != " " }
}
