import ArgumentParser

/// `pbctl clear`: empty the pasteboard (a new change).
struct Clear: AsyncParsableCommand {
    static let configuration = CommandConfiguration(abstract: "Empty the pasteboard.")

    @OptionGroup var global: GlobalOptions

    func run() async throws {
        try await ClearJob(target: global.target).runReportingFailures()
    }

    static let quick = QuickSyntax("clear") { ClearJob(target: $0.target) }
}

/// `pbctl remove`: drop the pasteboard, its contents and its history.
struct Remove: AsyncParsableCommand {
    static let configuration = CommandConfiguration(abstract: "Remove the pasteboard with its contents and history.")

    @OptionGroup var global: GlobalOptions

    func run() async throws {
        try await RemoveJob(target: global.target).runReportingFailures()
    }

    static let quick = QuickSyntax("remove") { RemoveJob(target: $0.target) }
}

/// `pbctl history`: earlier generations, newest first.
struct History: AsyncParsableCommand {
    static let configuration = CommandConfiguration(abstract: "List the pasteboard's history, newest first: count, time, types.")

    @OptionGroup var global: GlobalOptions

    @Option(parsing: .unconditional, help: ArgumentHelp("Show at most N entries, all when 0.", valueName: "N"))
    var limit: UInt32 = 0

    @Flag(help: "Print one JSON object per entry: {\"name\", \"count\", \"time\" (unix time in milliseconds), \"types\"}.")
    var json = false

    func run() async throws {
        try await HistoryJob(target: global.target, limit: limit, json: json).runReportingFailures()
    }

    static let quick = QuickSyntax("history", flags: [("--json", "json")], options: [("--limit", "limit")]) { line in
        HistoryJob(target: line.target, limit: try line.value("limit", as: UInt32.self) ?? 0, json: line.flag("json"))
    }
}

/// `pbctl restore COUNT`: make an earlier generation current again.
struct Restore: AsyncParsableCommand {
    static let configuration = CommandConfiguration(abstract: "Make the generation with change count COUNT current again.")

    @OptionGroup var global: GlobalOptions

    @Argument(help: "The change count of the generation (see pbctl history).")
    var count: UInt64

    func run() async throws {
        try await RestoreJob(target: global.target, count: count).runReportingFailures()
    }

    /// COUNT is required: without it ArgumentParser says so.
    static let quick = QuickSyntax("restore", positionals: 1) { line in
        guard let count = try line.positional(0, as: UInt64.self) else { throw Unreadable() }
        return RestoreJob(target: line.target, count: count)
    }
}
