import DBus
import Foundation
import Synchronization
import Testing
import TestSupport

/// `pbctl paste`: which bytes come out, and how it says there are none.
struct PasteTests {
    @Test func typeMatchesByConformance() async throws {
        let world = try await PbctlHarness()
        expectSuccess(try await world.pbctl("copy", "-t", "text/html", input: "<b>bold</b>"))
        expectSuccess(try await world.pbctl("paste", "-t", "text/plain"), stdout: "<b>bold</b>")
        expectSuccess(try await world.pbctl("paste", "-t", "image/png", "-t", "text/plain"), stdout: "<b>bold</b>")
        expectSuccess(try await world.pbctl("paste", "-t", "application/octet-stream"), stdout: "<b>bold</b>")
    }

    /// `-pNAME` and `-tTYPE`, the values attached as getopt takes them.
    @Test func attachedShortOptionValues() async throws {
        let world = try await PbctlHarness()
        expectSuccess(try await world.pbctl("-pnotes", "copy", "-ttext/html", input: "<b>bold</b>"))
        expectSuccess(try await world.pbctl("-p", "notes", "types"), stdout: "text/html\n")
        expectSuccess(try await world.pbctl("-pnotes", "paste", "-timage/png", "-ttext/plain"), stdout: "<b>bold</b>")
        expectSuccess(try await world.pbctl("paste", "-ttext/html", "-pnotes"), stdout: "<b>bold</b>")
        expect(try await world.pbctl("paste"), status: 1, stdout: "", stderr: "pbctl: 'general' is empty\n")
        // A value starting with '-' is the value, as getopt has it.
        expectSuccess(try await world.pbctl("-p-dash", "copy", "-t-odd", input: "dashed"))
        expectSuccess(try await world.pbctl("--pasteboard=-dash", "types"), stdout: "-odd\n")
        expectSuccess(try await world.pbctl("paste", "-p-dash", "-t-odd"), stdout: "dashed")
    }

    /// `wl-paste -t text` and `xclip -t UTF8_STRING` habits: those names ask for any text.
    @Test(arguments: ["text", "TEXT", "STRING", "UTF8_STRING"])
    func namesForTextAskForAnyText(name: String) async throws {
        let world = try await PbctlHarness()
        expectSuccess(try await world.pbctl("copy", "-t", "text/html", input: "<b>bold</b>"))
        expectSuccess(try await world.pbctl("paste", "-t", name), stdout: "<b>bold</b>")
        expectSuccess(try await world.pbctl("paste", "-t", "image/png", "-t", name), stdout: "<b>bold</b>")
        expectSuccess(try await world.pbctl("copy", "-t", "image/png", input: Data([0x89, 0x50, 0x4E, 0x47])))
        expect(try await world.pbctl("paste", "-t", name), status: 1, stdout: "")
    }

    @Test func firstSatisfiableTypeWins() async throws {
        let world = try await PbctlHarness()
        try await world.writeItems("general", [[("text/html", Data("<p>rich</p>".utf8)), ("text/plain;charset=utf-8", Data("plain".utf8))]])
        expectSuccess(try await world.pbctl("paste", "-t", "text/html"), stdout: "<p>rich</p>")
        expectSuccess(try await world.pbctl("paste", "-t", "text/plain;charset=utf-8"), stdout: "plain")
        expectSuccess(try await world.pbctl("paste"), stdout: "plain")
    }

    @Test func secondItem() async throws {
        let world = try await PbctlHarness()
        try await world.writeItems("general", [
            [("text/plain;charset=utf-8", Data("first".utf8))],
            [("text/html", Data("<i>second</i>".utf8)), ("image/png", Data([0x89, 0x50]))],
        ])
        expectSuccess(try await world.pbctl("paste"), stdout: "first")
        expectSuccess(try await world.pbctl("paste", "--item", "1"), stdout: "<i>second</i>")
        let png = try await world.pbctl("paste", "--item", "1", "-t", "image/png")
        #expect(png.status == 0)
        #expect(png.stdout == Data([0x89, 0x50]))
        expectSuccess(try await world.pbctl("types"), stdout: "text/plain;charset=utf-8\ntext/html\nimage/png\n")
        expect(try await world.pbctl("paste", "--item", "2"), status: 1, stdout: "", stderr: "pbctl: 'general' has 2 item(s), numbered from 0; there is no item 2\n")
    }

    /// Without --item, the first item that satisfies a requested type is pasted.
    @Test func aLaterItemThatSatisfiesTheType() async throws {
        let world = try await PbctlHarness()
        try await world.writeItems("general", [
            [("image/png", Data([0x89])), ("text/plain", Data("a".utf8))],
            [("text/html", Data("<b>b</b>".utf8))],
        ])
        expectSuccess(try await world.pbctl("paste", "-t", "text/html"), stdout: "<b>b</b>")
        expectSuccess(try await world.pbctl("paste", "-t", "image/jpeg", "-t", "text/html", "-t", "text/plain"), stdout: "<b>b</b>")
        expectSuccess(try await world.pbctl("paste", "-t", "text/plain"), stdout: "a")
        expect(try await world.pbctl("paste", "-t", "text/html", "--item", "0"), status: 1, stdout: "")
    }

    /// Output that cannot be written is a failure (74), not a silent success.
    @Test func aFullDiskIsAnError() async throws {
        let world = try await PbctlHarness()
        expectSuccess(try await world.pbctl("copy", input: "will not fit"))
        let pbctl = try Paths.product("pbctl")
        for command in ["paste", "count", "info --json"] {
            let result = try await runProgram("/bin/sh", ["-c", "\"$0\" --address \"$1\" \(command) > /dev/full", pbctl, world.bus.address])
            #expect(result.status == 74, "\(command): \(result)")
            #expect(result.err == "pbctl: cannot write the output: No space left on device\n", "\(command): \(result)")
        }
        // A reader that goes away early is no failure: `paste | head -c 1`.
        let large = Data(repeating: 0x61, count: 4 << 20)
        expectSuccess(try await world.pbctl("copy", input: large))
        let head = try await runProgram("/bin/bash", ["-c", "set -o pipefail; \"$0\" --address \"$1\" paste | head -c 1", pbctl, world.bus.address])
        #expect(head.status == 0 && head.out == "a" && head.err.isEmpty, "\(head)")
    }

    @Test func nothingToPaste() async throws {
        let world = try await PbctlHarness()
        expect(try await world.pbctl("paste"), status: 1, stdout: "", stderr: "pbctl: 'general' is empty\n")
        expectSuccess(try await world.pbctl("copy", input: "gone soon"))
        expectSuccess(try await world.pbctl("clear"))
        expect(try await world.pbctl("paste"), status: 1, stdout: "", stderr: "pbctl: 'general' is empty\n")
    }

    @Test func typeThatDoesNotMatch() async throws {
        let world = try await PbctlHarness()
        expectSuccess(try await world.pbctl("copy", input: "text"))
        expect(
            try await world.pbctl("paste", "-t", "image/png"), status: 1, stdout: "",
            stderr: "pbctl: item 0 of 'general' has nothing conforming to image/png; it offers text/plain;charset=utf-8\n")
    }

    /// A paste of data above the inline limit takes steps (the items, then the data at their
    /// count): a copy landing between them starts the paste again, which then gives the new
    /// contents, rather than failing, as `xclip -o` or `wl-paste` never would.
    // Generous: the limit counts the wait for a place among the tests that run pbctl at
    // once (PbctlHarness's gate), which a loaded machine has made take over a minute.
    @Test(.timeLimit(.minutes(5)))
    func aCopyDuringALargePasteIsNotAnError() async throws {
        let world = try await PbctlHarness(limits: ["max-inline-bytes=65536"])
        let payloads = [Data(repeating: 0x61, count: 100_000), Data(repeating: 0x62, count: 100_000)]
        let files = try payloads.map { try temporaryFile($0) }
        defer { for file in files { try? FileManager.default.removeItem(atPath: file) } }
        let writing = Flag()
        let written = Atomic<Int>(0)
        // Writes the two payloads in turn, back to back, through descriptors (they are above
        // the inline limit).
        let writer = Task {
            let connection = try Connection.connect(address: world.bus.address)
            defer { connection.close() }
            var round = 0
            while !writing.isSet {
                let fd = open(files[round % 2], O_RDONLY | O_CLOEXEC)
                let item = DBusValue.dictionary(key: "s", value: "h", [(.string("application/octet-stream"), .unixFD(UnixFileDescriptor(owning: fd)))])
                _ = try await connection.call(
                    destination: "org.pasteboardd.Pasteboard1", path: "/org/pasteboardd/Pasteboard1", interface: "org.pasteboardd.Pasteboard1",
                    method: "WriteItemsFd", arguments: [.string("general"), .array(element: "a{sh}", [item]), .dictionary(key: "s", value: "v", [])],
                    timeout: .seconds(10))
                round += 1
                written.store(round, ordering: .relaxed)
            }
            return round
        }
        _ = try await world.waitForCount(above: 0)
        // At least 20 pastes, and on until the writer has written 20 times among them: on a
        // loaded machine (a PostgreSQL store) writes can be slower than pastes.
        var pastes = 0
        while pastes < 20 || (written.load(ordering: .relaxed) <= 20 && pastes < 400) {
            let pasted = try await world.pbctl("paste")
            #expect(pasted.status == 0, "\(pasted.err)")
            #expect(payloads.contains(pasted.stdout), "\(pasted.stdout.count) bytes")
            pastes += 1
        }
        writing.set()
        #expect(try await writer.value > 20, "the writer wrote too little to meet the pastes")
    }

    /// A paste of a promise whose writer takes longer than pbctl's first wait for a read
    /// (10 s) and than D-Bus's usual 25 s (the server allows the writer 60 s here) still comes:
    /// the server answers pings meanwhile, so pbctl asks again and waits.
    // Generous: the limit counts the wait for a place among the tests that run pbctl at
    // once (PbctlHarness's gate), which a loaded machine has made take over a minute.
    @Test(.timeLimit(.minutes(5)))
    func aSlowProviderIsWaitedFor() async throws {
        let world = try await PbctlHarness(limits: ["provider-timeout-ms=60000"])
        let writer = try Connection.connect(address: world.bus.address)
        defer { writer.close() }
        let provider = AnsweringProvider(["text/plain;charset=utf-8": Array("slowly".utf8)], delaySeconds: 30)
        try writer.export(provider, at: "/org/pasteboardd/Provider1")
        _ = try await writer.call(
            destination: "org.pasteboardd.Pasteboard1", path: "/org/pasteboardd/Pasteboard1", interface: "org.pasteboardd.Pasteboard1",
            method: "WritePromised", arguments: [.string("general"), .array(element: "as", [.strings(["text/plain;charset=utf-8"])]), .dictionary(key: "s", value: "v", [])])
        let pasted = try await runProgram(try Paths.product("pbctl"), ["--address", world.bus.address, "paste"], timeout: .seconds(90))
        #expect(pasted.status == 0, "\(pasted)")
        #expect(pasted.out == "slowly")
    }
}
