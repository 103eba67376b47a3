import Foundation
import Testing
import TestSupport

/// Data larger than the server takes inline travels through file descriptors both ways.
struct LargeDataTests {
    /// The server's inline limit in these tests; the data is far above it.
    static let limits = ["max-inline-bytes=65536"]
    static let size = 5 << 20 + 12345

    @Test func throughAPipe() async throws {
        let world = try await PbctlHarness(limits: Self.limits)
        let data = randomBytes(Self.size)
        expectSuccess(try await world.pbctl("copy", input: data))
        try await expectPastes(data, type: "application/octet-stream", in: world)
    }

    /// A `pbctl copy` killed in the middle of its input leaves the pasteboard as it was: the end
    /// of the pipe it passed on is its death, not the end of the data, and the server tells the
    /// two apart even when the bus has not yet seen the connection go (it stored the part it
    /// had read, as a complete copy, before).
    @Test(arguments: 1...3)
    func aCopyKilledInTheMiddleStoresNothing(round: Int) async throws {
        let world = try await PbctlHarness(limits: Self.limits)
        expectSuccess(try await world.pbctl("copy", input: "before"))
        let copy = try ChildProcess(try Paths.product("pbctl"), ["--address", world.bus.address, "copy"])
        // Binary and over the inline limit: pbctl passes it on through a pipe as it reads it.
        copy.write(randomBytes(3 << 20))
        try await Task.sleep(for: .milliseconds(300))
        // The bus, stopped, learns of pbctl's death only after the server has seen its pipe end
        // and asked it (as a loaded bus may, and as a bus on another processor did).
        world.bus.pause()
        copy.kill()
        try await Task.sleep(for: .milliseconds(300))
        world.bus.resume()
        // The server has had time to see the pipe end, and to commit if it were to.
        try await Task.sleep(for: .seconds(1))
        expectSuccess(try await world.pbctl("count"), stdout: "1\n")
        expectSuccess(try await world.pbctl("paste"), stdout: "before")
    }

    /// A paste through a descriptor that the server stops feeding (it was killed) ends with a
    /// failure, not with part of the data and success: the pipe ends either way, and the size
    /// the server gave tells them apart.
    @Test func aPasteCutShortFails() async throws {
        let world = try await PbctlHarness(limits: Self.limits)
        let server = try #require(world.server)
        let data = randomBytes(24 << 20)
        let file = try temporaryFile(data)
        defer { try? FileManager.default.removeItem(atPath: file) }
        expectSuccess(try await world.pbctl("copy", file))
        let status = file + ".status"
        defer { try? FileManager.default.removeItem(atPath: status) }
        // The paste's reader waits before it reads, so that the server dies while the pipe is
        // still being fed.
        let pasting = Task {
            try await runProgram("/bin/sh", ["-c", "{ \"$0\" --address \"$1\" paste 2>&1; echo \"exit $?\" > \"$2\"; } | { sleep 2; cat > /dev/null; }",
                                            try Paths.product("pbctl"), world.bus.address, status])
        }
        try await Task.sleep(for: .milliseconds(800))
        server.send(SIGKILL)
        _ = try await pasting.value
        let said = try String(contentsOfFile: status, encoding: .utf8)
        #expect(said == "exit 74\n", "\(said)")
    }

    @Test func fromAFile() async throws {
        let world = try await PbctlHarness(limits: Self.limits)
        let data = randomBytes(Self.size)
        let file = try temporaryFile(data)
        defer { try? FileManager.default.removeItem(atPath: file) }
        expectSuccess(try await world.pbctl("copy", file))
        try await expectPastes(data, type: "application/octet-stream", in: world)
    }

    /// A regular file on stdin is handed to the server as it is, from the current offset.
    @Test func fromAFileOnStdin() async throws {
        let world = try await PbctlHarness(limits: Self.limits)
        let data = randomBytes(Self.size)
        let file = try temporaryFile(Data("skipped".utf8) + data)
        defer { try? FileManager.default.removeItem(atPath: file) }
        let script = #"exec 0<"$2" && head -c 7 >/dev/null && exec "$0" --address "$1" copy"#
        expectSuccess(try await runProgram("/bin/sh", ["-c", script, try Paths.product("pbctl"), world.bus.address, file]))
        try await expectPastes(data, type: "application/octet-stream", in: world)
    }

    @Test func fromAFileUnderSeveralTypes() async throws {
        let world = try await PbctlHarness(limits: Self.limits)
        let data = randomBytes(Self.size)
        let file = try temporaryFile(data)
        defer { try? FileManager.default.removeItem(atPath: file) }
        expectSuccess(try await world.pbctl("copy", file, "-t", "application/x-one", "-t", "application/x-two"))
        try await expectPastes(data, type: "application/x-one\napplication/x-two", in: world)
        let second = try await world.pbctl("paste", "-t", "application/x-two")
        #expect(second.status == 0)
        #expect(second.stdout == data)
    }

    @Test func textUnderSeveralTypes() async throws {
        let world = try await PbctlHarness(limits: Self.limits)
        let data = Data(String(repeating: "large text, ", count: Self.size / 12).utf8)
        expectSuccess(try await world.pbctl("copy", "-t", "text/plain;charset=utf-8", "-t", "text/x-log", input: data))
        try await expectPastes(data, type: "text/plain;charset=utf-8\ntext/x-log", in: world)
        let log = try await world.pbctl("paste", "-t", "text/x-log")
        #expect(log.status == 0)
        #expect(log.stdout == data)
        expectSuccess(try await world.pbctl("info", "--json"), stdout: #"{"name":"general","count":1,"items":[{"types":["text/plain;charset=utf-8","text/x-log"],"sizes":[\#(data.count),\#(data.count)]}]}"# + "\n")
    }

    /// Between the server's inline limit and pbctl's own cutoff: pbctl first tries inline, is
    /// told `TooLarge`, and falls back to a descriptor.
    @Test func aboveTheServersInlineLimitOnly() async throws {
        let world = try await PbctlHarness(limits: Self.limits)
        let data = randomBytes(200_000)
        expectSuccess(try await world.pbctl("copy", input: data))
        try await expectPastes(data, type: "application/octet-stream", in: world)
    }

    /// Progress is for a person at a terminal: it is shown on stderr while the data goes
    /// elsewhere, and not while the data itself is printed on the terminal, where the counter's
    /// rewritten line would land in the middle of it. `script` gives pbctl a terminal.
    @Test func progressOnlyWhenTheDataGoesElsewhere() async throws {
        let world = try await PbctlHarness(limits: Self.limits)
        let data = Data(String(repeating: "x", count: 9 << 20).utf8)
        expectSuccess(try await world.pbctl("copy", input: data))
        let environment = ["PBCTL": try Paths.product("pbctl"), "BUS": world.bus.address, "SHELL": "/bin/sh"]
        func onTerminal(_ command: String) async throws -> String {
            let result = try await runProgram("/usr/bin/script", ["-qec", command, "/dev/null"], environment: environment, timeout: .seconds(60))
            #expect(result.status == 0, "\(command): \(result)")
            return String(decoding: result.stdout, as: UTF8.self)
        }
        let elsewhere = try await onTerminal(#""$PBCTL" --address "$BUS" paste > /dev/null"#)
        #expect(elsewhere.contains("pbctl: pasted 9.0 MiB"), "\(elsewhere.prefix(200))")
        let onScreen = try await onTerminal(#""$PBCTL" --address "$BUS" paste"#)
        // Only the outcomes are handed to the expectations: a failure would print their values.
        let shown = onScreen.utf8.count, counterShown = onScreen.contains("pbctl:")
        #expect(shown >= data.count)
        #expect(!counterShown, "\(onScreen.suffix(200))")
    }

    /// Checks that `paste` gives `data` back and `types` prints `type` (lines joined by `\n`).
    private func expectPastes(_ data: Data, type: String, in world: PbctlHarness, sourceLocation: SourceLocation = #_sourceLocation) async throws {
        let pasted = try await world.pbctl("paste")
        #expect(pasted.status == 0, "\(pasted.err)", sourceLocation: sourceLocation)
        #expect(pasted.err == "", sourceLocation: sourceLocation)
        #expect(pasted.stdout.count == data.count, sourceLocation: sourceLocation)
        #expect(pasted.stdout == data, "the pasted bytes differ", sourceLocation: sourceLocation)
        expectSuccess(try await world.pbctl("types"), stdout: type + "\n", sourceLocation: sourceLocation)
        expectSuccess(try await world.pbctl("count"), stdout: "1\n", sourceLocation: sourceLocation)
    }
}
