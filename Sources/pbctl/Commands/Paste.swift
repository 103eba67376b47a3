import ArgumentParser

/// `pbctl paste`: the best matching data to stdout.
struct Paste: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Write the pasteboard's best matching data to stdout.",
        discussion: """
            Without -t, text is preferred, else the item's first type. With -t, the first TYPE an \
            item satisfies (by conformance: text/html satisfies text/plain) is written, from the \
            first item that satisfies it unless --item names one; text, TEXT, STRING and UTF8_STRING \
            mean any text. Exits 1 when nothing matches.
            """)

    @OptionGroup var global: GlobalOptions

    @Option(name: [.customShort("t"), .customLong("type")], help: ArgumentHelp("Accept TYPE, in order of preference (repeatable).", valueName: "TYPE"))
    var types: [String] = []

    @Option(parsing: .unconditional, help: ArgumentHelp("Paste item N (from 0).", valueName: "N"))
    var item: UInt32?

    func run() async throws {
        try await PasteJob(target: global.target, types: TypeNames.forPaste(types), item: item).runReportingFailures()
    }

    /// The same command line, read by ``QuickLine``.
    static let quick = QuickSyntax(
        "paste", options: [("-t", "type"), ("--type", "type"), ("--item", "item")], repeatable: ["type"]
    ) { line in
        PasteJob(target: line.target, types: TypeNames.forPaste(line.values("type")), item: try line.value("item", as: UInt32.self))
    }
}
