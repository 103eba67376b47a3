import Foundation
import ProcessSpawning

#if canImport(Glibc)
import Glibc
#endif

/// Starting the programs the benchmark measures or depends on (`dbus-daemon`, `pasteboardd`,
/// `pbctl`, `/bin/true`), through ProcessSpawning: no inherited descriptors, no session bus.
enum Spawn {
    /// Starts `executable` with stdin read from `input` and stdout, stderr appended to `output`.
    static func start(_ executable: String, _ arguments: [String], input: String = "/dev/null", output: String = "/dev/null") throws -> pid_t {
        do {
            return try spawn(
                executable, arguments, standardInput: .open(input, flags: O_RDONLY, mode: 0),
                standardOutput: .open(output, flags: O_WRONLY | O_CREAT | O_APPEND, mode: 0o644), standardError: .duplicate(1))
        } catch {
            throw BenchError("\(error)")
        }
    }

    /// Waits for `pid` and returns its exit status (128 + the signal number for a signal).
    @discardableResult
    static func wait(_ pid: pid_t) -> Int32 {
        reap(pid) ?? -1
    }

    /// Runs a program to completion and returns its exit status.
    static func run(_ executable: String, _ arguments: [String], input: String = "/dev/null", output: String = "/dev/null") throws -> Int32 {
        wait(try start(executable, arguments, input: input, output: output))
    }
}

/// A benchmark that could not run, with what to do about it.
struct BenchError: Error, CustomStringConvertible {
    let description: String
    init(_ description: String) { self.description = description }
}
