import ArgumentParser
import Foundation
import Pasteboard

/// `pbctl clear`: empty the pasteboard (a new change).
struct Clear: AsyncParsableCommand {
    static let configuration = CommandConfiguration(abstract: "Empty the pasteboard.")

    @OptionGroup var global: GlobalOptions

    func run() async throws {
        try await reportingFailures {
            try await Session.run(global) { proxy in
                try await proxy.clearContents(global.pasteboard)
            }
        }
    }
}

/// `pbctl remove`: drop the pasteboard, its contents and its history.
struct Remove: AsyncParsableCommand {
    static let configuration = CommandConfiguration(abstract: "Remove the pasteboard with its contents and history.")

    @OptionGroup var global: GlobalOptions

    func run() async throws {
        try await reportingFailures {
            try await Session.run(global) { proxy in
                try await proxy.remove(global.pasteboard)
            }
        }
    }
}

/// `pbctl history`: earlier generations, newest first.
struct History: AsyncParsableCommand {
    static let configuration = CommandConfiguration(abstract: "List the pasteboard's history, newest first: count, time, types.")

    @OptionGroup var global: GlobalOptions

    @Option(help: ArgumentHelp("Show at most N entries.", valueName: "N"))
    var limit: UInt32 = 0

    func run() async throws {
        try await reportingFailures {
            try await Session.run(global) { proxy in
                let formatter = ISO8601DateFormatter()
                for entry in try await proxy.history(global.pasteboard, limit: limit) {
                    let time = formatter.string(from: Date(timeIntervalSince1970: Double(entry.time) / 1000))
                    Output.line("\(entry.count)\t\(time)\t\(entry.types.joined(separator: " "))")
                }
            }
        }
    }
}

/// `pbctl restore COUNT`: make an earlier generation current again.
struct Restore: AsyncParsableCommand {
    static let configuration = CommandConfiguration(abstract: "Make the generation with change count COUNT current again.")

    @OptionGroup var global: GlobalOptions

    @Argument(help: "The change count of the generation (see pbctl history).")
    var count: UInt64

    func run() async throws {
        try await reportingFailures {
            try await Session.run(global) { proxy in
                Output.line(String(try await proxy.restore(global.pasteboard, count: count)))
            }
        }
    }
}
