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

    @Test func invalidUTF8IsOctetStream() async throws {
        let world = try await PbctlHarness()
        let bytes = Data([0x61, 0x62, 0xFF, 0xFE, 0x80, 0x63])
        expectSuccess(try await world.pbctl("copy", input: bytes))
        expectSuccess(try await world.pbctl("types"), stdout: "application/octet-stream\n")
        let pasted = try await world.pbctl("paste")
        #expect(pasted.status == 0)
        #expect(pasted.stdout == bytes)
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
