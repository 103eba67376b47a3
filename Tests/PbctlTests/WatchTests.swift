import DBus
import Foundation
import Testing
import TestSupport

/// `pbctl watch`, run in the background while the test makes changes.
///
/// A watcher gives no sign of when it starts listening, so most tests first prime it (see
/// ``Watcher/prime(_:name:line:)``) and check the lines that follow the priming ones exactly.
struct WatchTests {
    static let text = "text/plain;charset=utf-8"

    @Test func linesPerChange() async throws {
        let world = try await PbctlHarness()
        let watcher = try world.watch("watch")
        defer { watcher.stop() }
        let skipped = try await watcher.prime(world) { "general \($0) \(Self.text)" }
        let count = try await world.changeCount()
        expectSuccess(try await world.pbctl("copy", input: "one"))
        expectSuccess(try await world.pbctl("copy", "-t", "text/html", "-t", "image/png", input: "two"))
        expectSuccess(try await world.pbctl("clear"))
        let lines = try await watcher.waitForLines(skipped + 3)
        #expect(Array(lines.dropFirst(skipped)) == [
            "general \(count + 1) \(Self.text)",
            "general \(count + 2) text/html image/png",
            "general \(count + 3)",
        ])
        #expect(watcher.errorText == "")
    }

    /// `pbctl watch | head -n 1`: once the reader has gone, the watch ends at once, without
    /// waiting for a second change to find the pipe closed.
    @Test(.timeLimit(.minutes(5)))
    func endsWhenItsReaderGoes() async throws {
        let world = try await PbctlHarness()
        let pbctl = try Paths.product("pbctl")
        let output = try temporaryFile(Data(), "pbctl-watch-head")
        defer { try? FileManager.default.removeItem(atPath: output) }
        async let piped = runProgram(
            "/bin/sh", ["-c", "\"$0\" --address \"$1\" -p w watch | head -n 1 > \"$2\"", pbctl, world.bus.address, output], timeout: .seconds(60))
        // Changes until the watch has started and head has its line (a loaded machine may take
        // seconds to start it), then none: the watch must end without another.
        let started = ContinuousClock.now
        while (FileManager.default.contents(atPath: output) ?? Data()).isEmpty, ContinuousClock.now - started < .seconds(45) {
            expectSuccess(try await world.pbctl("-p", "w", "copy", input: "x"))
            try await Task.sleep(for: .milliseconds(100))
        }
        let result = try await piped
        #expect(result.status == 0, "\(result)")
        #expect(String(decoding: FileManager.default.contents(atPath: output) ?? Data(), as: UTF8.self).hasPrefix("w "))
        #expect(result.err.isEmpty, "\(result)")
    }

    /// Changes made while the server was away from this bus were never signalled here: when
    /// it comes back, the watch reports the current state of what moved, as `--since` would.
    @Test func aServerBackFromElsewhereIsCaughtUpWith() async throws {
        let world = try await PbctlHarness()
        let server = try #require(world.server)
        let watcher = try world.watch("watch", "--json")
        defer { watcher.stop() }
        let skipped = try await watcher.prime(world) { "{\"name\":\"general\",\"count\":\($0),\"types\":[\"\(Self.text)\"]}" }
        let count = try await world.changeCount()
        #expect(await server.terminate() == 0)
        // The same pasteboards served on another bus meanwhile, and changed there.
        let elsewhere = try await TestBus()
        let other = try await TestServer(bus: elsewhere, stateDirectory: server.stateDirectory, store: server.store)
        for text in ["one", "two"] {
            expectSuccess(try await runPbctl(["--address", elsewhere.address, "copy", "-t", "text/html"], input: Data(text.utf8)))
        }
        #expect(await other.terminate() == 0)
        try await server.restart()
        let lines = try await watcher.waitForLines(skipped + 1)
        #expect(Array(lines.dropFirst(skipped)) == ["{\"name\":\"general\",\"count\":\(count + 2),\"types\":[\"text/html\"]}"])
        // Then on as before.
        expectSuccess(try await world.pbctl("copy", input: "three"))
        #expect(Array(try await watcher.waitForLines(skipped + 2).dropFirst(skipped + 1)) == ["{\"name\":\"general\",\"count\":\(count + 3),\"types\":[\"\(Self.text)\"]}"])
    }

    @Test func onlyTheNamedPasteboard() async throws {
        let world = try await PbctlHarness()
        let watcher = try world.watch("-p", "mine", "watch")
        defer { watcher.stop() }
        let skipped = try await watcher.prime(world, name: "mine") { "mine \($0) \(Self.text)" }
        let count = try await world.changeCount("mine")
        expectSuccess(try await world.pbctl("copy", input: "elsewhere"))
        expectSuccess(try await world.pbctl("copy", "-p", "mine", input: "here"))
        try await watcher.waitForLines(skipped + 1)
        // Time for a line about 'general' to show up, were one coming.
        try await Task.sleep(for: .milliseconds(200))
        #expect(Array(watcher.lines.dropFirst(skipped)) == ["mine \(count + 1) \(Self.text)"])
    }

    @Test func json() async throws {
        let world = try await PbctlHarness()
        let watcher = try world.watch("watch", "--json")
        defer { watcher.stop() }
        let skipped = try await watcher.prime(world) { #"{"name":"general","count":\#($0),"types":["\#(Self.text)"]}"# }
        let count = try await world.changeCount()
        expectSuccess(try await world.pbctl("copy", input: "one"))
        expectSuccess(try await world.pbctl("copy", "-t", "text/html", "-t", "application/x-two", input: "two"))
        expectSuccess(try await world.pbctl("clear"))
        let lines = try await watcher.waitForLines(skipped + 3)
        #expect(Array(lines.dropFirst(skipped)) == [
            #"{"name":"general","count":\#(count + 1),"types":["\#(Self.text)"]}"#,
            #"{"name":"general","count":\#(count + 2),"types":["text/html","application/x-two"]}"#,
            #"{"name":"general","count":\#(count + 3),"types":[]}"#,
        ])
    }

    @Test func allPasteboards() async throws {
        let world = try await PbctlHarness()
        let watcher = try world.watch("watch", "--all")
        defer { watcher.stop() }
        let skipped = try await watcher.prime(world, name: "ready") { "ready \($0) \(Self.text)" }
        expectSuccess(try await world.pbctl("copy", input: "one"))
        expectSuccess(try await world.pbctl("-p", "other", "copy", "-t", "text/html", input: "two"))
        expectSuccess(try await world.pbctl("-p", "other", "remove"))
        let lines = try await watcher.waitForLines(skipped + 3)
        #expect(Array(lines.dropFirst(skipped)) == [
            "general 1 \(Self.text)",
            "other 1 text/html",
            "other 2",
        ])
    }

    @Test func sinceZeroReportsTheCurrentStateFirst() async throws {
        let world = try await PbctlHarness()
        expectSuccess(try await world.pbctl("copy", input: "one"))
        expectSuccess(try await world.pbctl("copy", "-t", "text/html", input: "two"))
        let watcher = try world.watch("watch", "--since", "0")
        defer { watcher.stop() }
        // The first line is also the sign that the watcher listens.
        #expect(try await watcher.waitForLines(1) == ["general 2 text/html"])
        expectSuccess(try await world.pbctl("copy", input: "three"))
        #expect(try await watcher.waitForLines(2) == ["general 2 text/html", "general 3 \(Self.text)"])
    }

    @Test func sinceTheCurrentCountReportsOnlyLaterChanges() async throws {
        let world = try await PbctlHarness()
        expectSuccess(try await world.pbctl("copy", input: "one"))
        expectSuccess(try await world.pbctl("copy", input: "two"))
        let watcher = try world.watch("watch", "--since", "2")
        defer { watcher.stop() }
        // Whether this change comes before the watcher listens (then --since reports it) or
        // after (then the signal does), it is reported exactly once, and nothing for count 2.
        expectSuccess(try await world.pbctl("copy", "-t", "text/html", input: "three"))
        #expect(try await watcher.waitForLines(1) == ["general 3 text/html"])
        try await Task.sleep(for: .milliseconds(200))
        #expect(watcher.lines == ["general 3 text/html"])
    }

    @Test func sinceWithAllReportsEachPasteboardAboveTheCount() async throws {
        let world = try await PbctlHarness()
        expectSuccess(try await world.pbctl("-p", "a", "copy", input: "a1"))
        expectSuccess(try await world.pbctl("-p", "b", "copy", input: "b1"))
        expectSuccess(try await world.pbctl("-p", "b", "copy", "-t", "text/html", input: "b2"))
        let watcher = try world.watch("watch", "--all", "--since", "1")
        defer { watcher.stop() }
        #expect(try await watcher.waitForLines(1) == ["b 2 text/html"])
        expectSuccess(try await world.pbctl("-p", "a", "copy", input: "a2"))
        #expect(try await watcher.waitForLines(2) == ["b 2 text/html", "a 2 \(Self.text)"])
    }

    @Test func execGetsTheDataAndTheEnvironment() async throws {
        let world = try await PbctlHarness()
        let file = try temporaryFile(Data(), "pbctl-watch-exec")
        defer { try? FileManager.default.removeItem(atPath: file) }
        let script = #"printf '%s|%s|%s|%s\n' "$PASTEBOARD_NAME" "$PASTEBOARD_COUNT" "$PASTEBOARD_TYPES" "$(cat)" >> "$WATCH_OUTPUT""#
        let watcher = try world.watch("watch", "--exec", "sh", "-c", script, environment: ["WATCH_OUTPUT": file], linesFrom: file)
        defer { watcher.stop() }
        let skipped = try await watcher.prime(world) { "general|\($0)|\(Self.text)|ready" }
        let count = try await world.changeCount()
        // One change at a time: a command reads the data of its own change, which a later
        // change would replace.
        expectSuccess(try await world.pbctl("copy", input: "first data"))
        try await watcher.waitForLines(skipped + 1)
        expectSuccess(try await world.pbctl("copy", "-t", "text/html", "-t", "text/x-two", input: "<b>second</b>"))
        try await watcher.waitForLines(skipped + 2)
        expectSuccess(try await world.pbctl("clear"))
        let lines = try await watcher.waitForLines(skipped + 3)
        #expect(Array(lines.dropFirst(skipped)) == [
            "general|\(count + 1)|\(Self.text)|first data",
            "general|\(count + 2)|text/html text/x-two|<b>second</b>",
            "general|\(count + 3)||",
        ])
        #expect(watcher.errorText == "")
    }

    /// With `--json` too, each change's JSON line comes out before its command runs.
    @Test func execWithJSONPrintsEachChangeBeforeItsCommand() async throws {
        let world = try await PbctlHarness()
        let watcher = try world.watch("watch", "--json", "--exec", "sh", "-c", #"echo "ran $PASTEBOARD_COUNT $(cat)""#)
        defer { watcher.stop() }
        let skipped = try await watcher.prime(world) { "ran \($0) ready" }
        let count = try await world.changeCount()
        expectSuccess(try await world.pbctl("copy", input: "hello"))
        let lines = try await watcher.waitForLines(skipped + 2)
        #expect(Array(lines.dropFirst(skipped)) == [
            "{\"name\":\"general\",\"count\":\(count + 1),\"types\":[\"\(Self.text)\"]}",
            "ran \(count + 1) hello",
        ])
        #expect(watcher.errorText == "")
    }

    /// A slow command does not cost the changes behind it their data: each change's data is
    /// fetched when its signal arrives.
    @Test func aSlowCommandStillGetsEachChangesData() async throws {
        let world = try await PbctlHarness()
        let (watcher, skipped, count) = try await CountAndData.watch("slow", in: world, after: 0.5)
        defer { watcher.stop() }
        for index in 1...5 {
            expectSuccess(try await world.pbctl("-p", "slow", "copy", input: "data \(index)"))
            try await Task.sleep(for: .milliseconds(100))
        }
        let lines = try await watcher.waitForLines(skipped + 5)
        #expect(Array(lines.dropFirst(skipped)) == (1...5).map { "\(count + UInt64($0)) data \($0)" })
    }

    /// Past the changes whose data is fetched ahead (32), a change replaced before its turn
    /// has no data left: its command still runs, with nothing on stdin, and stderr says so.
    @Test func aChangeWhoseDataIsGoneIsSaidToBe() async throws {
        let world = try await PbctlHarness()
        let gate = try temporaryFile(Data(), "pbctl-watch-gate")
        defer { try? FileManager.default.removeItem(atPath: gate) }
        let (watcher, skipped, count) = try await CountAndData.watch("burst", in: world, after: 0.05, gate: gate)
        defer { watcher.stop() }
        // The first command waits until every change is made, however fast the machine runs it.
        try FileManager.default.removeItem(atPath: gate)
        let writer = try Connection.connect(address: world.bus.address)
        defer { writer.close() }
        for index in 1...60 {
            _ = try await writer.call(
                destination: "org.pasteboardd.Pasteboard1", path: "/org/pasteboardd/Pasteboard1", interface: "org.pasteboardd.Pasteboard1",
                method: "WriteItems", arguments: [
                    .string("burst"), .array(element: "a{say}", [.dictionary(key: "s", value: "ay", [(.string("text/plain"), .bytes(Array("data \(index)".utf8)))])]),
                    .dictionary(key: "s", value: "v", []),
                ])
        }
        _ = FileManager.default.createFile(atPath: gate, contents: nil)
        let lines = Array(try await watcher.waitForLines(skipped + 60).dropFirst(skipped))
        #expect(lines.count == 60)
        #expect(lines.map { $0.prefix { $0 != " " } } == (1...60).map { "\(count + UInt64($0))" }[...].map { Substring($0) })
        #expect(lines.last == "\(count + 60) data 60")
        let empty = lines.filter { $0.hasSuffix(" ") }
        #expect(!empty.isEmpty, "every change kept its data: \(lines)")
        for line in empty {
            let changed = line.dropLast()
            #expect(watcher.errorText.contains("change \(changed) of 'burst' comes with no data on stdin"), "\(watcher.errorText)")
        }
    }

    @Test func execWithSinceRunsForTheCurrentState() async throws {
        let world = try await PbctlHarness()
        let file = try temporaryFile(Data(), "pbctl-watch-exec")
        defer { try? FileManager.default.removeItem(atPath: file) }
        expectSuccess(try await world.pbctl("-p", "notes", "copy", input: "already there"))
        let script = #"printf '%s %s %s\n' "$PASTEBOARD_NAME" "$PASTEBOARD_COUNT" "$(cat)" >> "$WATCH_OUTPUT""#
        let watcher = try world.watch("-p", "notes", "watch", "--since", "0", "--exec", "sh", "-c", script, environment: ["WATCH_OUTPUT": file], linesFrom: file)
        defer { watcher.stop() }
        #expect(try await watcher.waitForLines(1) == ["notes 1 already there"])
    }

    /// Any file name is a program's: one with `=` in it, or starting with `-`, is run as it
    /// is, not read as a variable to set or an option of some launcher.
    @Test(arguments: ["a=b.sh", "-hook"])
    func execRunsProgramsOfAnyName(program: String) async throws {
        let world = try await PbctlHarness()
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("pbctl-exec-\(UUID().uuidString)").path
        try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let output = directory + "/output"
        _ = FileManager.default.createFile(atPath: output, contents: Data())
        let path = directory + "/" + program
        _ = FileManager.default.createFile(atPath: path, contents: Data("#!/bin/sh\necho \"ran $PASTEBOARD_COUNT $1\" >> \"$WATCH_OUTPUT\"\n".utf8), attributes: [.posixPermissions: 0o755])
        // By path, and by name in PATH.
        for (command, environment) in [(path, [:]), (program, ["PATH": directory + ":/usr/bin:/bin"])] {
            let watcher = try world.watch("watch", "--exec", command, "argument", environment: environment.merging(["WATCH_OUTPUT": output]) { $1 }, linesFrom: output)
            defer { watcher.stop() }
            let skipped = try await watcher.prime(world) { "ran \($0) argument" }
            let count = try await world.changeCount()
            expectSuccess(try await world.pbctl("copy", input: "x"))
            let lines = try await watcher.waitForLines(skipped + 1)
            #expect(lines.last == "ran \(count + 1) argument", "\(command): \(lines)")
            #expect(watcher.errorText == "", "\(command)")
            watcher.stop()
            try Data().write(to: URL(fileURLWithPath: output))
        }
    }

    /// A command that cannot be found is a usage error at once, not a failure at every change.
    @Test func execOfAMissingProgramIsAUsageError() async throws {
        let world = try await PbctlHarness()
        expect(
            try await world.pbctl("watch", "--exec", "/nonexistent/program", "x"), status: 64,
            stdout: "", stderr: "pbctl: cannot run /nonexistent/program: no such program\n")
        expect(
            try await world.pbctl("watch", "--exec", "no-such-program-of-pbctl"), status: 64,
            stdout: "", stderr: "pbctl: cannot run no-such-program-of-pbctl: no such program in PATH\n")
        // There, but not a program: said as it is.
        let directory = FileManager.default.temporaryDirectory.path
        expect(try await world.pbctl("watch", "--exec", directory), status: 64, stdout: "", stderr: "pbctl: cannot run \(directory): it is a directory\n")
        let text = try temporaryFile(Data("not a program".utf8), "pbctl-not-executable")
        defer { try? FileManager.default.removeItem(atPath: text) }
        expect(try await world.pbctl("watch", "--exec", text), status: 64, stdout: "", stderr: "pbctl: cannot run \(text): it is not executable\n")
        // A command line given as one string, as for tools that run it with a shell: both ways
        // of writing it are said.
        expect(
            try await world.pbctl("watch", "--exec", "no-such-notifier-of-pbctl 'it is copied'"), status: 64, stdout: "",
            stderr: "pbctl: cannot run no-such-notifier-of-pbctl 'it is copied': no such program in PATH; give the program and its arguments as words of their own"
                + " (--exec no-such-notifier-of-pbctl 'it is copied'), or a shell line as --exec sh -c 'no-such-notifier-of-pbctl '\\''it is copied'\\'''\n")
    }

    /// The command and its arguments reach it byte for byte, also when they are not UTF-8.
    @Test func execArgumentsThatAreNotUTF8() async throws {
        let world = try await PbctlHarness()
        let file = try temporaryFile(Data(), "pbctl-watch-bytes")
        defer { try? FileManager.default.removeItem(atPath: file) }
        expectSuccess(try await world.pbctl("copy", input: "x"))
        let pbctl = try Paths.product("pbctl")
        let watcher = try ChildProcess("/bin/sh", ["-c", "exec \"$0\" --address \"$1\" watch --since 0 --exec sh -c 'printf \"%s\\n\" \"$0\" >> \"$1\"' \"caf$(printf '\\351')\" \"$2\"", pbctl, world.bus.address, file])
        defer { watcher.kill() }
        #expect(await eventually(timeout: .seconds(20)) { (FileManager.default.contents(atPath: file) ?? Data()).count >= 5 })
        #expect(FileManager.default.contents(atPath: file) == Data([0x63, 0x61, 0x66, 0xE9, 0x0A]))
    }

    /// `-pNAME` is read as `-p NAME`, but the command's own arguments after `--exec` are its own.
    @Test func execArgumentsAreNotSplit() async throws {
        let world = try await PbctlHarness()
        let file = try temporaryFile(Data(), "pbctl-watch-exec")
        defer { try? FileManager.default.removeItem(atPath: file) }
        expectSuccess(try await world.pbctl("-pnotes", "copy", input: "x"))
        let script = #"printf '%s %s %s\n' "$PASTEBOARD_NAME" "$1" "$2" >> "$WATCH_OUTPUT""#
        let watcher = try world.watch("-pnotes", "watch", "--since", "0", "--exec", "sh", "-c", script, "sh", "-tkept", "-pkept", environment: ["WATCH_OUTPUT": file], linesFrom: file)
        defer { watcher.stop() }
        #expect(try await watcher.waitForLines(1) == ["notes -tkept -pkept"])
        // The command named in the same argument: --exec=CMD.
        let attachedFile = try temporaryFile(Data(), "pbctl-watch-exec")
        defer { try? FileManager.default.removeItem(atPath: attachedFile) }
        let attached = try world.watch("-pnotes", "watch", "--since", "0", "--exec=sh", "-c", script, "sh", "-tkept", environment: ["WATCH_OUTPUT": attachedFile], linesFrom: attachedFile)
        defer { attached.stop() }
        #expect(try await attached.waitForLines(1) == ["notes -tkept "])
    }

    /// A concealed current state is told as its `Changed` tells it: no types, and no secret
    /// on the command's stdin.
    @Test func sinceKeepsAConcealedSecret() async throws {
        let world = try await PbctlHarness()
        let file = try temporaryFile(Data(), "pbctl-watch-exec")
        defer { try? FileManager.default.removeItem(atPath: file) }
        expectSuccess(try await world.pbctl("-p", "vault", "copy", "--concealed", input: "hunter2"))
        let json = try world.watch("-p", "vault", "watch", "--since", "0", "--json")
        defer { json.stop() }
        #expect(try await json.waitForLines(1) == [#"{"name":"vault","count":1,"types":[]}"#])
        let script = #"printf '%s|%s|%s\n' "$PASTEBOARD_COUNT" "$PASTEBOARD_TYPES" "$(cat)" >> "$WATCH_OUTPUT""#
        let exec = try world.watch("-p", "vault", "watch", "--since", "0", "--exec", "sh", "-c", script, environment: ["WATCH_OUTPUT": file], linesFrom: file)
        defer { exec.stop() }
        #expect(try await exec.waitForLines(1) == ["1||"])
    }

    /// A command that cannot be started for one change (its file being replaced, say) is said
    /// for that change, and the watch goes on, as it does when a command fails.
    @Test func aCommandThatCannotBeRunOnceIsSaidAndTheWatchGoesOn() async throws {
        let world = try await PbctlHarness()
        let directory = try Paths.temporaryDirectory("pbctl-hook")
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let hook = directory + "/hook.sh"
        let output = directory + "/output"
        let script = "#!/bin/sh\nprintf '%s\\n' \"$PASTEBOARD_COUNT\" >> \"$WATCH_OUTPUT\"\n"
        #expect(FileManager.default.createFile(atPath: hook, contents: Data(script.utf8), attributes: [.posixPermissions: 0o755]))
        #expect(FileManager.default.createFile(atPath: output, contents: Data()))
        let watcher = try world.watch("-p", "hooked", "watch", "--exec", hook, environment: ["WATCH_OUTPUT": output], linesFrom: output)
        defer { watcher.stop() }
        let skipped = try await watcher.prime(world, name: "hooked") { "\($0)" }
        let count = try await world.changeCount("hooked")

        try FileManager.default.setAttributes([.posixPermissions: 0o644], ofItemAtPath: hook)
        expectSuccess(try await world.pbctl("-p", "hooked", "copy", input: "not run"))
        let said = "pbctl: change \(count + 1) of 'hooked': cannot run \(hook): Permission denied; still watching\n"
        #expect(await eventually { watcher.errorText == said }, "\(watcher.errorText)")

        try FileManager.default.setAttributes([.posixPermissions: 0o755], ofItemAtPath: hook)
        expectSuccess(try await world.pbctl("-p", "hooked", "copy", input: "run again"))
        let lines = try await watcher.waitForLines(skipped + 1)
        #expect(Array(lines.dropFirst(skipped)) == ["\(count + 2)"])
        #expect(watcher.exitStatus == nil, "the watch goes on")
    }

    /// The command runs in a process group of its own (a terminal's Ctrl-C is pbctl's to pass
    /// on): a `kill` of the watch, as a script ends one, ends the command it is running too.
    @Test(arguments: [SIGTERM, SIGINT, SIGHUP])
    func aSignalledWatchEndsItsRunningCommand(signal: Int32) async throws {
        let world = try await PbctlHarness()
        expectSuccess(try await world.pbctl("-p", "slow", "copy", input: "start"))
        let file = try temporaryFile(Data(), "pbctl-watch-exec")
        defer { try? FileManager.default.removeItem(atPath: file) }
        let script = #"printf '%s\n' "$$" >> "$WATCH_OUTPUT"; exec sleep 120"#
        let watcher = try world.watch("-p", "slow", "watch", "--since", "0", "--exec", "sh", "-c", script, environment: ["WATCH_OUTPUT": file], linesFrom: file)
        defer { watcher.stop() }
        let command = try #require(Int32(try await watcher.waitForLines(1)[0]))
        defer { kill(command, SIGKILL) }
        // Signalled once it is `sleep`: `sh -c` catches SIGINT until its `exec`, which then
        // drops a SIGINT caught just before.
        #expect(await eventually { Self.name(of: command) == "sleep" })
        kill(watcher.pid, signal)
        #expect(await eventually(timeout: .seconds(10)) { watcher.exitStatus != nil })
        #expect(watcher.exitStatus == 128 + signal)
        #expect(await eventually(timeout: .seconds(10)) { !Self.isRunning(command) }, "the command outlived its watch")
    }

    /// A signal the watch was started ignoring (`nohup`, a script's background job) stays
    /// ignored, by the watch and by its command.
    @Test func anIgnoredHangUpStaysIgnored() async throws {
        let world = try await PbctlHarness()
        expectSuccess(try await world.pbctl("-p", "slow", "copy", input: "start"))
        let file = try temporaryFile(Data(), "pbctl-watch-exec")
        defer { try? FileManager.default.removeItem(atPath: file) }
        let script = #"printf '%s\n' "$$" >> "$WATCH_OUTPUT"; exec sleep 120"#
        let watch = try ChildProcess(
            "/bin/sh", ["-c", #"trap '' HUP; exec "$0" "$@""#, try Paths.product("pbctl"), "--address", world.bus.address,
                        "-p", "slow", "watch", "--since", "0", "--exec", "sh", "-c", script],
            environment: ["WATCH_OUTPUT": file])
        defer { watch.kill() }
        let started = await eventually { (FileManager.default.contents(atPath: file)?.count ?? 0) > 1 }
        #expect(started)
        let line = String(decoding: FileManager.default.contents(atPath: file) ?? Data(), as: UTF8.self)
        let command = try #require(Int32(line.trimmingCharacters(in: .whitespacesAndNewlines)))
        defer { kill(command, SIGKILL) }
        #expect(await eventually { Self.name(of: command) == "sleep" })
        kill(watch.pid, SIGHUP)
        try await Task.sleep(for: .milliseconds(500))
        #expect(watch.exitStatus == nil, "the watch ended on a hang-up it was started ignoring")
        #expect(Self.isRunning(command))
        kill(watch.pid, SIGTERM)
        #expect(await eventually(timeout: .seconds(10)) { watch.exitStatus != nil })
        #expect(await eventually(timeout: .seconds(10)) { !Self.isRunning(command) }, "the command outlived its watch")
    }

    /// The program `pid` runs now, as the kernel names it.
    private static func name(of pid: Int32) -> String? {
        (try? String(contentsOfFile: "/proc/\(pid)/comm", encoding: .utf8))?.trimmingCharacters(in: .newlines)
    }

    /// Whether `pid` runs: it exists and is not a zombie waiting for a parent that reaps it.
    private static func isRunning(_ pid: Int32) -> Bool {
        processState(pid).map { $0 != "Z" } ?? false
    }

    /// Plain `watch` waits for a server to start; `--since` must ask for the state at once.
    @Test func sinceWithNoServer() async throws {
        let world = try await PbctlHarness(server: false)
        expect(
            try await world.pbctl("watch", "--since", "0"), status: 69, stdout: "",
            stderr: "pbctl: cannot reach pasteboardd on the bus \(world.bus.address): pasteboardd is not running there; start it with `pasteboardd --address '\(world.bus.address)' &`\n")
    }
}

/// A primed `watch --exec` whose command waits a while, then writes a line of the change's
/// count and its data to a file whose lines the watcher follows (deleted when it stops).
enum CountAndData {
    /// The watcher of `name`, the lines of its priming, and the count after it. Each command
    /// waits `seconds`, and also until `gate` exists (it does when this returns).
    static func watch(_ name: String, in world: PbctlHarness, after seconds: Double, gate: String? = nil) async throws -> (Watcher, Int, UInt64) {
        let file = try temporaryFile(Data(), "pbctl-watch-exec")
        // A gate of its own goes with the watcher; one the caller gives is the caller's.
        let ownGate = gate == nil
        let gate = try gate ?? temporaryFile(Data(), "pbctl-watch-gate")
        _ = FileManager.default.createFile(atPath: gate, contents: nil)
        let script = #"while [ ! -e "$WATCH_GATE" ]; do sleep 0.02; done; sleep \#(seconds); printf '%s %s\n' "$PASTEBOARD_COUNT" "$(cat)" >> "$WATCH_OUTPUT""#
        let watcher = try world.watch(
            "-p", name, "watch", "--exec", "sh", "-c", script, environment: ["WATCH_OUTPUT": file, "WATCH_GATE": gate], linesFrom: file,
            removing: ownGate ? [gate] : [])
        let skipped = try await watcher.prime(world, name: name) { "\($0) ready" }
        return (watcher, skipped, try await world.changeCount(name))
    }
}
