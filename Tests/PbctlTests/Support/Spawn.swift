import Foundation
import Synchronization
import TestSupport

/// A program started with standard input, output and error on pipes of its own, and no other
/// descriptor.
///
/// Foundation's `Process` lets a program started by one test inherit the pipes another test
/// made at the same moment, so that test then waits for an end of file that never comes. Here
/// every pipe is close-on-exec until it becomes the child's 0, 1 or 2, and the child closes
/// everything from 3 up.
final class Child: Sendable {
    let pid: pid_t
    /// Our end of the child's standard input; nil once closed.
    private let input: Mutex<FileHandle?>
    private let output = Collector()
    private let errors = Collector()
    private let status = Mutex<Int32?>(nil)

    /// Starts `executable` with `arguments`, the test's environment plus `environment`, and
    /// without `DBUS_SESSION_BUS_ADDRESS`.
    init(_ executable: String, _ arguments: [String], environment: [String: String] = [:]) throws {
        let stdin = try Self.pipe(), stdout = try Self.pipe(), stderr = try Self.pipe()
        var actions = posix_spawn_file_actions_t()
        posix_spawn_file_actions_init(&actions)
        defer { posix_spawn_file_actions_destroy(&actions) }
        posix_spawn_file_actions_adddup2(&actions, stdin.read, 0)
        posix_spawn_file_actions_adddup2(&actions, stdout.write, 1)
        posix_spawn_file_actions_adddup2(&actions, stderr.write, 2)
        Self.closeFrom(3, in: &actions)

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
        for fd in [stdin.read, stdout.write, stderr.write] { close(fd) }
        guard result == 0 else {
            for fd in [stdin.write, stdout.read, stderr.read] { close(fd) }
            throw TestSupportError("cannot start \(executable): \(String(cString: strerror(result)))")
        }
        self.pid = pid
        input = Mutex(FileHandle(fileDescriptor: stdin.write, closeOnDealloc: true))
        output.read(FileHandle(fileDescriptor: stdout.read, closeOnDealloc: true))
        errors.read(FileHandle(fileDescriptor: stderr.read, closeOnDealloc: true))
    }

    deinit {
        kill()
    }

    /// Everything the child wrote to standard output so far.
    var stdout: Data { output.data }
    /// Everything the child wrote to standard error so far.
    var stderr: Data { errors.data }

    /// Writes `data` to the child's standard input, then closes it, on a thread of its own.
    func send(_ data: Data) {
        guard let handle = input.withLock({ $0.take() }) else { return }
        Thread {
            // The child may exit without reading it all: that is its business (SIGPIPE is
            // ignored by the tests).
            signal(SIGPIPE, SIG_IGN)
            try? handle.write(contentsOf: data)
            try? handle.close()
        }.start()
    }

    /// The exit status (128 + the signal number for a signal), or nil while it runs.
    var exitStatus: Int32? {
        status.withLock { status in
            if status == nil { status = Self.reap(pid, wait: false) }
            return status
        }
    }

    /// Waits for the child to exit and for its output to end, and returns its status; kills it
    /// first when `timeout` passes.
    func wait(timeout: Duration) async throws -> Int32 {
        let deadline = ContinuousClock.now + timeout
        while exitStatus == nil, ContinuousClock.now < deadline {
            try await Task.sleep(for: .milliseconds(5))
        }
        guard let exitStatus else {
            kill()
            throw TestSupportError("pid \(pid) did not finish within \(timeout)")
        }
        // The child's descendants may hold its output open: give them a moment, not forever.
        let drained = ContinuousClock.now + .seconds(5)
        while !(output.ended && errors.ended), ContinuousClock.now < drained {
            try await Task.sleep(for: .milliseconds(5))
        }
        return exitStatus
    }

    /// Kills the child with SIGKILL and reaps it.
    func kill() {
        status.withLock { status in
            guard status == nil else { return }
            Glibc.kill(pid, SIGKILL)
            status = Self.reap(pid, wait: true)
        }
    }

    // MARK: Descriptors and processes

    /// A close-on-exec pipe, made atomically with `pipe2` (which Swift's Glibc module does not
    /// export, being a GNU extension).
    private static func pipe() throws -> (read: Int32, write: Int32) {
        typealias Pipe2 = @convention(c) (UnsafeMutablePointer<Int32>, Int32) -> Int32
        guard let symbol = dlsym(nil, "pipe2") else { throw TestSupportError("pipe2 is missing from the C library") }
        var fds: [Int32] = [0, 0]
        guard unsafeBitCast(symbol, to: Pipe2.self)(&fds, O_CLOEXEC) == 0 else {
            throw TestSupportError("pipe2: \(String(cString: strerror(errno)))")
        }
        return (fds[0], fds[1])
    }

    /// Closes every descriptor from `lowest` up in the child, atomically with glibc's
    /// `posix_spawn_file_actions_addclosefrom_np`, or one by one where it is missing.
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

    /// Reaps `pid`: its exit status (128 + signal for a signal), nil while it still runs and
    /// `wait` is false, -1 when it is not our child.
    private static func reap(_ pid: pid_t, wait: Bool) -> Int32? {
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
}

/// Bytes read from a descriptor by a thread of its own, until its end.
final class Collector: Sendable {
    private let state = Mutex((data: Data(), ended: false))

    var data: Data { state.withLock { $0.data } }
    var ended: Bool { state.withLock { $0.ended } }

    func read(_ handle: FileHandle) {
        Thread { [self] in
            while true {
                let chunk = handle.availableData
                if chunk.isEmpty { break }
                state.withLock { $0.data.append(chunk) }
            }
            try? handle.close()
            state.withLock { $0.ended = true }
        }.start()
    }
}
