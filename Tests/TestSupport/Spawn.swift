@_exported import ProcessSpawning
import Foundation
import Synchronization

// Starting other programs: the built `pasteboardd` and `pbctl`, `dbus-daemon`, `gdbus`, ...
//
// Everything here goes through one `posix_spawn` (at the end of this file) rather than
// Foundation's `Process`, which lets a program started by one test inherit the pipes another
// test made at the same moment (that test then waits for an end of file that never comes), and
// whose exit monitoring can wait forever when many tests spawn at once. A child here inherits
// no descriptor but 0, 1 and 2, starts with no signal blocked and with SIGPIPE, SIGTERM, SIGINT
// and SIGHUP at their defaults, and runs without `DBUS_SESSION_BUS_ADDRESS`: tests hand the bus
// address explicitly.

// MARK: - Running to completion

/// What a finished program left: its exit status and everything it wrote.
public struct Outcome: Sendable, CustomStringConvertible {
    /// The exit status, or 128 + the signal number when a signal ended it.
    public let status: Int32
    public let stdout: Data
    public let stderr: Data

    /// `stdout` as UTF-8.
    public var out: String { String(decoding: stdout, as: UTF8.self) }
    /// `stderr` as UTF-8.
    public var err: String { String(decoding: stderr, as: UTF8.self) }
    public var description: String { "status \(status)\nstdout: \(out)\nstderr: \(err)" }
}

/// Runs a program to completion with `input` on stdin, killing it after `timeout`.
///
/// ```swift
/// let result = try await runProgram(try Paths.product("pbctl"), ["--address", bus.address, "paste"])
/// #expect(result.status == 0, "\(result)")
/// ```
///
/// - Parameters:
///   - environment: added to the test process's environment (less `DBUS_SESSION_BUS_ADDRESS`).
/// - Throws: when the program cannot be started, or does not finish within `timeout`.
public func runProgram(
    _ executable: String, _ arguments: [String], input: Data = Data(), environment: [String: String] = [:],
    timeout: Duration = .seconds(30)
) async throws -> Outcome {
    let child = try ChildProcess(executable, arguments, environment: environment)
    child.send(input)
    let status = try await child.wait(timeout: timeout)
    return Outcome(status: status, stdout: child.stdout, stderr: child.stderr)
}

// MARK: - A child with pipes

/// A program started with standard input, output and error on pipes of its own, its output
/// collected as it comes; killed when released.
///
/// ```swift
/// let child = try ChildProcess(try Paths.product("pbctl"), ["--address", bus.address, "watch"])
/// child.send(Data())
/// // ... child.stdout grows ...
/// child.kill()
/// ```
///
/// Every pipe is close-on-exec until it becomes the child's 0, 1 or 2.
public final class ChildProcess: Sendable {
    public let pid: pid_t
    /// Our end of the child's standard input; nil once closed.
    private let input: Mutex<FileHandle?>
    private let output = Collector()
    private let errors = Collector()
    private let status = Mutex<Int32?>(nil)
    /// The connection handed to the child as its descriptor 3, if any: ours to hang up.
    private let connection: Int32?

    /// Starts `executable` with `arguments`, the test's environment plus `environment`, and
    /// without `DBUS_SESSION_BUS_ADDRESS`, in the test process's process group.
    ///
    /// - Parameter connection: a connected socket (close-on-exec, taken over by the child
    ///   process value) handed to the child as its descriptor 3, for a peer that can be given
    ///   its connection (`WAYLAND_SOCKET=3`). ``kill()`` hangs it up first, so the child ends
    ///   the way it does when its peer goes away, cleaning up after itself, which SIGKILL
    ///   would not let it do.
    /// - Throws: when a pipe cannot be made or the program cannot be started.
    public init(_ executable: String, _ arguments: [String], environment: [String: String] = [:], connection: Int32? = nil) throws {
        let stdin = try Self.pipe(), stdout = try Self.pipe(), stderr = try Self.pipe()
        let pid: pid_t
        do {
            pid = try spawn(
                executable, arguments,
                standardInput: .duplicate(stdin.read), standardOutput: .duplicate(stdout.write),
                standardError: .duplicate(stderr.write), passing: connection.map { [.duplicate($0)] } ?? [],
                environment: environment)
        } catch {
            for fd in [stdin.read, stdin.write, stdout.read, stdout.write, stderr.read, stderr.write] { close(fd) }
            if let connection { close(connection) }
            throw error
        }
        for fd in [stdin.read, stdout.write, stderr.write] { close(fd) }
        self.pid = pid
        self.connection = connection
        input = Mutex(FileHandle(fileDescriptor: stdin.write, closeOnDealloc: true))
        output.read(FileHandle(fileDescriptor: stdout.read, closeOnDealloc: true))
        errors.read(FileHandle(fileDescriptor: stderr.read, closeOnDealloc: true))
    }

    deinit {
        kill()
        if let connection { close(connection) }
    }

    /// Everything the child wrote to standard output so far.
    public var stdout: Data { output.data }
    /// Everything the child wrote to standard error so far.
    public var stderr: Data { errors.data }

    /// Writes `data` to the child's standard input, then closes it, on a thread of its own.
    public func send(_ data: Data) {
        guard let handle = input.withLock({ $0.take() }) else { return }
        Thread {
            // The child may exit without reading it all: that is its business, and must fail
            // the write rather than kill the tests.
            signal(SIGPIPE, SIG_IGN)
            try? handle.write(contentsOf: data)
            try? handle.close()
        }.start()
    }

    /// Writes `data` to the child's standard input and keeps it open, for a child that must
    /// see input that has not ended. Waits until the pipe has taken all of it: the child must
    /// be reading.
    public func write(_ data: Data) {
        input.withLock { handle in
            signal(SIGPIPE, SIG_IGN)
            try? handle?.write(contentsOf: data)
        }
    }

    /// The exit status (128 + the signal number for a signal), or nil while it runs.
    public var exitStatus: Int32? {
        status.withLock { status in
            if status == nil { status = reap(pid, wait: false) }
            return status
        }
    }

    /// Waits for the child to exit and for its output to end, and returns its status.
    ///
    /// - Throws: when `timeout` passes first, after killing the child.
    public func wait(timeout: Duration) async throws -> Int32 {
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

    /// Kills the child with SIGKILL and reaps it; a child given a `connection` has it hung up
    /// first and up to 2 s to end on its own.
    public func kill() {
        status.withLock { status in
            guard status == nil else { return }
            if let connection {
                shutdown(connection, Int32(SHUT_RDWR))
                let deadline = ContinuousClock.now + .seconds(2)
                while status == nil, ContinuousClock.now < deadline {
                    status = reap(pid, wait: false)
                    if status == nil { usleep(5_000) }
                }
                if status != nil { return }
            }
            Glibc.kill(pid, SIGKILL)
            status = reap(pid, wait: true)
        }
    }

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

// MARK: - Detached children

/// Where a detached child's standard output or error goes.
public enum OutputTarget: Sendable {
    /// /dev/null.
    case null
    /// The file at the path, created (mode 0600) when missing and appended to.
    case appending(String)
    /// Wherever standard output goes (for standard error).
    case standardOutput
}

/// Starts `executable` in the background with standard input on /dev/null, and returns its
/// process id; the caller kills and ``reap(_:wait:)``s it.
///
/// ```swift
/// let pid = try spawnDetached(try Paths.product("pasteboardd"), arguments, standardError: .appending(log), newProcessGroup: true)
/// defer { kill(pid, SIGKILL); _ = reap(pid) }
/// ```
///
/// - Parameters:
///   - environment: added to the test process's environment (less `DBUS_SESSION_BUS_ADDRESS`).
///   - newProcessGroup: whether the child leads a process group of its own rather than
///     joining the test process's.
/// - Throws: when the program cannot be started.
public func spawnDetached(
    _ executable: String, _ arguments: [String], standardOutput: OutputTarget = .null, standardError: OutputTarget = .null,
    environment: [String: String] = [:], newProcessGroup: Bool = false
) throws -> pid_t {
    func redirection(_ target: OutputTarget) -> Redirection {
        switch target {
        case .null: .open("/dev/null", flags: O_WRONLY, mode: 0)
        case .appending(let path): .open(path, flags: O_WRONLY | O_CREAT | O_APPEND, mode: 0o600)
        case .standardOutput: .duplicate(1)
        }
    }
    return try spawn(
        executable, arguments, standardInput: .open("/dev/null", flags: O_RDONLY, mode: 0),
        standardOutput: redirection(standardOutput), standardError: redirection(standardError),
        environment: environment, newProcessGroup: newProcessGroup)
}

// MARK: - posix_spawn

// `spawn`, `reap` and `Redirection` come from ProcessSpawning, shared with pasteboard-bench.
