import PasteboardModel

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
    /// A command and its arguments to run per change; lines are printed when empty.
    var exec: [String]

    func run() async throws {
        signal(SIGPIPE, SIG_IGN)
        try await Session.run(target) { server in
            let changes = try await server.changes(of: all ? nil : target.pasteboard)
            var reported: [String: UInt64] = [:]
            // Fail now (exit 69) when no server is there, rather than wait in silence.
            _ = try await server.changeCount(target.pasteboard)
            if let since {
                for name in all ? try await server.listPasteboards() : [target.pasteboard] {
                    let current = try await Self.currentState(of: name, server)
                    if current.count > since {
                        try await report(current, server)
                        reported[name] = current.count
                    }
                }
            }
            for await change in changes {
                // A change already reported by --since arrives again as a signal.
                if let last = reported[change.name], change.count <= last { continue }
                reported[change.name] = change.count
                try await report(change, server)
            }
            throw Failure(message: "lost the connection to the bus \(server.address)", status: .unavailable)
        }
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

    private func report(_ change: Server.Change, _ server: Server) async throws {
        if exec.isEmpty {
            if json {
                Output.line("{\"name\":\(Output.json(change.name)),\"count\":\(change.count),\"types\":\(Output.json(change.types))}")
            } else {
                Output.line(([change.name, String(change.count)] + change.types).joined(separator: " "))
            }
            return
        }
        try await runCommand(for: change, server)
    }

    /// Runs the `--exec` command with the change's best data on stdin and waits for it.
    private func runCommand(for change: Server.Change, _ server: Server) async throws {
        var input = ChildProcess.Input.nothing
        if !change.types.isEmpty {
            do {
                switch try await BestData.read(server, name: change.name, item: nil, types: BestData.defaultTypes, expect: change.count) {
                case .bytes(let bytes): input = .bytes(bytes)
                case .descriptor(let fd): input = .descriptor(fd)
                }
            } catch is PasteboardError {
                // Changed again (Stale) or emptied meanwhile: the next change will be reported.
            }
        }
        let environment = [
            ("PASTEBOARD_NAME", change.name),
            ("PASTEBOARD_COUNT", String(change.count)),
            ("PASTEBOARD_TYPES", change.types.joined(separator: " ")),
        ]
        do {
            try await ChildProcess.run("/usr/bin/env", ["/usr/bin/env"] + exec, environment: environment, input: input)
        } catch {
            throw Failure(message: "cannot run \(exec.joined(separator: " ")): \(error)", status: .usage)
        }
    }
}
