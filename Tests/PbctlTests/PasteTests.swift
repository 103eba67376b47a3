import Foundation
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
}
