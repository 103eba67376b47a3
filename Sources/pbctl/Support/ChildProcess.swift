import Synchronization

#if canImport(Glibc)
import Glibc
#endif

/// Runs a command the way `watch --exec` does, with posix_spawn: in a process group of its
/// own, with this process's environment plus some variables, every descriptor but 0, 1 and 2
/// closed, SIGPIPE back at its default (pbctl ignores it), and stdin as asked.
enum ChildProcess {
    /// What the child reads on stdin.
    enum Input: Sendable {
        /// `/dev/null`.
        case nothing
        /// These bytes, fed through a pipe by a thread of ours.
        case bytes([UInt8])
        /// This descriptor, which the child gets and this process closes.
        case descriptor(Int32)
    }

    /// Why `program` could not be run, or nil when it could: it is a path to an executable
    /// file (it has a `/`), or the name of one in a folder of `PATH`, as `execvp` finds it.
    /// Any name is a program's: `a=b.sh` and `-hook` too.
    static func problem(running program: String) -> String? {
        // The name as given, which may be any bytes (RawArguments).
        // Bytes, not Foundation's `contains(_:)` for strings, which the static pbctl cannot run.
        let name = RawArguments.cString(program)
        var status = stat()
        if program.utf8.contains(UInt8(ascii: "/")) {
            guard stat(name, &status) == 0 else { return "no such program" }
            if status.st_mode & S_IFMT == S_IFDIR { return "it is a directory" }
            return access(name, X_OK) == 0 ? nil : "it is not executable"
        }
        let path = getenv("PATH").map { String(cString: $0) } ?? "/usr/local/bin:/usr/bin:/bin"
        let found = path.split(separator: ":", omittingEmptySubsequences: false).contains { folder in
            let candidate = Array(((folder.isEmpty ? "." : String(folder)) + "/").utf8CString.dropLast()) + name
            return access(candidate, X_OK) == 0 && stat(candidate, &status) == 0 && status.st_mode & S_IFMT != S_IFDIR
        }
        return found ? nil : "no such program in PATH"
    }

    /// The process group of the command running now (its pid), ``spawning`` while it is being
    /// started, 0 while none runs: for the signal handlers of ``forwardTerminationSignals()``.
    private static let running = Atomic<Int32>(0)
    private static let spawning: Int32 = -1
    /// A signal that came while a command was being started, for the starter to pass on.
    private static let deferredSignal = Atomic<Int32>(0)

    /// Makes SIGTERM, SIGINT and SIGHUP end the running command with pbctl: the command runs in
    /// a process group of its own, so a `kill` of pbctl (a script's `kill $pid`) or a Ctrl-C
    /// would otherwise leave it running, its parent gone. The signal is passed to the command's
    /// group, and then ends pbctl as it would have. A signal pbctl was started ignoring (`nohup`,
    /// a script's background job) stays ignored, for it and its command.
    static func forwardTerminationSignals() {
        // Made now, not first in a signal handler.
        _ = running.load(ordering: .relaxed)
        _ = deferredSignal.load(ordering: .relaxed)
        for signalNumber in [SIGTERM, SIGINT, SIGHUP] {
            var current = sigaction()
            guard sigaction(signalNumber, nil, &current) == 0, !isIgnored(current) else { continue }
            signal(signalNumber) { received in
                // Left for the starter before its state is read: a starter that stores the pid
                // after this read takes the signal when it looks for one, right after storing.
                ChildProcess.deferredSignal.store(received, ordering: .sequentiallyConsistent)
                let group = ChildProcess.running.load(ordering: .sequentiallyConsistent)
                // Its pid is not known yet: the starter passes the signal on when it is.
                guard group != ChildProcess.spawning else { return }
                ChildProcess.end(group: group, with: received)
            }
        }
    }

    /// Whether a disposition is SIG_IGN (function pointers compare as addresses).
    private static func isIgnored(_ disposition: sigaction) -> Bool {
        guard let handler = disposition.__sigaction_handler.sa_handler else { return false }
        return unsafeBitCast(handler, to: Int.self) == unsafeBitCast(SIG_IGN, to: Int.self)
    }

    /// Sends SIGTERM to the command running now, if one is, as pbctl ends for another reason
    /// (the reader of its output left).
    static func endRunning() {
        let group = running.load(ordering: .sequentiallyConsistent)
        if group > 0 { kill(-group, SIGTERM) }
    }

    /// Passes `received` on to `group` (when there is one), then ends pbctl with it. Only
    /// async-signal-safe calls: a signal handler runs it.
    private static func end(group: Int32, with received: Int32) {
        if group > 0 { kill(-group, received) }
        signal(received, SIG_DFL)
        raise(received)
    }

    /// Starts `arguments` (the first is the program, found as ``problem(running:)`` says, and
    /// its `argv[0]`) and waits for it to end.
    ///
    /// - Throws: the reason it could not be started, as `strerror` says it.
    static func run(_ arguments: [String], environment additions: [(String, String)], input: Input) async throws(SystemError) {
        precondition(!arguments.isEmpty, "a command names its program")
        var actions = posix_spawn_file_actions_t()
        posix_spawn_file_actions_init(&actions)
        defer { posix_spawn_file_actions_destroy(&actions) }
        var feed: (read: Int32, write: Int32)? = nil
        switch input {
        case .nothing:
            posix_spawn_file_actions_addopen(&actions, 0, "/dev/null", O_RDONLY, 0)
        case .descriptor(let fd):
            posix_spawn_file_actions_adddup2(&actions, fd, 0)
        case .bytes:
            // Both ends are closed in the child with every other descriptor, once fd 0 is made.
            var ends: [Int32] = [0, 0]
            guard pipe(&ends) == 0 else { throw SystemError(errno) }
            feed = (ends[0], ends[1])
            posix_spawn_file_actions_adddup2(&actions, ends[0], 0)
        }
        for fd in openDescriptors() where fd > 2 {
            posix_spawn_file_actions_addclose(&actions, fd)
        }

        var attributes = posix_spawnattr_t()
        posix_spawnattr_init(&attributes)
        defer { posix_spawnattr_destroy(&attributes) }
        var signals = sigset_t()
        sigemptyset(&signals)
        posix_spawnattr_setsigmask(&attributes, &signals)
        sigaddset(&signals, SIGPIPE)
        posix_spawnattr_setsigdefault(&attributes, &signals)
        posix_spawnattr_setpgroup(&attributes, 0)
        posix_spawnattr_setflags(&attributes, Int16(POSIX_SPAWN_SETPGROUP | POSIX_SPAWN_SETSIGMASK | POSIX_SPAWN_SETSIGDEF))

        let names = Set(additions.map(\.0))
        var environment = inheritedEnvironment().filter { entry in
            !names.contains(String(entry.prefix { $0 != "=" }))
        }
        environment += additions.map { "\($0.0)=\($0.1)" }

        var pid = pid_t()
        running.store(spawning, ordering: .sequentiallyConsistent)
        let result = withCStrings(arguments) { argv in
            withCStrings(environment) { envp in
                // posix_spawnp: a name without `/` is looked for in PATH, as a shell does.
                posix_spawnp(&pid, argv[0]!, &actions, &attributes, argv, envp)
            }
        }
        if case .descriptor(let fd) = input { close(fd) }
        if let feed { close(feed.read) }
        guard result == 0 else {
            running.store(0, ordering: .sequentiallyConsistent)
            let deferred = deferredSignal.exchange(0, ordering: .sequentiallyConsistent)
            if deferred != 0 { end(group: 0, with: deferred) }
            if let feed { close(feed.write) }
            throw SystemError(result)
        }
        running.store(pid, ordering: .sequentiallyConsistent)
        let deferred = deferredSignal.exchange(0, ordering: .sequentiallyConsistent)
        if deferred != 0 { end(group: pid, with: deferred) }
        if let feed, case .bytes(let bytes) = input {
            do {
                try Threads.detach {
                    _ = Streaming.writeAll(feed.write, bytes[...])
                    close(feed.write)
                }
            } catch {
                close(feed.write)
            }
        }
        await waitForExit(pid)
    }

    /// Waits on a thread of its own, so the main thread goes on serving other work. The
    /// command is forgotten by the signal handlers before it is reaped: once reaped, its pid may
    /// be another process's.
    private static func waitForExit(_ pid: pid_t) async {
        @Sendable func reap() {
            var info = siginfo_t()
            while waitid(P_PID, id_t(pid), &info, WEXITED | WNOWAIT) < 0, errno == EINTR {}
            running.store(0, ordering: .sequentiallyConsistent)
            var status: Int32 = 0
            while waitpid(pid, &status, 0) < 0, errno == EINTR {}
        }
        await withCheckedContinuation { (done: CheckedContinuation<Void, Never>) in
            do {
                try Threads.detach {
                    reap()
                    done.resume()
                }
            } catch {
                reap()
                done.resume()
            }
        }
    }

    /// `NAME=value` for each variable of this process.
    private static func inheritedEnvironment() -> [String] {
        var entries: [String] = []
        var index = 0
        while let entry = environ[index] {
            entries.append(String(cString: entry))
            index += 1
        }
        return entries
    }

    /// The descriptors open in this process, as `/proc/self/fd` lists them (the listing's own
    /// among them, closed by the time they are used: closing it in the child does nothing).
    private static func openDescriptors() -> [Int32] {
        guard let directory = opendir("/proc/self/fd") else { return [] }
        defer { closedir(directory) }
        var descriptors: [Int32] = []
        while let entry = readdir(directory) {
            let name = withUnsafePointer(to: &entry.pointee.d_name) {
                String(cString: UnsafeRawPointer($0).assumingMemoryBound(to: CChar.self))
            }
            if let fd = Int32(name) { descriptors.append(fd) }
        }
        return descriptors
    }

    /// Calls `body` with a NULL-terminated C array of copies of `strings`, each as the command
    /// line gave it (``RawArguments``).
    private static func withCStrings<R>(_ strings: [String], _ body: ([UnsafeMutablePointer<CChar>?]) -> R) -> R {
        let copies = strings.map { strdup(RawArguments.cString($0)) } + [nil]
        defer { copies.forEach { free($0) } }
        return body(copies)
    }
}

/// An `errno` value, for people.
struct SystemError: Error, CustomStringConvertible {
    let code: Int32

    init(_ code: Int32) {
        self.code = code
    }

    var description: String { String(cString: strerror(code)) }
}
