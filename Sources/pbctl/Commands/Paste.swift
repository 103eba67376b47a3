import ArgumentParser
import Foundation
import Pasteboard

/// `pbctl paste`: the best matching data to stdout.
struct Paste: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Write the pasteboard's best matching data to stdout.",
        discussion: """
            Without -t, text is preferred, else the item's first type. With -t, the first TYPE the \
            item satisfies (by conformance: text/html satisfies text/plain) is written. Exits 1 when \
            nothing matches.
            """)

    @OptionGroup var global: GlobalOptions

    @Option(name: [.customShort("t"), .customLong("type")], help: ArgumentHelp("Accept TYPE, in order of preference (repeatable).", valueName: "TYPE"))
    var types: [String] = []

    @Option(help: ArgumentHelp("Paste item N (from 0).", valueName: "N"))
    var item: UInt32 = 0

    func run() async throws {
        signal(SIGPIPE, SIG_IGN)
        try await reportingFailures {
            try await Session.run(global) { proxy in
                switch try await BestData.read(proxy, name: global.pasteboard, item: item, types: types.isEmpty ? BestData.defaultTypes : types) {
                case .bytes(let data):
                    Output.data(data)
                case .descriptor(let fd):
                    defer { close(fd) }
                    Streaming.copy(from: fd, to: 1, progress: Progress.onTerminal("pasted"))
                }
            }
        }
    }
}
