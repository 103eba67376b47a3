import Foundation
import Testing
import TestSupport

@testable import Pasteboard

/// The `PasteButton` model: enablement that follows the pasteboard live, from the types alone,
/// and `pasteDestination(for:action:validator:)` semantics for pasting.
@Suite("PasteButton")
@MainActor
struct PasteButtonTests {
    static let knownBirds = ["owl", "parrot", "swift", "sparrow", "robin", "bluebird"]

    // MARK: Enablement

    @Test("isEnabled follows another process's copies of matching and non-matching types")
    func followsAnotherProcess() async throws {
        let world = try await World()
        let button = PasteButton(payloadType: String.self, pasteboard: world.pasteboard())
        #expect(!button.isEnabled)
        #expect(button.pasteboard.name == .general)
        #expect(button.pasteboard.address == world.address)

        expectSuccess(try await world.pbctl("copy", input: "a bird"))
        #expect(await eventually { button.isEnabled }, "text copied: enabled")

        expectSuccess(try await world.pbctl("copy", "-t", "image/png", input: Data([0x89, 0x50, 0x4E, 0x47])))
        #expect(await eventually { !button.isEnabled }, "an image copied: disabled")

        expectSuccess(try await world.pbctl("copy", input: "another bird"))
        #expect(await eventually { button.isEnabled }, "text again: enabled")

        expectSuccess(try await world.pbctl("copy", "-t", "application/zip", input: Data([0x50, 0x4B])))
        #expect(await eventually { !button.isEnabled })
        expectSuccess(try await world.pbctl("copy", "-t", "text/html", input: "<i>html is text</i>"))
        #expect(await eventually { button.isEnabled }, "HTML conforms to text")

        expectSuccess(try await world.pbctl("clear"))
        #expect(await eventually { !button.isEnabled }, "cleared: disabled")
    }

    @Test("isEnabled is decided from types alone: no data is read", .enabled(if: CallMonitor.isAvailable))
    func readsNoData() async throws {
        let world = try await World()
        let pasteboard = world.pasteboard()
        let monitor = try await CallMonitor(world, probe: pasteboard)
        let button = PasteButton(payloadType: String.self, pasteboard: pasteboard)
        let birds = PasteButton(payloadType: Bird.self, pasteboard: pasteboard)

        expectSuccess(try await world.pbctl("copy", input: "owl"))
        #expect(await eventually { button.isEnabled })
        expectSuccess(try await world.pbctl("copy", "-t", UTType.e2eBird.identifier, input: "{\"name\":\"owl\"}"))
        #expect(await eventually { birds.isEnabled })
        expectSuccess(try await world.pbctl("copy", "-t", "image/png", input: Data([0x89, 0x50])))
        #expect(await eventually { !button.isEnabled && !birds.isEnabled })
        // A concealed write's signal carries no types: the button asks, still without reading.
        expectSuccess(try await world.pbctl("copy", "--concealed", input: "secret"))
        #expect(await eventually { button.isEnabled })

        // A marker call: once the monitor shows it, it has shown every call made before it.
        let markers = monitor.members.filter { $0 == "ChangeCount" }.count
        _ = try await pasteboard.changeCount
        #expect(await eventually { monitor.members.filter { $0 == "ChangeCount" }.count > markers }, "the monitor never showed the marker")

        let reads: Set<String> = ["ReadData", "ReadBest", "ReadFd", "Items"]
        #expect(monitor.members.filter(reads.contains) == [], "\(monitor.members)")
        #expect(monitor.members.contains("WriteItems"), "the monitor saw pbctl's writes")
        // Pasting is what reads.
        #expect(try await button.paste { _ in })
        #expect(await eventually { monitor.members.contains("ReadData") })
    }

    @Test("a button made when the pasteboard already holds a match starts enabled")
    func initialState() async throws {
        let world = try await World()
        expectSuccess(try await world.pbctl("copy", input: "already here"))
        let button = PasteButton(payloadType: String.self, pasteboard: world.pasteboard())
        #expect(await eventually { button.isEnabled })

        let images = PasteButton(payloadType: Bird.self, pasteboard: world.pasteboard())
        await images.refresh()
        #expect(!images.isEnabled)
    }

    @Test("a write made just after the button is made is not missed")
    func writeRightAfterCreation() async throws {
        let world = try await World()
        for round in 0..<5 {
            let pasteboard = world.pasteboard(Pasteboard.Name("round-\(round)"))
            let button = PasteButton(payloadType: String.self, pasteboard: pasteboard)
            try await pasteboard.setString("at once")
            #expect(await eventually { button.isEnabled }, "round \(round)")
        }
    }

    @Test("a custom payload type is enabled by its own type only")
    func customType() async throws {
        let world = try await World()
        let button = PasteButton(payloadType: Bird.self, pasteboard: world.pasteboard())
        expectSuccess(try await world.pbctl("copy", "-t", UTType.e2eBird.identifier, input: "{\"name\":\"robin\"}"))
        #expect(await eventually { button.isEnabled })
        expectSuccess(try await world.pbctl("copy", input: "robin"))
        #expect(await eventually { !button.isEnabled }, "text is not a bird")

        try await world.pasteboard().writeObjects([Bird(name: "swift")])
        #expect(await eventually { button.isEnabled })
        var pasted: [Bird] = []
        #expect(try await button.paste { pasted = $0 })
        #expect(pasted == [Bird(name: "swift")])
    }

    @Test("refresh reads the state again")
    func refresh() async throws {
        let world = try await World()
        let button = PasteButton(payloadType: String.self, pasteboard: world.pasteboard())
        try await world.pasteboard().setString("x")
        await button.refresh()
        #expect(button.isEnabled)
    }

    @Test("a released button is freed, and stops following")
    func release() async throws {
        let world = try await World()
        weak var released: PasteButton<String>?
        do {
            let button = PasteButton(payloadType: String.self, pasteboard: world.pasteboard())
            released = button
            try await world.pasteboard().setString("x")
            #expect(await eventually { button.isEnabled })
        }
        #expect(released == nil)
        // The pasteboard goes on without it.
        try await world.pasteboard().setString("y")
        #expect(try await world.pasteboard().string() == "y")
    }

    // MARK: Pasting

    @Test("the validator filters what the action receives")
    func validator() async throws {
        let world = try await World()
        let pasteboard = world.pasteboard()
        var validated: [[String]] = []
        let button = PasteButton(payloadType: String.self, pasteboard: pasteboard) { values in
            validated.append(values)
            return values.filter { Self.knownBirds.contains($0) }
        }
        try await pasteboard.writeObjects(["owl", "pigeon", "swift"])
        var birds: [String] = []
        #expect(try await button.paste { birds.append(contentsOf: $0) })
        #expect(birds == ["owl", "swift"])
        #expect(validated == [["owl", "pigeon", "swift"]], "the validator sees every item that loads")

        // Written by another process.
        expectSuccess(try await world.pbctl("copy", input: "robin"))
        #expect(try await button.paste { birds.append(contentsOf: $0) })
        #expect(birds == ["owl", "swift", "robin"])
    }

    @Test("when the validator leaves nothing, the action is not called")
    func emptyAfterValidation() async throws {
        let world = try await World()
        let pasteboard = world.pasteboard()
        let button = PasteButton(payloadType: String.self, pasteboard: pasteboard) { values in
            values.filter { Self.knownBirds.contains($0) }
        }
        try await pasteboard.writeObjects(["pigeon", "dodo"])
        #expect(await eventually { button.isEnabled }, "enablement does not validate")
        var called = false
        #expect(try await !button.paste { _ in called = true })
        #expect(!called)

        // Nothing the payload type reads: no call either.
        expectSuccess(try await world.pbctl("copy", "-t", "image/png", input: Data([0x89, 0x50])))
        #expect(try await !button.paste { _ in called = true })
        try await pasteboard.clearContents()
        #expect(try await !button.paste { _ in called = true })
        #expect(!called)
    }

    @Test("the default validator passes everything; the action's error reaches the caller")
    func defaults() async throws {
        let world = try await World()
        let pasteboard = world.pasteboard()
        let button = PasteButton(payloadType: String.self, pasteboard: pasteboard)
        try await pasteboard.writeObjects(["pigeon", "dodo"])
        var received: [String] = []
        #expect(try await button.paste { received = $0 })
        #expect(received == ["pigeon", "dodo"])

        struct Refused: Error {}
        await #expect(throws: Refused.self) { try await button.paste { _ in throw Refused() } }
    }

    @Test("pasting without a server throws PasteboardConnectionError")
    func noServer() async throws {
        let world = try await World(server: false)
        let button = PasteButton(payloadType: String.self, pasteboard: world.pasteboard())
        await #expect(throws: PasteboardConnectionError.self) { try await button.paste { _ in } }
        #expect(!button.isEnabled)
    }
}

// MARK: - Types for these tests

extension UTType {
    static let e2eBird = UTType(exportedAs: "com.example.tests.e2e.bird", conformingTo: .json)
}

/// A bird, as JSON under a type of its own.
struct Bird: Codable, Equatable, Transferable {
    var name: String

    static var transferRepresentation: some TransferRepresentation {
        CodableRepresentation(contentType: .e2eBird)
    }
}
