import Foundation

#if canImport(Glibc)
import Glibc
#endif

/// Starting the programs the benchmark measures or depends on (`dbus-daemon`, `pasteboardd`,
/// `pbctl`, `/bin/true`) with `posix_spawn`: the child inherits no descriptor but 0, 1 and 2,
/// and runs without `DBUS_SESSION_BUS_ADDRESS` (everything gets the private bus explicitly).
enum Spawn {
    /// The environment children get, computed once so that every spawn costs the same.
    private static let environment: [String] = ProcessInfo.processInfo.environment
        .filter { $0.key != "DBUS_SESSION_BUS_ADDRESS" }
        .map { "\($0.key)=\($0.value)" }

    /// Starts `executable` with stdin read from `input` and stdout, stderr appended to `output`.
    static func start(_ executable: String, _ arguments: [String], input: String = "/dev/null", output: String = "/dev/null") throws -> pid_t {
        var actions = posix_spawn_file_actions_t()
        posix_spawn_file_actions_init(&actions)
        defer { posix_spawn_file_actions_destroy(&actions) }
        posix_spawn_file_actions_addopen(&actions, 0, input, O_RDONLY, 0)
        posix_spawn_file_actions_addopen(&actions, 1, output, O_WRONLY | O_CREAT | O_APPEND, 0o644)
        posix_spawn_file_actions_adddup2(&actions, 1, 2)
        closeFrom(3, in: &actions)

        var attributes = posix_spawnattr_t()
        posix_spawnattr_init(&attributes)
        defer { posix_spawnattr_destroy(&attributes) }
        var noSignals = sigset_t()
        sigemptyset(&noSignals)
        posix_spawnattr_setsigmask(&attributes, &noSignals)
        var defaults = sigset_t()
        sigemptyset(&defaults)
        for number in [SIGPIPE, SIGTERM, SIGINT, SIGHUP] { sigaddset(&defaults, number) }
        posix_spawnattr_setsigdefault(&attributes, &defaults)
        posix_spawnattr_setflags(&attributes, Int16(POSIX_SPAWN_SETSIGMASK | POSIX_SPAWN_SETSIGDEF))

        let argv = ([executable] + arguments).map { strdup($0) } + [nil]
        let envp = environment.map { strdup($0) } + [nil]
        defer {
            argv.forEach { free($0) }
            envp.forEach { free($0) }
        }
        var pid = pid_t()
        let result = posix_spawn(&pid, executable, &actions, &attributes, argv, envp)
        guard result == 0 else { throw BenchError("cannot start \(executable): \(String(cString: strerror(result)))") }
        return pid
    }

    /// Waits for `pid` and returns its exit status (128 + the signal number for a signal).
    @discardableResult
    static func wait(_ pid: pid_t) -> Int32 {
        var status: Int32 = 0
        while waitpid(pid, &status, 0) < 0 {
            guard errno == EINTR else { return -1 }
        }
        let signal = status & 0x7f
        return signal == 0 ? (status >> 8) & 0xff : 128 + signal
    }

    /// Runs a program to completion and returns its exit status.
    static func run(_ executable: String, _ arguments: [String], input: String = "/dev/null", output: String = "/dev/null") throws -> Int32 {
        wait(try start(executable, arguments, input: input, output: output))
    }

    /// Closes every descriptor from `lowest` up in the child, atomically where glibc has
    /// `posix_spawn_file_actions_addclosefrom_np`, else one by one.
    private static func closeFrom(_ lowest: Int32, in actions: inout posix_spawn_file_actions_t) {
        typealias AddCloseFrom = @convention(c) (UnsafeMutablePointer<posix_spawn_file_actions_t>, Int32) -> Int32
        if let symbol = dlsym(nil, "posix_spawn_file_actions_addclosefrom_np") {
            _ = unsafeBitCast(symbol, to: AddCloseFrom.self)(&actions, lowest)
            return
        }
        let open = (try? FileManager.default.contentsOfDirectory(atPath: "/proc/self/fd")) ?? []
        for fd in open.compactMap({ Int32($0) }) where fd >= lowest {
            posix_spawn_file_actions_addclose(&actions, fd)
        }
    }
}

/// A benchmark that could not run, with what to do about it.
struct BenchError: Error, CustomStringConvertible {
    let description: String
    init(_ description: String) { self.description = description }
}
