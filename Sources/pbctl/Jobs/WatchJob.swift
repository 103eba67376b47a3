import PasteboardInterface
import PasteboardModel
import Synchronization

#if canImport(Glibc)
import Glibc
#endif

/// `pbctl watch`: one line (or one command run) per change.
struct WatchJob: Job {
    var target: Target
    /// Every pasteboard, not just the target's.
    var all: Bool
    var json: Bool
    /// First report the current state if its count is above this.
    var since: UInt64?
    /// A command and its arguments to run per change; lines are printed when empty (and
    /// before each run with `json`).
    var exec: [String]

    /// For a command given as one string (`--exec "notify-send copied"`), a habit of tools that
    /// run a shell line: pbctl runs a program with its arguments, as `wl-paste --watch` does, and
    /// says both ways to write what was meant. Empty for anything else.
    static func hint(forOneString exec: [String]) -> String {
        guard exec.count == 1 else { return "" }
        let words = exec[0].split(whereSeparator: { $0 == " " || $0 == "\t" })
        guard words.count > 1 else { return "" }
        return "; give the program and its arguments as words of their own (--exec \(words.joined(separator: " "))),"
            + " or a shell line as --exec sh -c \(PasteboardInterface.shellQuoted(exec[0]))"
    }

    func run() async throws {
        // A command that cannot be found is said at once (64), not at every change.
        if let program = exec.first, let problem = ChildProcess.problem(running: program) {
            throw Failure(message: "cannot run \(program): \(problem)" + Self.hint(forOneString: exec), status: .usage)
        }
        Output.endWhenTheReaderLeaves()
        if !exec.isEmpty { ChildProcess.forwardTerminationSignals() }
        try await Session.run(target) { server in
            let signalled = try await server.changes(of: all ? nil : target.pasteboard)
            let restarts = try await server.restarts()
            var reported: [String: UInt64] = [:]
            // Fail now (exit 69) when no server is there, rather than wait in silence.
            let start = try await server.changeCount(target.pasteboard)
            let (all, target) = (all, target)
            let watched: @Sendable () async throws -> [String] = { all ? try await server.listPasteboards() : [target.pasteboard] }
            var known = [target.pasteboard: start]
            if all {
                for name in try await watched() { known[name] = try await server.changeCount(name) }
            }
            if let since {
                for name in try await watched() {
                    let current = try await Self.currentState(of: name, server)
                    if current.count > since {
                        try await report(current, server)
                        reported[name] = current.count
                    }
                }
            }
            let changes = Self.merging(signalled, currentStatesAfter: restarts, of: watched, known: known, server)
            if exec.isEmpty {
                for await change in changes where Self.isNew(change, &reported) {
                    try await report(change, server)
                }
            } else {
                try await runCommands(for: changes, after: reported, server)
            }
            throw Failure(message: "lost the connection to the bus \(server.address)", status: .unavailable)
        }
    }

    /// The changes signalled, and after each start of the server (a restart, whose meanwhile
    /// no signal told) the current state of each pasteboard watched whose count moved past the
    /// last one `known` (at the watch's start, or signalled since), as `--since` reports it.
    private static func merging(
        _ signalled: some AsyncSequence<Server.Change, Never> & Sendable, currentStatesAfter restarts: some AsyncSequence<Void, Never> & Sendable,
        of watched: @escaping @Sendable () async throws -> [String], known: [String: UInt64], _ server: Server
    ) -> AsyncStream<Server.Change> {
        let (merged, continuation) = AsyncStream<Server.Change>.makeStream()
        let known = KnownCounts(known)
        let signals = Task {
            for await change in signalled {
                known.counts.withLock { $0[change.name] = max($0[change.name] ?? 0, change.count) }
                continuation.yield(change)
            }
            continuation.finish()
        }
        let catchUp = Task {
            for await _ in restarts {
                for name in (try? await watched()) ?? [] {
                    guard let current = try? await currentState(of: name, server) else { continue }
                    let moved = known.counts.withLock { known in
                        guard current.count > known[name] ?? 0 else { return false }
                        known[name] = current.count
                        return true
                    }
                    if moved { continuation.yield(current) }
                }
            }
        }
        continuation.onTermination = { _ in
            signals.cancel()
            catchUp.cancel()
        }
        return merged
    }

    /// The current state of `name` as its `Changed` signal would tell it: concealed contents
    /// without their types (and so without data for `--exec`).
    private static func currentState(of name: String, _ server: Server) async throws -> Server.Change {
        let (count, items) = try await server.items(name)
        guard !items.contains(where: \.isConcealed) else { return .init(name: name, count: count, types: []) }
        var types: [String] = []
        for type in items.flatMap(\.types) where !types.contains(type) { types.append(type) }
        return .init(name: name, count: count, types: types)
    }

    /// Whether `change` was not reported yet: one reported by `--since` arrives again as a
    /// signal.
    private static func isNew(_ change: Server.Change, _ reported: inout [String: UInt64]) -> Bool {
        if let last = reported[change.name], change.count <= last { return false }
        reported[change.name] = change.count
        return true
    }

    /// At most this many changes wait for their command with their data already fetched.
    static let prefetchLimit = 32

    /// A change waiting for its command, and the fetch of its data if it was started.
    private struct Pending: Sendable {
        let change: Server.Change
        /// Nil when the server put the fetch off: it is made again in turn.
        let fetch: Task<ChildProcess.Input?, Never>?
    }

    /// Runs the command once per change, in order, one at a time. Each change's data is asked
    /// for as soon as its signal arrives, not when its turn comes: behind a command that takes
    /// a while the pasteboard would have changed again, and the change would get no data. (A
    /// descriptor from `ReadFd` stays valid whatever becomes of the pasteboard.) Past
    /// ``prefetchLimit`` waiting changes, data is fetched in turn.
    private func runCommands(for changes: some AsyncSequence<Server.Change, Never> & Sendable, after reported: [String: UInt64], _ server: Server) async throws {
        let (queue, continuation) = AsyncStream<Pending>.makeStream()
        let waiting = Mutex(0)
        let feeder = Task {
            var reported = reported
            for await change in changes where Self.isNew(change, &reported) {
                let prefetch = waiting.withLock { count in
                    count += 1
                    return count <= Self.prefetchLimit
                }
                continuation.yield(Pending(change: change, fetch: prefetch ? Task { await Self.input(for: change, server, early: true) } : nil))
            }
            continuation.finish()
        }
        defer { feeder.cancel() }
        for await pending in queue {
            // A fetch the server put off (its share of large reads in progress was taken) is
            // made again in turn, once the earlier changes' data has been read.
            let early = await pending.fetch?.value
            let input = if let early { early } else { await Self.input(for: pending.change, server) ?? .nothing }
            waiting.withLock { $0 -= 1 }
            if json { printLine(pending.change) }
            try await runCommand(for: pending.change, input: input)
        }
    }

    private func report(_ change: Server.Change, _ server: Server) async throws {
        if exec.isEmpty { return printLine(change) }
        if json { printLine(change) }
        try await runCommand(for: change, input: await Self.input(for: change, server) ?? .nothing)
    }

    /// The change's line: `NAME COUNT TYPE...`, or with `--json` a JSON object.
    private func printLine(_ change: Server.Change) {
        if json {
            Output.line(Output.changeJSON(name: change.name, count: change.count, types: change.types))
        } else {
            Output.line(([change.name, String(change.count)] + change.types).joined(separator: " "))
        }
    }

    /// The change's best data, for the command's stdin: nothing when it has no types (a clear,
    /// a concealed write), or when it changed again or emptied before its data was asked for,
    /// which is said on stderr: the command then runs with no data, which it must not take for
    /// empty data.
    ///
    /// Fetched `early` (ahead of its turn), a fetch the server refuses for want of room for
    /// another large read of this client's (`QuotaExceeded`: each data over the inline limit
    /// holds one until it is read) is put off: nil, to be made in turn.
    private static func input(for change: Server.Change, _ server: Server, early: Bool = false) async -> ChildProcess.Input? {
        guard !change.types.isEmpty else { return .nothing }
        do {
            switch try await BestData.read(server, name: change.name, item: nil, types: BestData.defaultTypes, expect: change.count) {
            case .bytes(let bytes): return .bytes(bytes)
            case .descriptor(let fd, _): return .descriptor(fd)
            }
        } catch let error as PasteboardError where early && error.code == .quotaExceeded {
            return nil
        } catch {
            let reason = (error as? PasteboardError)?.code == .stale ? "it changed again before its data could be read" : "\(error)"
            Output.error("change \(change.count) of '\(change.name)' comes with no data on stdin: \(reason)")
            return .nothing
        }
    }

    /// Runs the `--exec` command with `input` on stdin and waits for it. A command that cannot
    /// be started this time (its file being replaced by an upgrade, say) is said on stderr for
    /// this change, and the watch goes on, as it does when the command fails.
    private func runCommand(for change: Server.Change, input: ChildProcess.Input) async throws {
        let environment = [
            ("PASTEBOARD_NAME", change.name),
            ("PASTEBOARD_COUNT", String(change.count)),
            ("PASTEBOARD_TYPES", change.types.joined(separator: " ")),
        ]
        do {
            try await ChildProcess.run(exec, environment: environment, input: input)
        } catch {
            Output.error("change \(change.count) of '\(change.name)': cannot run \(exec.joined(separator: " ")): \(error); still watching")
        }
    }
}

/// The last count known of each pasteboard a watch follows, shared by the task that takes in
/// signals and the one that looks again after a restart.
private final class KnownCounts: Sendable {
    let counts: Mutex<[String: UInt64]>

    init(_ counts: [String: UInt64]) {
        self.counts = Mutex(counts)
    }
}
