import ArgumentParser

/// `pbctl copy`: stdin (or a file) becomes the pasteboard's one item.
struct Copy: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Copy stdin (or FILE) to the pasteboard as one item.",
        discussion: """
            Without -t the type is text/plain;charset=utf-8 when all of the input is valid UTF-8, NUL \
            bytes included, unless NUL bytes among the first ones go with a binary format's magic \
            number (a stream over 1 MiB is held in a temporary file until its end), else sniffed from \
            the first bytes (image/png, application/pdf, …), else application/octet-stream. With several \
            -t the same bytes are offered under each type, a type given twice once; text, TEXT, STRING \
            and UTF8_STRING mean text/plain;charset=utf-8. Large data travels through a file \
            descriptor and is never held in memory.
            """)

    @OptionGroup var global: GlobalOptions

    @Argument(help: "A file to copy instead of stdin ('-' is stdin).")
    var file: String?

    @Option(name: [.customShort("t"), .customLong("type")], help: ArgumentHelp("Offer the data as TYPE (repeatable).", valueName: "TYPE"))
    var types: [String] = []

    @Flag(help: "A secret: never stored on disk or in history (password managers).")
    var concealed = false

    @Flag(help: "Not recorded in history and not stored on disk.")
    var transient = false

    @Option(parsing: .unconditional, help: ArgumentHelp("Clear the pasteboard after SECONDS.", valueName: "SECONDS"))
    var expires: Double?

    func validate() throws {
        if let problem = CopyJob.problem(expires: expires) {
            throw ValidationError(problem)
        }
    }

    func run() async throws {
        try await CopyJob(
            target: global.target, file: file, types: TypeNames.forCopy(types), concealed: concealed, transient: transient, expires: expires
        ).runReportingFailures()
    }

    /// The same command line, read by ``QuickLine``.
    static let quick = QuickSyntax(
        "copy", flags: [("--concealed", "concealed"), ("--transient", "transient")],
        options: [("-t", "type"), ("--type", "type"), ("--expires", "expires")], repeatable: ["type"], positionals: 1
    ) { line in
        let expires = try line.value("expires", as: Double.self)
        guard CopyJob.problem(expires: expires) == nil else { throw Unreadable() }
        return CopyJob(
            target: line.target, file: line.positionals.first, types: TypeNames.forCopy(line.values("type")),
            concealed: line.flag("concealed"), transient: line.flag("transient"), expires: expires)
    }
}
