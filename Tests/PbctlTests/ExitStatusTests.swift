import Foundation
import Testing
import TestSupport

/// The exit statuses of the contract: 0 success, 1 nothing to paste, 64 usage, 65 input the
/// server refuses, 69 server unavailable; help on stdout.
struct ExitStatusTests {
    @Test func helpGoesToStdout() async throws {
        let result = try await runPbctl(["--help"])
        #expect(result.status == 0)
        #expect(result.err == "")
        #expect(result.out.hasPrefix("OVERVIEW: Copy, paste and watch the pasteboards of pasteboardd.\n"))
        #expect(result.out.contains("USAGE: pbctl [--pasteboard <NAME>] [--address <BUS>] <subcommand>\n"))
        for command in ["copy", "paste", "types", "info", "count", "list", "clear", "remove", "watch", "history", "restore"] {
            #expect(result.out.contains("\n  \(command) "), "\(command) missing from the help")
        }
    }

    @Test func commandHelpGoesToStdout() async throws {
        let result = try await runPbctl(["copy", "--help"])
        #expect(result.status == 0)
        #expect(result.err == "")
        #expect(result.out.hasPrefix("OVERVIEW: Copy stdin (or FILE) to the pasteboard as one item.\n"))
    }

    // MARK: 64: usage (found before any connection: no server needed)

    /// An unknown command says so, and names the command a typo was likely meant to be.
    @Test func unknownCommand() async throws {
        let world = try await PbctlHarness(server: false)
        expect(try await world.pbctl("frobnicate"), status: 64, stdout: "", stderr: "pbctl: no command 'frobnicate'; 'pbctl --help' lists them\n")
        expect(try await world.pbctl("-p", "x", "pase"), status: 64, stdout: "", stderr: "pbctl: no command 'pase' (did you mean 'paste'?); 'pbctl --help' lists them\n")
        expect(try await world.pbctl("--address", "unix:path=/nowhere", "lst", "-v"), status: 64, stdout: "", stderr: "pbctl: no command 'lst' (did you mean 'list'?); 'pbctl --help' lists them\n")
        expect(try await world.pbctl("help", "cpy"), status: 64, stdout: "", stderr: "pbctl: no command 'cpy' (did you mean 'copy'?); 'pbctl --help' lists them\n")
        // Help asked for with an unknown command is no help on it; `-p=NAME` is a global option.
        expect(try await world.pbctl("--help", "pase"), status: 64, stdout: "", stderr: "pbctl: no command 'pase' (did you mean 'paste'?); 'pbctl --help' lists them\n")
        expect(try await world.pbctl("-p=x", "pase"), status: 64, stdout: "", stderr: "pbctl: no command 'pase' (did you mean 'paste'?); 'pbctl --help' lists them\n")
        // A command's option given before any command is ArgumentParser's to name.
        let early = try await world.pbctl("-t", "text/plain", "paste")
        #expect(early.status == 64 && !early.err.contains("no command"), "\(early)")
        // Options of ArgumentParser's own take values that are no commands.
        let completion = try await world.pbctl("--generate-completion-script", "bash")
        #expect(completion.status == 0 && completion.out.contains("pbctl"), "\(completion)")
    }

    /// Help on a command there is not is a usage error too, not the general help and 0.
    @Test func helpOnAnUnknownCommand() async throws {
        let world = try await PbctlHarness(server: false)
        expect(try await world.pbctl("help", "frobnicate"), status: 64, stdout: "", stderr: "pbctl: no command 'frobnicate'; 'pbctl --help' lists them\n")
        let known = try await world.pbctl("help", "copy")
        #expect(known.status == 0)
        #expect(known.out.hasPrefix("OVERVIEW: Copy stdin"), "\(known.out)")
    }

    /// A server that holds its name but answers nothing (stopped, hung) costs D-Bus's usual
    /// 25 s and then 69, saying so, rather than a script hanging for ever.
    // Generous: the limit counts the wait for a place among the tests that run pbctl at
    // once (PbctlHarness's gate), which a loaded machine has made take over a minute.
    @Test(.timeLimit(.minutes(5)))
    func aServerThatDoesNotAnswer() async throws {
        let world = try await PbctlHarness()
        let server = try #require(world.server)
        server.send(SIGSTOP)
        defer { server.send(SIGCONT) }
        try #require(await eventually { server.processState?.state == "T" }, "the server did not stop: \(String(describing: server.processState))")
        let started = ContinuousClock.now
        let result = try await runProgram(try Paths.product("pbctl"), ["--address", world.bus.address, "count"], timeout: .seconds(90))
        // Once seen answering while stopped: whether something let it go on says which.
        #expect(result.status == 69, "\(result)\nthe server now: \(String(describing: server.processState))")
        #expect(result.err.contains("did not answer") && result.err.contains(world.bus.address), "\(result.err)")
        let waited = ContinuousClock.now - started
        #expect(waited >= .seconds(24), "answered after \(waited): \(result); the server's log: \(server.log)")
    }

    /// A copy whose input is still coming when the server stops answering (its answer waits
    /// for the whole input, so it has no timeout of its own) ends with 69 too: pbctl asks every
    /// 10 s whether the server still answers.
    // Generous: the limit counts the wait for a place among the tests that run pbctl at
    // once (PbctlHarness's gate), which a loaded machine has made take over a minute.
    @Test(.timeLimit(.minutes(5)))
    func aServerThatStopsAnsweringDuringACopy() async throws {
        let world = try await PbctlHarness()
        let server = try #require(world.server)
        // Not text (not UTF-8), so streamed to the server as it comes once more than pbctl
        // sends inline (1 MiB) is in; the input never ends.
        let copying = try ChildProcess(try Paths.product("pbctl"), ["--address", world.bus.address, "copy"])
        copying.write(Data(repeating: 0xFF, count: 2 << 20))
        try await Task.sleep(for: .seconds(1))
        server.send(SIGSTOP)
        defer { server.send(SIGCONT) }
        let status = try await copying.wait(timeout: .seconds(90))
        #expect(status == 69, "\(String(decoding: copying.stderr, as: UTF8.self))")
        #expect(String(decoding: copying.stderr, as: UTF8.self).contains("did not answer"))
    }

    /// `help` is a command too: `pbctl help help` describes it.
    @Test func helpOnHelp() async throws {
        let world = try await PbctlHarness(server: false)
        let result = try await world.pbctl("help", "help")
        #expect(result.status == 0, "\(result)")
        #expect(result.out.contains("USAGE: pbctl help"), "\(result.out)")
    }

    @Test func noCommand() async throws {
        let world = try await PbctlHarness(server: false)
        let result = try await world.pbctl()
        #expect(result.status == 64)
        #expect(result.out == "")
        #expect(result.err.hasPrefix("Error: Missing a command, such as 'pbctl paste'.\nUsage: pbctl [--pasteboard <NAME>] [--address <BUS>] <subcommand>\n"), "\(result.err)")
    }

    @Test(arguments: [
        (["restore"], "Error: Missing expected argument '<count>'\n"),
        (["copy", "-t"], "Error: Missing value for '-t <TYPE>'\n"),
        (["paste", "--item"], "Error: Missing value for '--item <N>'\n"),
        (["paste", "--item", "first"], "Error: The value 'first' is invalid for '--item <N>'\n"),
        (["copy", "--expires", "0"], "Error: --expires takes a positive number of seconds\n"),
        (["copy", "--expires", "inf"], "Error: --expires takes a positive number of seconds\n"),
        (["watch", "--since", "many"], "Error: The value 'many' is invalid for '--since <COUNT>'\n"),
        (["watch", "--exec"], "Error: --exec needs a command to run"),
        (["copy", "--expires", "soon"], "Error: The value 'soon' is invalid for '--expires <SECONDS>'\n"),
        // A negative number is a bad value, not a missing one.
        (["copy", "--expires", "-1"], "Error: --expires takes a positive number of seconds\n"),
        (["paste", "--item", "-1"], "Error: The value '-1' is invalid for '--item <N>'\n"),
        (["watch", "--since", "-1"], "Error: The value '-1' is invalid for '--since <COUNT>'\n"),
        (["history", "--limit", "-1"], "Error: The value '-1' is invalid for '--limit <N>'\n"),
        (["count", "extra"], "Error: Unexpected argument 'extra'\n"),
    ])
    func missingOrBadArgument(arguments: [String], message: String) async throws {
        let world = try await PbctlHarness(server: false)
        let result = try await runPbctl(["--address", world.bus.address] + arguments)
        #expect(result.status == 64, "\(result)")
        #expect(result.out == "")
        #expect(result.err.hasPrefix(message), "\(result.err)")
    }

    // MARK: 65: refused by the server

    /// A name the server refuses (`InvalidName`) is bad input, not a usage error: 65. It is
    /// refused without asking the server: with none on the bus, asking would give 69.
    @Test(arguments: ["", "bad\u{1}name", String(repeating: "n", count: 256)])
    func invalidPasteboardName(name: String) async throws {
        let world = try await PbctlHarness(server: false)
        let result = try await world.pbctl("-p", name, "count")
        #expect(result.status == 65, "\(result)")
        #expect(result.out == "")
        #expect(result.err.hasPrefix("pbctl: "), "\(result.err)")
        #expect(result.err.contains("pasteboard name"), "\(result.err)")
    }

    /// The name is the error, before the input is looked at (here a file that is not there).
    @Test func emptyPasteboardNameSaysSo() async throws {
        let world = try await PbctlHarness(server: false)
        let result = try await world.pbctl("copy", "-p", "", "/nonexistent/file", input: "x")
        #expect(result.status == 65, "\(result)")
        #expect(result.err == "pbctl: The pasteboard name is empty; a pasteboard name is 1 to 255 bytes of UTF-8 without control characters, such as \"general\".\n")
    }

    @Test func invalidTypeIsRefused() async throws {
        let world = try await PbctlHarness()
        expect(
            try await world.pbctl("copy", "-t", "bad type", input: "x"), status: 65, stdout: "",
            stderr: "pbctl: The type \"bad type\" has a space at byte 3; spaces are allowed only around the ';' between MIME parameters, as in \"text/plain ; charset=utf-8\".\n")
        expectSuccess(try await world.pbctl("count"), stdout: "0\n")
        expectSuccess(try await world.pbctl("list"))
    }

    @Test func invalidTypeToPasteIsRefused() async throws {
        let world = try await PbctlHarness()
        expectSuccess(try await world.pbctl("copy", input: "x"))
        let result = try await world.pbctl("paste", "-t", "bad type")
        #expect(result.status == 65, "\(result)")
        #expect(result.out == "")
        #expect(result.err.hasPrefix("pbctl: The type \"bad type\" has a space at byte 3"), "\(result.err)")
    }

    // MARK: 0 when the reader goes away

    /// `pbctl list | head -1`: a reader that has gone before pbctl writes is no failure, for
    /// every command that prints (`set -o pipefail` scripts would take SIGPIPE's 141 for one).
    @Test(.timeLimit(.minutes(5)))
    func aReaderThatHasGoneIsNoFailure() async throws {
        let world = try await PbctlHarness()
        expectSuccess(try await world.pbctl("copy", input: "one"))
        expectSuccess(try await world.pbctl("-p", "other", "copy", input: "two"))
        let pbctl = try Paths.product("pbctl")
        let folder = try Paths.temporaryDirectory("reader-gone")
        defer { try? FileManager.default.removeItem(atPath: folder) }
        for command in [["list"], ["count"], ["types"], ["info"], ["info", "--json"], ["history"], ["paste"], ["watch", "--since", "0"], ["--help"], ["types", "--help"]] {
            // Standard output is a pipe whose reader is closed before pbctl starts: its first
            // write fails, every time.
            var ends: [Int32] = [0, 0]
            #expect(pipe(&ends) == 0)
            close(ends[0])
            let errors = folder + "/\(command.joined(separator: "-"))"
            let pid = try spawn(
                pbctl, ["--address", world.bus.address] + command, standardInput: .open("/dev/null", flags: O_RDONLY, mode: 0),
                standardOutput: .duplicate(ends[1]), standardError: .open(errors, flags: O_WRONLY | O_CREAT, mode: 0o600))
            close(ends[1])
            var status: Int32?
            _ = await eventually(timeout: .seconds(30)) {
                status = reap(pid, wait: false)
                return status != nil
            }
            let said = (try? String(contentsOfFile: errors, encoding: .utf8)) ?? ""
            #expect(status == 0 && said.isEmpty, "\(command): status \(String(describing: status)), \(said)")
        }
        // Nothing was lost on the way.
        expectSuccess(try await world.pbctl("paste"), stdout: "one")
    }

    // MARK: 69: unavailable

    @Test(arguments: [["count"], ["copy"], ["paste"], ["list"], ["info", "--json"]])
    func noServerOnTheBus(arguments: [String]) async throws {
        let world = try await PbctlHarness(server: false)
        let result = try await runPbctl(["--address", world.bus.address] + arguments, input: Data("x".utf8))
        expect(
            result, status: 69, stdout: "",
            stderr: "pbctl: cannot reach pasteboardd on the bus \(world.bus.address): pasteboardd is not running there; start it with `pasteboardd --address '\(world.bus.address)' &`\n")
    }

    /// The hint starts a server where pbctl looked: a plain `pasteboardd` on the session bus,
    /// with `--address` on any other (above).
    @Test func theHintIsPlainOnTheSessionBus() async throws {
        let world = try await PbctlHarness(server: false)
        let session = try await runPbctl(["count"], environment: ["DBUS_SESSION_BUS_ADDRESS": world.bus.address])
        expect(
            session, status: 69, stdout: "",
            stderr: "pbctl: cannot reach pasteboardd on the bus \(world.bus.address): pasteboardd is not running there; start it with `pasteboardd &`\n")
    }

    @Test func noBusAtTheAddress() async throws {
        let socket = FileManager.default.temporaryDirectory.appendingPathComponent("pbctl-no-bus-\(UUID().uuidString)").path
        let address = "unix:path=\(socket)"
        let result = try await runPbctl(["--address", address, "count"])
        #expect(result.status == 69)
        #expect(result.out == "")
        #expect(result.err.hasPrefix("pbctl: cannot reach pasteboardd on the bus \(address): "), "\(result.err)")
        #expect(result.err.contains("No such file or directory"), "\(result.err)")
    }

    @Test func malformedAddress() async throws {
        let result = try await runPbctl(["--address", "nonsense", "count"])
        #expect(result.status == 69)
        #expect(result.out == "")
        #expect(result.err.hasPrefix("pbctl: cannot reach pasteboardd on the bus nonsense: Address does not contain a colon"), "\(result.err)")
    }

    @Test func noSessionBus() async throws {
        let result = try await runPbctl(["count"], environment: ["XDG_RUNTIME_DIR": ""])
        expect(result, status: 69, stdout: "", stderr: "pbctl: cannot reach pasteboardd on the bus (none: DBUS_SESSION_BUS_ADDRESS is not set): no session bus: DBUS_SESSION_BUS_ADDRESS is not set and XDG_RUNTIME_DIR is not set either\n")
        // The path tried is named as it is.
        let runtime = try Paths.temporaryDirectory("no-bus")
        defer { try? FileManager.default.removeItem(atPath: runtime) }
        let missing = try await runPbctl(["count"], environment: ["XDG_RUNTIME_DIR": runtime])
        expect(missing, status: 69, stdout: "", stderr: "pbctl: cannot reach pasteboardd on the bus (none: DBUS_SESSION_BUS_ADDRESS is not set): no session bus: DBUS_SESSION_BUS_ADDRESS is not set and \(runtime)/bus is not a bus socket\n")
    }
}
