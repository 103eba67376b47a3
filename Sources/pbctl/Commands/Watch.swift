import ArgumentParser

/// `pbctl watch`: one line (or one command run) per change. Always read by ArgumentParser:
/// it runs for long, so its start-up does not matter.
struct Watch: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Print one line per change of the pasteboard, or run a command per change.",
        discussion: """
            Each line is NAME COUNT TYPE..., or with --json {"name", "count", "types"}. With --since \
            COUNT, a line for the current state comes first when its count is above COUNT, so a \
            script that restarts with the last count it saw misses nothing; so is a line for the \
            current state of each pasteboard that changed while pasteboardd was away from the bus, \
            when it is back. With --exec, CMD runs \
            once per change (one at a time, in order) with the best data on stdin and \
            PASTEBOARD_NAME, PASTEBOARD_COUNT and PASTEBOARD_TYPES (space-separated) in its \
            environment; a change replaced before its data could be read runs CMD with nothing \
            on stdin, and says so on stderr. A change that empties the pasteboard, and a \
            concealed copy (whose types are never announced), run CMD with nothing on stdin and \
            PASTEBOARD_TYPES empty: secrets never reach a hook. With --json too, each change's \
            JSON line is printed before CMD runs for it. Exits 69 when the bus goes away.
            """)

    @OptionGroup var global: GlobalOptions

    @Flag(help: "Watch every pasteboard, not just one.")
    var all = false

    @Flag(help: "Print JSON lines.")
    var json = false

    @Option(parsing: .unconditional, help: ArgumentHelp("First report the current state if its count is above COUNT.", valueName: "COUNT"))
    var since: UInt64?

    @Option(parsing: .remaining, help: ArgumentHelp("Run CMD with its arguments per change (the rest of the line).", valueName: "CMD"))
    var exec: [String] = []

    func validate() throws {
        // `--exec` takes the rest of the line; with nothing after it there is nothing to run.
        if exec.isEmpty, CommandLine.arguments.dropFirst().contains("--exec") {
            throw ValidationError("--exec needs a command to run, such as 'pbctl watch --exec notify-send copied'")
        }
    }

    func run() async throws {
        // The command's own arguments were kept from ArgumentParser (ExecCommand).
        let command = exec == [ExecCommand.standIn] ? ExecCommand.command : exec
        try await WatchJob(target: global.target, all: all, json: json, since: since, exec: command).runReportingFailures()
    }
}
