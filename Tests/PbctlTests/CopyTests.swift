import Foundation
import Testing
import TestSupport

/// `pbctl copy`: what lands on the pasteboard, under which types.
struct CopyTests {
    @Test func textRoundTripsExactlyWithoutAddingANewline() async throws {
        let world = try await PbctlHarness()
        expectSuccess(try await world.pbctl("copy", input: "hello, wörld"))
        expectSuccess(try await world.pbctl("paste"), stdout: "hello, wörld")
        expectSuccess(try await world.pbctl("types"), stdout: "text/plain;charset=utf-8\n")
    }

    @Test func textKeepsItsOwnTrailingNewlines() async throws {
        let world = try await PbctlHarness()
        expectSuccess(try await world.pbctl("copy", input: "two lines\nend\n\n"))
        expectSuccess(try await world.pbctl("paste"), stdout: "two lines\nend\n\n")
    }

    @Test func binaryDataIsSniffed() async throws {
        let world = try await PbctlHarness()
        let png = Data([0x89, 0x50, 0x4E, 0x47, 0x0D, 0x0A, 0x1A, 0x0A, 0, 0, 0, 0x0D, 0x49, 0x48, 0x44, 0x52]) + randomBytes(2000)
        expectSuccess(try await world.pbctl("copy", input: png))
        expectSuccess(try await world.pbctl("types"), stdout: "image/png\n")
        let pasted = try await world.pbctl("paste")
        #expect(pasted.status == 0)
        #expect(pasted.stdout == png)
        #expect(pasted.err == "")
    }

    /// Valid UTF-8 is text whatever bytes it holds, NUL included, as the contract says; NUL
    /// bytes only let a binary format's magic number win.
    @Test func utf8WithNULIsText() async throws {
        let world = try await PbctlHarness()
        let bytes = Data("a\u{0}b\n".utf8)
        expectSuccess(try await world.pbctl("copy", input: bytes))
        expectSuccess(try await world.pbctl("types"), stdout: "text/plain;charset=utf-8\n")
        #expect(try await world.pbctl("paste").stdout == bytes)
        let wasm = Data([0x00] + Array("asm".utf8) + [1, 0, 0, 0])
        expectSuccess(try await world.pbctl("copy", input: wasm))
        expectSuccess(try await world.pbctl("types"), stdout: "application/wasm\n")
    }

    @Test func invalidUTF8IsOctetStream() async throws {
        let world = try await PbctlHarness()
        let bytes = Data([0x61, 0x62, 0xFF, 0xFE, 0x80, 0x63])
        expectSuccess(try await world.pbctl("copy", input: bytes))
        expectSuccess(try await world.pbctl("types"), stdout: "application/octet-stream\n")
        let pasted = try await world.pbctl("paste")
        #expect(pasted.status == 0)
        #expect(pasted.stdout == bytes)
    }

    /// Input read whole is text only if all of it is, past the first 4 KiB too.
    @Test func invalidUTF8AfterTheFirstBytesIsOctetStream() async throws {
        let world = try await PbctlHarness()
        expectSuccess(try await world.pbctl("copy", input: Data(repeating: 0x61, count: 10_000) + Data([0xFF])))
        expectSuccess(try await world.pbctl("types"), stdout: "application/octet-stream\n")
        expectSuccess(try await world.pbctl("copy", input: Data(repeating: 0x61, count: 10_000) + Data("é".utf8)))
        expectSuccess(try await world.pbctl("types"), stdout: "text/plain;charset=utf-8\n")
    }

    /// Large input is text only if all of it is, to its last byte: a file (which the server
    /// reads straight from its descriptor) from a path or as stdin, and a stream through a pipe.
    @Test func aLargeFileIsTextOnlyIfAllOfItIs() async throws {
        let world = try await PbctlHarness()
        let text = Data(repeating: 0x61, count: 3 << 20)
        // pbctl reads a mebibyte at a time: a sequence across the first boundary too.
        let across = Data(repeating: 0x61, count: (1 << 20) - 1)
        let cases: [(Data, String)] = [
            (text + Data([0xFF]), "application/octet-stream"), (text + Data("é".utf8), "text/plain;charset=utf-8"),
            (text + Data([0xC3]), "application/octet-stream"), (across + Data("€".utf8) + text, "text/plain;charset=utf-8"),
            (across + Data([0xE2, 0x82, 0x41]) + text, "application/octet-stream"), (text + Data([0]), "text/plain;charset=utf-8"),
        ]
        for (data, type) in cases {
            let file = try temporaryFile(data)
            defer { try? FileManager.default.removeItem(atPath: file) }
            expectSuccess(try await world.pbctl("copy", file))
            expectSuccess(try await world.pbctl("types"), stdout: "\(type)\n")
            let redirected = try await runProgram("/bin/sh", ["-c", "\"$0\" --address \"$1\" copy < \"$2\"", try Paths.product("pbctl"), world.bus.address, file])
            #expect(redirected.status == 0, "\(redirected)")
            expectSuccess(try await world.pbctl("types"), stdout: "\(type)\n")
            // Through a pipe, read to its end before its type is known.
            let piped = try await runProgram("/bin/sh", ["-c", "cat \"$2\" | \"$0\" --address \"$1\" copy", try Paths.product("pbctl"), world.bus.address, file])
            #expect(piped.status == 0, "\(piped)")
            expectSuccess(try await world.pbctl("types"), stdout: "\(type)\n")
            #expect(try await world.pbctl("paste").stdout == data)
        }
        let pasted = try await world.pbctl("paste")
        #expect(pasted.stdout == text + Data([0]))
    }

    /// Input without an end is refused at the server's `max-item-bytes`, never held whole
    /// first: input seen not to be text (`/dev/zero`, as stdin or named) streams to the
    /// server, which refuses it; text (`yes`) is held only up to the limit. Nothing changes.
    @Test func endlessInputIsRefusedAtTheItemLimit() async throws {
        let world = try await PbctlHarness(limits: ["max-item-bytes=3000000"])
        expectSuccess(try await world.pbctl("copy", input: "before"))
        let pbctl = try Paths.product("pbctl")
        for command in [#""$0" --address "$1" copy < /dev/zero"#, #""$0" --address "$1" copy /dev/zero"#, #"yes | "$0" --address "$1" copy"#] {
            let outcome = try await runProgram("/bin/sh", ["-c", command, pbctl, world.bus.address], timeout: .seconds(20))
            #expect(outcome.status == 65, "\(command): \(outcome)")
            #expect(outcome.err.contains("3000000 bytes (max-item-bytes)"), "\(command): \(outcome.err)")
        }
        // A file too large is refused before it is read through to tell its type.
        let file = try temporaryFile(Data(repeating: 0x61, count: 3_000_001))
        defer { try? FileManager.default.removeItem(atPath: file) }
        let named = try await world.pbctl("copy", file)
        #expect(named.status == 65, "\(named)")
        #expect(named.err.contains("the input exceeds 3000000 bytes (max-item-bytes)"), "\(named.err)")
        expectSuccess(try await world.pbctl("paste"), stdout: "before")
        expectSuccess(try await world.pbctl("count"), stdout: "1\n")
    }

    /// With no server on the bus, input that would be held until its end (text) fails at
    /// once, not after its end, which an endless stream never reaches.
    @Test func endlessTextWithNoServerFailsAtOnce() async throws {
        let world = try await PbctlHarness(server: false)
        let outcome = try await runProgram("/bin/sh", ["-c", #"yes | "$0" --address "$1" copy"#, try Paths.product("pbctl"), world.bus.address], timeout: .seconds(20))
        #expect(outcome.status == 69, "\(outcome)")
        #expect(outcome.err.contains("pasteboardd is not running there"), "\(outcome.err)")
    }

    /// On a terminal, a large file the server reads straight from its descriptor shows how
    /// much it has copied, as a copy from a pipe does.
    @Test func aLargeFileShowsProgressOnATerminal() async throws {
        let world = try await PbctlHarness()
        let file = try temporaryFile(Data(repeating: 0x62, count: 24 << 20))
        defer { try? FileManager.default.removeItem(atPath: file) }
        let pbctl = try Paths.product("pbctl")
        // `script` runs the command with a terminal for its output.
        let shown = try await runProgram("/usr/bin/script", ["-qec", "'\(pbctl)' --address '\(world.bus.address)' copy '\(file)'", "/dev/null"])
        #expect(shown.status == 0, "\(shown)")
        #expect(String(decoding: shown.stdout, as: UTF8.self).contains("pbctl: copied 24.0 MiB\u{1B}[K\r\n"), "\(shown)")
        expectSuccess(try await world.pbctl("count"), stdout: "1\n")
        // Not on a terminal: nothing but the copy.
        expectSuccess(try await world.pbctl("copy", file))
    }

    /// `-` is stdin; a directory, a missing file, a closed stdin, and a name, type or option
    /// value that is not UTF-8 are refused and store nothing.
    @Test func oddInputs() async throws {
        let world = try await PbctlHarness()
        expectSuccess(try await world.pbctl("copy", "-", input: "from stdin"))
        expectSuccess(try await world.pbctl("paste"), stdout: "from stdin")
        let directory = FileManager.default.temporaryDirectory.path
        expect(try await world.pbctl("copy", directory), status: 74, stdout: "", stderr: "pbctl: cannot copy \(directory): it is a directory\n")
        expect(try await world.pbctl("copy", directory + "/no-such-file-of-pbctl"), status: 1, stdout: "", stderr: "pbctl: cannot open \(directory)/no-such-file-of-pbctl: No such file or directory\n")
        let pbctl = try Paths.product("pbctl")
        let closed = try await runProgram("/bin/sh", ["-c", "\"$0\" --address \"$1\" copy <&-", pbctl, world.bus.address])
        #expect(closed.status == 74 && closed.err == "pbctl: cannot read the input: standard input is closed\n", "\(closed)")
        let notUTF8 = try await runProgram("/bin/sh", ["-c", "echo y | \"$0\" --address \"$1\" -p \"$(printf '\\377')\" copy", pbctl, world.bus.address])
        #expect(notUTF8.status == 65 && notUTF8.err.contains("pasteboard name (argument 4) is not valid UTF-8"), "\(notUTF8)")
        let attachedNotUTF8 = try await runProgram("/bin/sh", ["-c", "echo y | \"$0\" --address \"$1\" -p\"$(printf '\\377')\" copy", pbctl, world.bus.address])
        #expect(attachedNotUTF8.status == 65 && attachedNotUTF8.err.contains("pasteboard name (argument 3) is not valid UTF-8"), "\(attachedNotUTF8)")
        // A type that is not UTF-8 is an invalid type (65); an option's value, a usage error.
        let notUTF8Type = try await runProgram("/bin/sh", ["-c", "echo y | \"$0\" --address \"$1\" copy -t \"$(printf '\\377')\"", pbctl, world.bus.address])
        #expect(notUTF8Type.status == 65 && notUTF8Type.err.contains("the type (argument 5) is not valid UTF-8"), "\(notUTF8Type)")
        let notUTF8Value = try await runProgram("/bin/sh", ["-c", "echo y | \"$0\" --address \"$1\" copy --expires \"$(printf '\\377')\"", pbctl, world.bus.address])
        #expect(notUTF8Value.status == 64 && notUTF8Value.err.contains("argument 5 is not valid UTF-8"), "\(notUTF8Value)")
        // A file name that is not UTF-8 is looked for as it is: here there is none.
        let notUTF8File = try await runProgram("/bin/sh", ["-c", "echo y | \"$0\" --address \"$1\" copy \"$(printf '\\377')\"", pbctl, world.bus.address])
        #expect(notUTF8File.status == 1 && notUTF8File.err == "pbctl: cannot open \u{FFFD}: No such file or directory\n", "\(notUTF8File)")
        expectSuccess(try await world.pbctl("list"), stdout: "general\n")
        expectSuccess(try await world.pbctl("count"), stdout: "1\n")
        // Pasting into a closed stdout fails; the bus socket does not take stdout's place.
        let noOutput = try await runProgram("/bin/sh", ["-c", "\"$0\" --address \"$1\" paste >&-", pbctl, world.bus.address])
        #expect(noOutput.status == 74 && noOutput.err == "pbctl: cannot write the output: Bad file descriptor\n", "\(noOutput)")
        expectSuccess(try await world.pbctl("paste"), stdout: "from stdin")
    }

    /// A Linux file name is any bytes: a Latin-1 one is copied byte-exact, not refused.
    @Test func aFileNameThatIsNotUTF8() async throws {
        let world = try await PbctlHarness()
        let directory = try Paths.temporaryDirectory("pbctl-latin1")
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let pbctl = try Paths.product("pbctl")
        let copied = try await runProgram("/bin/sh", ["-c", "f=\"$2/caf$(printf '\\351').txt\"; printf 'latin-1 name' > \"$f\" && \"$0\" --address \"$1\" copy \"$f\"", pbctl, world.bus.address, directory])
        #expect(copied.status == 0 && copied.err.isEmpty, "\(copied)")
        expectSuccess(try await world.pbctl("paste"), stdout: "latin-1 name")
        expectSuccess(try await world.pbctl("count"), stdout: "1\n")
        // Two such names that would read alike are refused rather than mistaken for each other.
        let alike = try await runProgram("/bin/sh", ["-c", "\"$0\" --address \"$1\" watch --exec true \"$(printf '\\351')\" \"$(printf '\\377')\"", pbctl, world.bus.address])
        #expect(alike.status == 64 && alike.err.contains("would read alike"), "\(alike)")
    }

    @Test func emptyInputIsEmptyText() async throws {
        let world = try await PbctlHarness()
        expectSuccess(try await world.pbctl("copy", input: ""))
        expectSuccess(try await world.pbctl("info", "--json"), stdout: #"{"name":"general","count":1,"items":[{"types":["text/plain;charset=utf-8"],"sizes":[0]}]}"# + "\n")
        expectSuccess(try await world.pbctl("paste"), stdout: "")
    }

    @Test func copiesAFile() async throws {
        let world = try await PbctlHarness()
        let file = try temporaryFile(Data("from a file\n".utf8))
        defer { try? FileManager.default.removeItem(atPath: file) }
        expectSuccess(try await world.pbctl("copy", file, input: "not this"))
        expectSuccess(try await world.pbctl("paste"), stdout: "from a file\n")
        expectSuccess(try await world.pbctl("types"), stdout: "text/plain;charset=utf-8\n")
    }

    @Test func missingFileIsNoSuchThing() async throws {
        let world = try await PbctlHarness()
        let file = FileManager.default.temporaryDirectory.appendingPathComponent("pbctl-missing-\(UUID().uuidString)").path
        expect(try await world.pbctl("copy", file), status: 1, stdout: "", stderr: "pbctl: cannot open \(file): No such file or directory\n")
        expectSuccess(try await world.pbctl("count"), stdout: "0\n")
    }

    @Test func severalTypesOfferTheSameBytesInOrder() async throws {
        let world = try await PbctlHarness()
        expectSuccess(try await world.pbctl("copy", "-t", "application/x-one", "-t", "text/html", "--type", "image/x-three", input: "<b>same</b>"))
        expectSuccess(try await world.pbctl("types"), stdout: "application/x-one\ntext/html\nimage/x-three\n")
        for type in ["application/x-one", "text/html", "image/x-three"] {
            expectSuccess(try await world.pbctl("paste", "-t", type), stdout: "<b>same</b>")
        }
        expectSuccess(try await world.pbctl("info", "--json"), stdout: #"{"name":"general","count":1,"items":[{"types":["application/x-one","text/html","image/x-three"],"sizes":[11,11,11]}]}"# + "\n")
    }

    /// More types than the server takes is the server's refusal (65), whatever the data's
    /// size; more than one D-Bus message carries descriptors for (16) is refused before sending,
    /// for data that travels by descriptor. Neither costs the connection (the bus disconnects
    /// a sender of more than 16), and nothing changes.
    @Test func tooManyTypesAreRefusedWithoutLosingTheBus() async throws {
        let world = try await PbctlHarness(limits: ["max-types-per-item=20"])
        expectSuccess(try await world.pbctl("copy", input: "before"))
        let types = { (count: Int) in (1...count).flatMap { ["-t", "application/x-type\($0)"] } }
        for count in [21, 65] {
            let refused = try await world.pbctl(["copy"] + types(count), input: Data("small".utf8))
            expect(refused, status: 65, stdout: "")
            #expect(refused.err.contains("max-types-per-item"), "\(count) types: \(refused.err)")
        }
        let large = try temporaryFile(Data(repeating: 0x61, count: 2_000_000))
        defer { try? FileManager.default.removeItem(atPath: large) }
        let overDescriptors = try await world.pbctl(["copy", large] + types(17))
        expect(overDescriptors, status: 65, stdout: "")
        #expect(overDescriptors.err.contains("at most 16"), "\(overDescriptors.err)")
        let piped = try await world.pbctl(["copy"] + types(17), input: Data(repeating: 0x62, count: 2_000_000))
        expect(piped, status: 65, stdout: "")
        expectSuccess(try await world.pbctl("paste"), stdout: "before")
        expectSuccess(try await world.pbctl("count"), stdout: "1\n")
        // 16 types of large data still travel, each type its own descriptor.
        expectSuccess(try await world.pbctl(["copy", large] + types(16)))
        let pasted = try await world.pbctl("paste", "-t", "application/x-type16")
        #expect(pasted.status == 0 && pasted.stdout == Data(repeating: 0x61, count: 2_000_000), "\(pasted.err)")
    }

    /// A type given twice, in any spelling, is offered once; the names of text that xclip and
    /// wl-copy take (`-t text`, `-t UTF8_STRING`) are UTF-8 text.
    @Test func repeatedTypesAndNamesForText() async throws {
        let world = try await PbctlHarness()
        expectSuccess(try await world.pbctl("copy", "-t", "text/html", "-t", "image/x-two", "-t", "Text/HTML", "-t", "text/html", input: "<p>"))
        expectSuccess(try await world.pbctl("types"), stdout: "text/html\nimage/x-two\n")
        expectSuccess(try await world.pbctl("copy", "-t", "UTF8_STRING", "-t", "text", "-t", "text/plain;charset=utf-8", input: "plain"))
        expectSuccess(try await world.pbctl("types"), stdout: "text/plain;charset=utf-8\n")
        expectSuccess(try await world.pbctl("count"), stdout: "2\n")
        // What the server refuses is still refused, and says why.
        expect(try await world.pbctl("copy", "-t", "not a type", input: "x"), status: 65, stdout: "")
    }

    @Test func appleIdentifiersAreMappedToMIME() async throws {
        let world = try await PbctlHarness()
        expectSuccess(try await world.pbctl("copy", "-t", "public.html", input: "<p>"))
        expectSuccess(try await world.pbctl("types"), stdout: "text/html\n")
    }

    @Test func pasteboardNameBeforeOrAfterTheCommand() async throws {
        let world = try await PbctlHarness()
        expectSuccess(try await world.pbctl("-p", "before", "copy", input: "one"))
        expectSuccess(try await world.pbctl("copy", "-p", "after", input: "two"))
        expectSuccess(try await world.pbctl("copy", "--pasteboard", "long", input: "three"))
        expectSuccess(try await world.pbctl("paste", "-p", "before"), stdout: "one")
        expectSuccess(try await world.pbctl("-p", "after", "paste"), stdout: "two")
        expectSuccess(try await world.pbctl("--pasteboard", "long", "paste"), stdout: "three")
        expectSuccess(try await world.pbctl("count"), stdout: "0\n")
        expectSuccess(try await world.pbctl("list"), stdout: "after\nbefore\nlong\n")
    }

    @Test func eachCopyIsOneChangeReplacingTheContents() async throws {
        let world = try await PbctlHarness()
        expectSuccess(try await world.pbctl("copy", input: "first"))
        expectSuccess(try await world.pbctl("copy", "-t", "text/html", input: "<i>second</i>"))
        expectSuccess(try await world.pbctl("count"), stdout: "2\n")
        expectSuccess(try await world.pbctl("types"), stdout: "text/html\n")
    }
}
