import Foundation
import Testing
import TestSupport

/// `pbctl copy --concealed`, `--transient` and `--expires`.
struct CopyOptionTests {
    /// Records an issue unless `pbctl history` succeeds without listing the generation `count`
    /// (concealed and transient copies never enter the history) but with `count - 1`, the plain
    /// copy before it.
    func expectNotInHistory(_ world: PbctlHarness, _ count: UInt64, sourceLocation: SourceLocation = #_sourceLocation) async throws {
        let history = try await world.pbctl("history")
        let lines = history.out.split(separator: "\n")
        #expect(history.status == 0 && history.err.isEmpty, "\(history)", sourceLocation: sourceLocation)
        #expect(!lines.contains { $0.hasPrefix("\(count)\t") }, "\(history.out)", sourceLocation: sourceLocation)
        #expect(lines.contains { $0.hasPrefix("\(count - 1)\t") }, "\(history.out)", sourceLocation: sourceLocation)
    }

    /// A copy flag that keeps the copy out of the history and off the disk.
    struct Unkept: Sendable, CustomTestStringConvertible {
        let flag: String
        let text: String
        /// What `pbctl watch` prints after the count: a secret's signal carries no types; a
        /// transient copy's types are announced.
        let announced: String

        var testDescription: String { flag }

        static let concealed = Unkept(flag: "--concealed", text: "hunter2", announced: "")
        static let transient = Unkept(flag: "--transient", text: "passing", announced: " text/plain;charset=utf-8")
    }

    @Test(arguments: [Unkept.concealed, .transient])
    func keptOutOfHistoryAndOffTheDisk(_ option: Unkept) async throws {
        let world = try await PbctlHarness()
        let watcher = try world.watch("watch")
        defer { watcher.stop() }
        let skipped = try await watcher.prime(world) { "general \($0) text/plain;charset=utf-8" }
        let count = try await world.changeCount()
        expectSuccess(try await world.pbctl("copy", option.flag, input: option.text))
        expectSuccess(try await world.pbctl("paste"), stdout: option.text)
        if option.flag == "--transient" {
            expectSuccess(try await world.pbctl("types"), stdout: "text/plain;charset=utf-8\n")
        }
        #expect(Array(try await watcher.waitForLines(skipped + 1).dropFirst(skipped)) == ["general \(count + 1)\(option.announced)"])
        try await expectNotInHistory(world, count + 1)
        // Never on disk: after a crash the pasteboard is empty, its count no lower.
        let server = try #require(world.server)
        server.kill9()
        try await server.restart()
        expect(try await world.pbctl("paste"), status: 1, stdout: "", stderr: "pbctl: 'general' is empty\n")
        #expect(try await world.changeCount() >= count + 1)
    }

    /// A stream over 1 MiB without `-t` is held until its end to be typed: in a temporary
    /// file of `TMPDIR`, but in memory only for a copy that must not reach a disk.
    @Test(arguments: ["--concealed", "--transient", nil])
    func aLargeStreamIsHeldOffTheDiskWhenItMustBe(_ flag: String?) async throws {
        let world = try await PbctlHarness()
        let temporary = try Paths.temporaryDirectory("spool")
        let fifo = try Paths.temporaryDirectory("stream")
        defer {
            try? FileManager.default.removeItem(atPath: temporary)
            try? FileManager.default.removeItem(atPath: fifo)
        }
        // pbctl's descriptors, looked at until they show where the stream is held (the stream
        // kept open after its 2 MB until then): a file of TMPDIR, or a memfd.
        let script = """
            mkfifo "$FIFO"
            ( head -c 2000000 /dev/zero | tr '\\0' a; while [ ! -e "$FIFO.done" ]; do sleep 0.05; done ) > "$FIFO" &
            "$PBCTL" --address "$BUS" copy $FLAG < "$FIFO" &
            pbctl=$!
            held=none
            for attempt in $(seq 400); do
                links=$(ls -l /proc/$pbctl/fd 2>/dev/null)
                case "$links" in
                    *"$TMP/"*) held=tmpdir; break ;;
                    *memfd:*) held=memory; break ;;
                esac
                sleep 0.05
            done
            echo $held
            touch "$FIFO.done"
            wait $pbctl
            """
        let result = try await runProgram("/bin/sh", ["-c", script], environment: [
            "PBCTL": try Paths.product("pbctl"), "BUS": world.bus.address, "FLAG": flag ?? "", "TMP": temporary, "TMPDIR": temporary, "FIFO": fifo + "/in",
        ], timeout: .seconds(40))
        #expect(result.status == 0, "\(result)")
        #expect(result.out == (flag == nil ? "tmpdir\n" : "memory\n"), "where the stream was held: \(result.out)")
        #expect(try await world.pbctl("paste").stdout.count == 2_000_000)
    }

    @Test func expires() async throws {
        let world = try await PbctlHarness()
        let start = ContinuousClock.now
        // Long enough for the paste to come first on a loaded machine.
        expectSuccess(try await world.pbctl("copy", "--expires", "6", input: "brief"))
        let pasted = try await world.pbctl("paste")
        // Checked when the paste was over within the 6 s, which a stalled machine may pass.
        if ContinuousClock.now - start < .seconds(6) {
            expectSuccess(pasted, stdout: "brief")
        }
        let deadline = ContinuousClock.now + .seconds(15)
        while try await world.changeCount() < 2, ContinuousClock.now < deadline {
            try await Task.sleep(for: .milliseconds(100))
        }
        #expect(ContinuousClock.now - start >= .milliseconds(5995))
        expectSuccess(try await world.pbctl("count"), stdout: "2\n")
        expect(try await world.pbctl("paste"), status: 1, stdout: "", stderr: "pbctl: 'general' is empty\n")
    }

    /// Past what 64 bits of milliseconds hold is never: no crash, no error.
    @Test func aHugeExpiryIsNever() async throws {
        let world = try await PbctlHarness()
        expectSuccess(try await world.pbctl("copy", "--expires", "1e300", input: "kept"))
        expectSuccess(try await world.pbctl("-p", "other", "copy", "--expires", "18446744073709552", input: "kept too"))
        expectSuccess(try await world.pbctl("paste"), stdout: "kept")
        expectSuccess(try await world.pbctl("-p", "other", "paste"), stdout: "kept too")
    }

    @Test func flagsCombine() async throws {
        let world = try await PbctlHarness()
        expectSuccess(try await world.pbctl("copy", "--concealed", "--transient", "--expires", "60", input: "all of them"))
        expectSuccess(try await world.pbctl("paste"), stdout: "all of them")
        expectSuccess(try await world.pbctl("count"), stdout: "1\n")
    }
}
