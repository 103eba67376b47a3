import Foundation
import Testing
import TestSupport

/// pbctl reads the common command lines itself and leaves the rest to ArgumentParser (see
/// `QuickLine`). Spelling an option `--name=value` is one way to make a line go to
/// ArgumentParser, so each test here runs the same request both ways and expects the same
/// outcome, byte for byte.
struct QuickLineTests {
    /// Runs `quick` and then `parsed` (the same request, spelled for ArgumentParser) and
    /// expects the same status, stdout and stderr.
    func expectSame(
        _ world: PbctlHarness, _ quick: [String], _ parsed: [String], input: String = "",
        sourceLocation: SourceLocation = #_sourceLocation
    ) async throws {
        let first = try await runPbctl(["--address", world.bus.address] + quick, input: Data(input.utf8))
        let second = try await runPbctl(["--address=\(world.bus.address)"] + parsed, input: Data(input.utf8))
        #expect(first.status == second.status, "\(first)\n---\n\(second)", sourceLocation: sourceLocation)
        #expect(first.stdout == second.stdout, "\(first)\n---\n\(second)", sourceLocation: sourceLocation)
        #expect(first.err == second.err, "\(first)\n---\n\(second)", sourceLocation: sourceLocation)
    }

    @Test func copyWithTypesAndFlags() async throws {
        let world = try await PbctlHarness()
        try await expectSame(
            world, ["-p", "a", "copy", "-t", "text/html", "--type", "text/x-two", "--transient", "--expires", "60"],
            ["--pasteboard=b", "copy", "--type=text/html", "--type=text/x-two", "--transient", "--expires=60"], input: "<b>x</b>")
        try await expectSame(world, ["-p", "a", "types"], ["--pasteboard=b", "types"])
        try await expectSame(world, ["-p", "a", "paste", "-t", "text/x-two"], ["--pasteboard=b", "paste", "--type=text/x-two"])
        try await expectSame(world, ["-p", "a", "history"], ["--pasteboard=b", "history"])
    }

    /// A name the server would refuse: 65 and the same words, both ways, for every command.
    /// (The parsed reading gets the name as a separate argument: ArgumentParser takes
    /// `--pasteboard=` with nothing after it for a missing value, a usage error.)
    @Test func invalidNamesAreRefusedAlike() async throws {
        let world = try await PbctlHarness()
        for name in ["", "tab\there", String(repeating: "n", count: 256)] {
            try await expectSame(world, ["-p", name, "count"], ["--pasteboard", name, "count"])
            try await expectSame(world, ["-p", name, "copy"], ["--pasteboard", name, "copy"], input: "x")
            try await expectSame(world, ["-p", name, "paste"], ["--pasteboard", name, "paste"])
            let refused = try await runPbctl(["--address", world.bus.address, "-p", name, "paste"])
            #expect(refused.status == 65 && refused.err.hasPrefix("pbctl: "), "\(refused)")
        }
    }

    @Test func pasteAnItemAndTheErrors() async throws {
        let world = try await PbctlHarness()
        try await expectSame(world, ["paste"], ["paste", "--item=0"])
        try await world.writeItems("general", [
            [("text/plain;charset=utf-8", Data("first".utf8))],
            [("text/html", Data("<i>second</i>".utf8)), ("image/png", Data([0x89, 0x50]))],
        ])
        try await expectSame(world, ["paste", "--item", "1"], ["paste", "--item=1"])
        try await expectSame(world, ["paste", "--item", "1", "-t", "image/png"], ["paste", "--item=1", "--type=image/png"])
        try await expectSame(world, ["paste", "--item", "2"], ["paste", "--item=2"])
        try await expectSame(world, ["paste", "-t", "bad type"], ["paste", "--type=bad type"])
        try await expectSame(world, ["-p", "other", "info", "--json"], ["info", "--json", "--pasteboard=other"])
    }

    @Test func historyAndRestore() async throws {
        let world = try await PbctlHarness()
        expectSuccess(try await world.pbctl("copy", input: "one"))
        expectSuccess(try await world.pbctl("copy", input: "two"))
        try await expectSame(world, ["history", "--limit", "1"], ["history", "--limit=1"])
        try await expectSame(world, ["restore", "7"], ["restore", "--pasteboard=general", "7"])
    }

    @Test func noServer() async throws {
        let world = try await PbctlHarness(server: false)
        try await expectSame(world, ["count"], ["count", "--pasteboard=general"])
        try await expectSame(world, ["copy"], ["copy", "--pasteboard=general"], input: "x")
    }

    /// Lines `QuickLine` leaves alone still work, the ArgumentParser way.
    @Test func linesForArgumentParser() async throws {
        let world = try await PbctlHarness()
        let help = try await world.pbctl(["count", "--help"])
        #expect(help.status == 0 && help.out.hasPrefix("OVERVIEW: Print the pasteboard's change count.\n"), "\(help)")
        try await expectSame(world, ["help", "paste"], ["paste", "--help"])
        // `-` is stdin, after `--` too (as for cat); a file of that name is `./-`.
        expectSuccess(try await world.pbctl(["copy", "--", "-"], input: Data("dash".utf8)))
        expectSuccess(try await world.pbctl(["paste"]), stdout: "dash")
        expect(try await world.pbctl(["copy", "./-"]), status: 1, stdout: "", stderr: "pbctl: cannot open ./-: No such file or directory\n")
        let dashed = try await world.pbctl(["paste", "-t", "-x"])
        #expect(dashed.status == 64 && dashed.err.hasPrefix("Error: "), "\(dashed)")
    }
}

extension PbctlHarness {
    /// Runs `pbctl --address BUS ARGUMENTS...` with nothing on stdin.
    func pbctl(_ arguments: [String], input: Data = Data()) async throws -> Outcome {
        try await runPbctl(["--address", bus.address] + arguments, input: input)
    }
}
