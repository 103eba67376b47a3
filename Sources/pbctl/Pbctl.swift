import ArgumentParser
import PasteboardModel

/// `pbctl`: the pasteboard from the command line.
///
/// Started by ``Entry``, which first tries ``QuickLine`` on the common lines and hands
/// ArgumentParser the rest.
struct Pbctl: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "pbctl",
        abstract: "Copy, paste and watch the pasteboards of pasteboardd.",
        discussion: """
            Works on the pasteboard 'general' unless -p names another, on the session bus unless \
            --address names another. Exit status: 0 success, 1 nothing to paste or no such thing, \
            64 usage, 65 input refused by the server, 69 server unavailable, 74 input or output \
            failed.
            """,
        version: PasteboarddVersion.current,
        subcommands: [
            Copy.self, Paste.self, Types.self, Info.self, Count.self, List.self,
            Clear.self, Remove.self, Watch.self, History.self, Restore.self,
        ])

    /// The commands ``QuickLine`` reads by itself (`watch` runs for long; its start-up does
    /// not matter).
    static let quickCommands: [QuickSyntax] = [
        Copy.quick, Paste.quick, Types.quick, Info.quick, Count.quick, List.quick,
        Clear.quick, Remove.quick, History.quick, Restore.quick,
    ]

    @OptionGroup var global: GlobalOptions

    /// Without a command there is nothing to do: a usage error, not help on stdout.
    func run() async throws {
        throw ValidationError("Missing a command, such as 'pbctl paste'.")
    }
}
