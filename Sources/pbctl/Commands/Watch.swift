import ArgumentParser
import Foundation
import Pasteboard

/// `pbctl watch`: one line (or one command run) per change.
struct Watch: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Print one line per change of the pasteboard, or run a command per change.",
        discussion: """
            Each line is NAME COUNT TYPE..., or with --json {"name", "count", "types"}. With --since \
            COUNT, a line for the current state comes first when its count is above COUNT, so a \
            script that restarts with the last count it saw misses nothing. With --exec, CMD runs \
            once per change (one at a time, in order) with the best data on stdin and \
            PASTEBOARD_NAME, PASTEBOARD_COUNT and PASTEBOARD_TYPES (space-separated) in its \
            environment. Exits 69 when the bus goes away.
            """)

    @OptionGroup var global: GlobalOptions

    @Flag(help: "Watch every pasteboard, not just one.")
    var all = false

    @Flag(help: "Print JSON lines.")
    var json = false

    @Option(help: ArgumentHelp("First report the current state if its count is above COUNT.", valueName: "COUNT"))
    var since: UInt64?

    @Option(parsing: .remaining, help: ArgumentHelp("Run CMD with its arguments per change (the rest of the line).", valueName: "CMD"))
    var exec: [String] = []

    func run() async throws {
        signal(SIGPIPE, SIG_IGN)
        try await reportingFailures {
            try await Session.run(global) { proxy in
                let changes = try await proxy.changes(of: all ? nil : global.pasteboard)
                var reported: [String: UInt64] = [:]
                // Fail now (exit 69) when no server is there, rather than wait in silence.
                _ = try await proxy.changeCount(global.pasteboard)
                if let since {
                    for name in all ? try await proxy.listPasteboards() : [global.pasteboard] {
                        let (count, types) = try await proxy.types(name)
                        if count > since {
                            try await report(.init(name: name, count: count, types: types), proxy)
                            reported[name] = count
                        }
                    }
                }
                for await change in changes {
                    // A change already reported by --since arrives again as a signal.
                    if let last = reported[change.name], change.count <= last { continue }
                    reported[change.name] = change.count
                    try await report(change, proxy)
                }
                throw Failure(message: "lost the connection to the bus \(proxy.address)", status: .unavailable)
            }
        }
    }

    private func report(_ change: PasteboardProxy.Change, _ proxy: PasteboardProxy) async throws {
        if exec.isEmpty {
            if json {
                Output.line("{\"name\":\(Output.json(change.name)),\"count\":\(change.count),\"types\":\(Output.json(change.types))}")
            } else {
                Output.line(([change.name, String(change.count)] + change.types).joined(separator: " "))
            }
            return
        }
        try await runCommand(for: change, proxy)
    }

    /// Runs the `--exec` command with the change's best data on stdin and waits for it.
    private func runCommand(for change: PasteboardProxy.Change, _ proxy: PasteboardProxy) async throws {
        var data: BestData.Result? = nil
        if !change.types.isEmpty {
            do {
                data = try await BestData.read(proxy, name: change.name, item: 0, types: BestData.defaultTypes, expect: change.count)
            } catch let error as PasteboardError {
                // Changed again (Stale) or emptied meanwhile: the next change will be reported.
                _ = error
            }
        }
        let process = Process()
        process.executableURL = URL(fileURLWithPath: "/usr/bin/env")
        process.arguments = exec
        var environment = ProcessInfo.processInfo.environment
        environment["PASTEBOARD_NAME"] = change.name
        environment["PASTEBOARD_COUNT"] = String(change.count)
        environment["PASTEBOARD_TYPES"] = change.types.joined(separator: " ")
        process.environment = environment
        var feeder: Thread? = nil
        switch data {
        case .descriptor(let fd):
            process.standardInput = FileHandle(fileDescriptor: fd, closeOnDealloc: true)
        case .bytes(let bytes):
            let pipe = Pipe()
            process.standardInput = pipe
            let writer = pipe.fileHandleForWriting
            feeder = Thread {
                try? writer.write(contentsOf: bytes)
                try? writer.close()
            }
        case nil:
            process.standardInput = FileHandle.nullDevice
        }
        do {
            try process.run()
        } catch {
            throw Failure(message: "cannot run \(exec.joined(separator: " ")): \(error.localizedDescription)", status: .usage)
        }
        feeder?.start()
        await withCheckedContinuation { (done: CheckedContinuation<Void, Never>) in
            DispatchQueue.global().async {
                process.waitUntilExit()
                done.resume()
            }
        }
    }
}
