import DBus
import Foundation
import Testing
import TestSupport

@testable import Pasteboard

// The examples of `Pasteboard.docc/Sharing.md`, compiled and run against a portal peer
// (PortalPeer.swift) on a private bus: the same declarations and calls, with each link given the
// test bus's address instead of the session bus. Keep the two in step.

extension UTType {
    static let recipe = UTType(exportedAs: "com.example.recipe", conformingTo: .json)
}

/// The article's types, in a namespace of their own.
enum Sharing {
    struct Recipe: Codable, Equatable, Transferable {
        var title: String
        var steps: [String]

        static var transferRepresentation: some TransferRepresentation {
            CodableRepresentation(contentType: .recipe)
                .suggestedFileName { recipe in recipe.title + ".json" }
            ProxyRepresentation(exporting: \.title)
        }
    }

    struct Note: Transferable {
        var text: String
        var isPrivate: Bool

        static var transferRepresentation: some TransferRepresentation {
            DataRepresentation(exportedContentType: .utf8PlainText) { note in Data(note.text.utf8) }
                .exportingCondition { note in !note.isPrivate }
        }
    }
}

@Suite("Sharing")
struct SharingTests {
    @Test("share a recipe: the app chooser, then an email")
    func recipe() async throws {
        let world = try await World(server: false)
        let portal = try await PortalPeer(address: world.address)

        let pancakes = Sharing.Recipe(title: "Pancakes", steps: ["Mix", "Rest", "Fry"])
        let link = ShareLink(
            item: pancakes, subject: "Pancakes", message: "Try these on Sunday",
            preview: SharePreview("Pancakes"), address: world.address)
        #expect(link.isAvailable)

        var said: [String] = []
        switch try await link.share() {
        case .shared:
            said.append("shared")
        case .cancelled:
            said.append("the person closed the dialog")
        }
        #expect(said == ["shared"])

        portal.answer(.response(1))
        #expect(try await link.share(parentWindow: "x11:3a00007") == .cancelled)
        portal.answer(.response(0))
        try await link.share(via: .email(to: ["grace@example.com"]))

        let calls = portal.calls
        try #require(calls.count == 3)
        #expect(calls.map(\.problems) == [[], [], []])
        #expect(calls.map(\.member) == ["OpenFile", "OpenFile", "ComposeEmail"])
        #expect(calls.map(\.parentWindow) == ["", "x11:3a00007", ""])
        // The file is the recipe's JSON, named by suggestedFileName.
        let shared = try #require(calls[0].files.first)
        #expect(try JSONDecoder().decode(Sharing.Recipe.self, from: shared) == pancakes)
        #expect(calls[0].paths.first?.hasSuffix("/Pancakes.json") == true)
        #expect(calls[2].options["addresses"] == .strings(["grace@example.com"]))
        #expect(calls[2].options["subject"] == .string("Pancakes"))
        #expect(calls[2].options["body"] == .string("Try these on Sunday"))
        // Exported again: the same recipe (JSONEncoder's key order may differ from one export
        // to the next, so the values are compared, not the bytes).
        let attached = try #require(calls[2].files.first)
        #expect(try JSONDecoder().decode(Sharing.Recipe.self, from: attached) == pancakes)
        // The shared files stay for the programs that open them; the cancelled one is gone.
        for call in [calls[0], calls[2]] {
            let path = try #require(call.paths.first)
            #expect(FileManager.default.fileExists(atPath: path))
            try? FileManager.default.removeItem(atPath: URL(fileURLWithPath: path).deletingLastPathComponent().path)
        }
        let cancelled = try #require(calls[1].paths.first)
        #expect(!FileManager.default.fileExists(atPath: cancelled))
    }

    @Test("offer only what may be shared")
    func exportingCondition() async throws {
        #expect(ShareLink(item: Sharing.Note(text: "PIN 1234", isPrivate: true)).isAvailable == false)
        #expect(ShareLink(item: Sharing.Note(text: "Shopping list", isPrivate: false)).isAvailable)
    }

    @Test("handle errors: a portal without Email names what to install")
    func errors() async throws {
        let world = try await World(server: false)
        let portal = try await PortalPeer(address: world.address, interfaces: [PortalPeer.openURI])
        let link = ShareLink(item: Sharing.Recipe(title: "Pancakes", steps: []), address: world.address)

        var messages: [String] = []
        do {
            try await link.share(via: .email())
        } catch let error as ShareError where error.code == .portalMissing {
            messages.append(error.message)
        }
        #expect(messages.count == 1)
        #expect(messages.first?.contains("Install one for your desktop (xdg-desktop-portal-gnome") == true)
        #expect(portal.calls.isEmpty)
    }
}

/// A main-actor model keeping a link, as a toolkit's view model would: it compiles because the
/// link of a `Sendable` item is `Sendable`.
@MainActor
final class RecipeScreen {
    let link: ShareLink<Sharing.Recipe>

    init(recipe: Sharing.Recipe, address: String) {
        link = ShareLink(item: recipe, preview: SharePreview(recipe.title), address: address)
    }

    /// What the Share button's click handler calls.
    func shareClicked() async throws -> ShareOutcome {
        try await link.share()
    }
}

@Suite("Sharing from the main actor")
struct SharingMainActorTests {
    @Test("a main-actor model shares its link")
    @MainActor
    func mainActor() async throws {
        let world = try await World(server: false)
        let portal = try await PortalPeer(address: world.address, answer: .response(1))
        let screen = RecipeScreen(recipe: Sharing.Recipe(title: "Waffles", steps: ["Mix", "Bake"]), address: world.address)

        #expect(try await screen.shareClicked() == .cancelled)
        #expect(portal.calls.first?.paths.first?.hasSuffix("/Waffles.json") == true)
    }
}
