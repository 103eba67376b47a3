import Foundation

#if canImport(Glibc)
import Glibc
#endif

// Starting helper programs (the bus daemon, the server, pbctl) for the tests and the benchmark
// with posix_spawn: the child inherits no descriptor but 0, 1 and 2, whatever other threads of
// this process have open, so no child can ever hold another's pipe open.

/// A program that could not be started.
public struct SpawnError: Error, CustomStringConvertible {
    public let description: String
}

/// Reaps `pid` and returns its exit status (128 + the signal number for a signal); nil when it
/// still runs and `wait` is false, -1 when it is not our child (reaped elsewhere).
public func reap(_ pid: pid_t, wait: Bool = true) -> Int32? {
    var status: Int32 = 0
    while true {
        let result = waitpid(pid, &status, wait ? 0 : WNOHANG)
        if result == pid { break }
        if result == 0 { return nil }
        if errno == EINTR { continue }
        return -1
    }
    let signal = status & 0x7f
    return signal == 0 ? (status >> 8) & 0xff : 128 + signal
}

/// What one of a child's descriptors (0, 1, 2 and any passed) is made from.
public enum Redirection: Sendable {
    /// A file opened in the child.
    case open(String, flags: Int32, mode: mode_t)
    /// A descriptor of ours (or one the child has just been given), duplicated.
    case duplicate(Int32)
}

/// Starts `executable` with its descriptors 0, 1 and 2 made as given, in that order, then
/// `passing` as its descriptors 3, 4, ..., and every other descriptor closed; no signal blocked and SIGPIPE, SIGTERM, SIGINT and SIGHUP at their
/// defaults; this process's environment plus `environment`, without `DBUS_SESSION_BUS_ADDRESS`
/// (children get their bus explicitly).
public func spawn(
    _ executable: String, _ arguments: [String],
    standardInput: Redirection, standardOutput: Redirection, standardError: Redirection,
    passing: [Redirection] = [], environment: [String: String] = [:], newProcessGroup: Bool = false
) throws -> pid_t {
    var actions = posix_spawn_file_actions_t()
    posix_spawn_file_actions_init(&actions)
    defer { posix_spawn_file_actions_destroy(&actions) }
    // The actions run in order: a passed descriptor numbered like a target made before it
    // would be that target by then. Such a one is passed through a copy above every target.
    let count = Int32(3 + passing.count)
    var copies: [Int32] = []
    defer { copies.forEach { close($0) } }
    let passed = passing.map { redirection -> Redirection in
        guard case .duplicate(let source) = redirection, source < count else { return redirection }
        let copy = fcntl(source, F_DUPFD_CLOEXEC, count)
        guard copy >= 0 else { return redirection }
        copies.append(copy)
        return .duplicate(copy)
    }
    let descriptors = [standardInput, standardOutput, standardError] + passed
    for (fd, redirection) in descriptors.enumerated() {
        switch redirection {
        case .open(let path, let flags, let mode): posix_spawn_file_actions_addopen(&actions, Int32(fd), path, flags, mode)
        case .duplicate(let source): posix_spawn_file_actions_adddup2(&actions, source, Int32(fd))
        }
    }
    closeFrom(Int32(descriptors.count), in: &actions)

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
    // Process group 0 (the attributes' default) with POSIX_SPAWN_SETPGROUP: a group led by the child.
    let group = newProcessGroup ? POSIX_SPAWN_SETPGROUP : 0
    posix_spawnattr_setflags(&attributes, Int16(POSIX_SPAWN_SETSIGMASK | POSIX_SPAWN_SETSIGDEF | group))

    var env = ProcessInfo.processInfo.environment
    env["DBUS_SESSION_BUS_ADDRESS"] = nil
    for (key, value) in environment { env[key] = value }
    let argv = ([executable] + arguments).map { strdup($0) } + [nil]
    let envp = env.map { strdup("\($0.key)=\($0.value)") } + [nil]
    defer {
        argv.forEach { free($0) }
        envp.forEach { free($0) }
    }
    var pid = pid_t()
    let result = posix_spawn(&pid, executable, &actions, &attributes, argv, envp)
    guard result == 0 else { throw SpawnError(description: "cannot start \(executable): \(String(cString: strerror(result)))") }
    return pid
}

/// Closes every descriptor from `lowest` up in the child, with glibc's
/// `posix_spawn_file_actions_addclosefrom_np` (atomic: nothing opened meanwhile by another
/// thread slips through), or one by one where it is missing.
private func closeFrom(_ lowest: Int32, in actions: inout posix_spawn_file_actions_t) {
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
