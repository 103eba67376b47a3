import ArgumentParser

/// `pbctl types`: one type per line; with a subcommand, the declared types of the MIME
/// database (see Declare.swift).
struct Types: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "List the pasteboard's types, one per line, richest first; or declare, undeclare and show types.",
        subcommands: [ListTypes.self, DeclareType.self, UndeclareType.self, ShowType.self],
        defaultSubcommand: ListTypes.self)

    static let quick = QuickSyntax("types") { TypesJob(target: $0.target) }
}

/// `pbctl types` (or `pbctl types list`): one type per line.
struct ListTypes: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "list", abstract: "List the pasteboard's types, one per line, richest first (the default).")

    @OptionGroup var global: GlobalOptions

    func run() async throws {
        try await TypesJob(target: global.target).runReportingFailures()
    }
}

/// `pbctl info`: the change count and every item's types and sizes.
struct Info: AsyncParsableCommand {
    static let configuration = CommandConfiguration(abstract: "Show the change count and each item's types and sizes, and whether it is concealed or owner-only.")

    @OptionGroup var global: GlobalOptions

    @Flag(help: "Print one JSON object: {\"name\", \"count\", \"items\": [{\"types\", \"sizes\"}]}; an item also has \"concealed\": true or \"owner-only\": true when it is.")
    var json = false

    func run() async throws {
        try await InfoJob(target: global.target, json: json).runReportingFailures()
    }

    static let quick = QuickSyntax("info", flags: [("--json", "json")]) { line in
        InfoJob(target: line.target, json: line.flag("json"))
    }
}

/// `pbctl count`: the change count.
struct Count: AsyncParsableCommand {
    static let configuration = CommandConfiguration(abstract: "Print the pasteboard's change count.")

    @OptionGroup var global: GlobalOptions

    func run() async throws {
        try await CountJob(target: global.target).runReportingFailures()
    }

    static let quick = QuickSyntax("count") { CountJob(target: $0.target) }
}

/// `pbctl list`: the pasteboard names.
struct List: AsyncParsableCommand {
    static let configuration = CommandConfiguration(abstract: "List the pasteboards, one name per line.")

    @OptionGroup var global: GlobalOptions

    func run() async throws {
        try await ListJob(target: global.target).runReportingFailures()
    }

    static let quick = QuickSyntax("list") { ListJob(target: $0.target) }
}
