import PasteboardInterface

/// `pbctl clear`: empty the pasteboard (a new change).
struct ClearJob: Job {
    var target: Target

    func run() async throws {
        try await Session.run(target) { server in
            try await server.clearContents(target.pasteboard)
        }
    }
}

/// `pbctl remove`: drop the pasteboard, its contents and its history.
struct RemoveJob: Job {
    var target: Target

    func run() async throws {
        try await Session.run(target) { server in
            try await server.remove(target.pasteboard)
        }
    }
}

/// `pbctl history`: earlier generations, newest first.
struct HistoryJob: Job {
    var target: Target
    /// At most this many entries; 0 for the server's `history-depth`.
    var limit: UInt32
    /// JSON lines, as `watch --json` prints, with the time as the server gives it.
    var json = false

    func run() async throws {
        try await Session.run(target) { server in
            for entry in try await server.history(target.pasteboard, limit: limit) {
                if json {
                    Output.line(Output.changeJSON(name: target.pasteboard, count: entry.count, time: entry.time, types: entry.types))
                } else {
                    Output.line("\(entry.count)\t\(InternetTime.string(milliseconds: entry.time))\t\(entry.types.joined(separator: " "))")
                }
            }
        }
    }
}

/// `pbctl restore COUNT`: make an earlier generation current again.
struct RestoreJob: Job {
    var target: Target
    var count: UInt64

    func run() async throws {
        try await Session.run(target) { server in
            Output.line(String(try await server.restore(target.pasteboard, count: count)))
        }
    }
}
