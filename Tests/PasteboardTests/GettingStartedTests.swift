import Foundation
import Observation
import Testing
import TestSupport

@testable import Pasteboard

// The examples of `Pasteboard.docc/GettingStarted.md`, compiled and run against a private bus:
// the same declarations and calls, with `Pasteboard.general` replaced by the world's general
// pasteboard and the video library in a temporary directory. Keep the two in step.

extension UTType {
    static let todo = UTType(exportedAs: "com.example.todo", conformingTo: .json)
    static let profile = UTType(exportedAs: "com.example.profile", conformingTo: .json)
}

/// The article's types, in a namespace of their own.
enum GettingStarted {
    struct Todo: Codable, Equatable, Transferable {
        var text: String
        var isDone: Bool

        static var transferRepresentation: some TransferRepresentation {
            CodableRepresentation(contentType: .todo)
        }
    }

    struct Profile: Codable, Equatable, Transferable {
        var name: String
        var email: String

        static var transferRepresentation: some TransferRepresentation {
            CodableRepresentation(contentType: .profile)  // programs that know profiles
            ProxyRepresentation(exporting: \.name)  // everyone else gets the name
        }
    }

    struct Video: Transferable {
        /// Where received videos are kept (in the article, `~/Videos`).
        static let library = FileManager.default.temporaryDirectory.appendingPathComponent("pbtest-videos-\(UUID().uuidString)", isDirectory: true)

        let file: URL

        static var transferRepresentation: some TransferRepresentation {
            FileRepresentation(contentType: .mpeg4Movie) { video in
                SentTransferredFile(video.file)
            } importing: { received in
                // The file is the importer's: move it where it belongs.
                let destination = library.appendingPathComponent(received.file.lastPathComponent)
                try FileManager.default.moveItem(at: received.file, to: destination)
                return Video(file: destination)
            }
        }
    }

    @MainActor
    @Observable
    final class BirdList {
        static let knownBirds = ["owl", "parrot", "swift", "sparrow", "robin", "bluebird"]

        var birds: [String] = []
        let pasteButton: PasteButton<String>

        /// The article's `PasteButton(payloadType: String.self)` uses `.general` on the session
        /// bus; here it is given the test's pasteboard.
        init(pasteboard: Pasteboard) {
            pasteButton = PasteButton(payloadType: String.self, pasteboard: pasteboard) { values in
                values.filter { BirdList.knownBirds.contains($0) }
            }
        }

        /// What the Paste button's click handler calls.
        @discardableResult
        func paste() async throws -> Bool {
            try await pasteButton.paste { values in
                birds.append(contentsOf: values)
            }
        }
    }
}

@Suite("Getting started")
struct GettingStartedTests {
    @Test("copy and paste text and data")
    func textAndData() async throws {
        let world = try await World()
        let pasteboard = world.pasteboard()
        let mine = try await Pasteboard.withUniqueName(address: world.address)
        #expect(mine.name != pasteboard.name)
        let pngData = Data([0x89, 0x50, 0x4E, 0x47, 0x0D, 0x0A, 0x1A, 0x0A])

        try await pasteboard.clearContents()
        try await pasteboard.setString("Hello")
        try await pasteboard.setData(pngData, forType: .png)
        #expect(try await pasteboard.types == [.utf8PlainText, .png])
        #expect(try await pasteboard.pasteboardItems?.count == 1)
        if try await pasteboard.canReadItem(withDataConformingToTypes: [.png]) {
            let png = try await pasteboard.data(forType: .png)
            #expect(png == pngData)
        }
        // Another object of the name, which has not cleared: its write replaces the contents.
        try await world.pasteboard().setString("<p>Hello</p>", forType: .html)
        let text = try await pasteboard.string(forType: .plainText)
        #expect(text == "<p>Hello</p>")
        let best = try await pasteboard.availableType(from: [.html, .plainText])
        #expect(best == .html)
        for item in try await pasteboard.pasteboardItems ?? [] {
            #expect(item.types == [.html])
            #expect(try await item.data(forType: .utf8PlainText) == nil)
        }
    }

    @Test("a to-do, a profile with a fallback, a video")
    func transferables() async throws {
        let world = try await World()
        let pasteboard = world.pasteboard()

        try await pasteboard.writeObjects([GettingStarted.Todo(text: "Water the plants", isDone: false)])
        let todo = try await pasteboard.loadTransferable(type: GettingStarted.Todo.self)
        #expect(todo == GettingStarted.Todo(text: "Water the plants", isDone: false))
        let pasted = try await world.pbctl("paste", "-t", "com.example.todo")
        #expect(try JSONDecoder().decode(GettingStarted.Todo.self, from: pasted.stdout) == todo)

        let profile = GettingStarted.Profile(name: "Ada Lovelace", email: "ada@example.com")
        try await pasteboard.writeObjects([profile])
        #expect(try await pasteboard.types == [.profile, .utf8PlainText])
        #expect(try await pasteboard.loadTransferable(type: GettingStarted.Profile.self) == profile)
        #expect(try await pasteboard.loadTransferable(type: String.self) == "Ada Lovelace")

        try FileManager.default.createDirectory(at: GettingStarted.Video.library, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: GettingStarted.Video.library) }
        let bytes = randomBytes(1 << 20)
        let source = try temporaryFile(bytes, extension: "mp4")
        defer { try? FileManager.default.removeItem(at: source) }
        try await pasteboard.writeObjects([GettingStarted.Video(file: source)])
        let fractions = Collected<Double>()
        let load = Task {
            try await pasteboard.loadTransferable(type: GettingStarted.Video.self) { fraction in
                fractions.append(fraction)
            }
        }
        let video = try #require(try await load.value)
        #expect(video.file.deletingLastPathComponent().standardizedFileURL == GettingStarted.Video.library.standardizedFileURL)
        #expect(try Data(contentsOf: video.file) == bytes)
        #expect(fractions.all.last == 1)
    }

    @Test("a bird list with a Paste button")
    @MainActor
    func birdList() async throws {
        let world = try await World()
        let list = GettingStarted.BirdList(pasteboard: world.pasteboard())

        expectSuccess(try await world.pbctl("copy", input: "pigeon"))
        #expect(await eventually { list.pasteButton.isEnabled })
        #expect(try await !list.paste())
        #expect(list.birds == [])

        expectSuccess(try await world.pbctl("copy", input: "owl"))
        #expect(try await list.paste())
        #expect(list.birds == ["owl"])
    }

    @Test("handle errors")
    func errors() async throws {
        let world = try await World(limits: ["max-item-bytes=4"])
        let pasteboard = world.pasteboard()

        var tooLarge = false
        do {
            try await pasteboard.setString("Hello")
        } catch let error as PasteboardError where error.code == .tooLarge {
            tooLarge = !error.message.isEmpty
        }
        #expect(tooLarge)

        let nowhere = World.noServerPasteboard()
        var unreachable = false
        do {
            try await nowhere.setString("Hello")
        } catch let error as PasteboardConnectionError {
            unreachable = error.description.contains(try #require(nowhere.address))
        }
        #expect(unreachable)
    }
}
