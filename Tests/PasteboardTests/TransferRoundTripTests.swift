import Foundation
import Testing
import TestSupport

@testable import Pasteboard

/// `Transferable` values through a real server: written by one `Pasteboard` and read by
/// another, and written or read by `pbctl`, another process with a connection of its own.
@Suite("Transfer round trips")
struct TransferRoundTripTests {
    // MARK: CodableRepresentation

    @Test("a Todo with a CodableRepresentation round-trips between two pasteboards")
    func todo() async throws {
        let world = try await World()
        let writer = world.pasteboard()
        let reader = world.pasteboard()
        let todo = Todo(text: "Water the plants", isDone: false)
        #expect(try await writer.writeObjects([todo]))
        #expect(try await reader.types == [.e2eTodo])
        #expect(try await reader.canReadItem(withDataConformingToTypes: [.e2eTodo]))
        #expect(try await reader.loadTransferable(type: Todo.self) == todo)

        // The bytes are the JSON of the value.
        let json = try #require(try await reader.data(forType: .e2eTodo))
        #expect(try JSONDecoder().decode(Todo.self, from: json) == todo)

        // The declared type conforms to JSON, which is text: a String reader gets the JSON.
        #expect(try await reader.loadTransferable(type: String.self) == String(decoding: json, as: UTF8.self))
        // A type that does not know to-dos reads nothing.
        #expect(try await reader.loadTransferable(type: Profile.self) == nil)
        #expect(try await reader.loadTransferable(type: Rows.self) == nil)
    }

    @Test("a Todo crosses processes: written here and pasted by pbctl, copied by pbctl and read here")
    func todoAcrossProcesses() async throws {
        let world = try await World()
        let pasteboard = world.pasteboard()
        let todo = Todo(text: "Feed the cat", isDone: true)
        try await pasteboard.writeObjects([todo])

        let pasted = try await world.pbctl("paste", "-t", UTType.e2eTodo.identifier)
        expectSuccess(pasted)
        #expect(try JSONDecoder().decode(Todo.self, from: pasted.stdout) == todo)

        let other = Todo(text: "Call home", isDone: false)
        expectSuccess(try await world.pbctl("copy", "-t", UTType.e2eTodo.identifier, input: try JSONEncoder().encode(other)))
        #expect(try await pasteboard.types == [.e2eTodo])
        #expect(try await pasteboard.loadTransferable(type: Todo.self) == other)
    }

    // MARK: Proxies and their order

    @Test("a Profile offers its own type first and text second; each reader gets what it asks for")
    func profile() async throws {
        let world = try await World()
        let profile = Profile(name: "Ada Lovelace", email: "ada@example.com")
        try await world.pasteboard().writeObjects([profile])

        let reader = world.pasteboard()
        #expect(try await reader.types == [.e2eProfile, .utf8PlainText])
        #expect(try await reader.loadTransferable(type: Profile.self) == profile)
        #expect(try await reader.loadTransferable(type: String.self) == "Ada Lovelace")
        #expect(try await reader.string() == "Ada Lovelace")

        // A text-only program gets the name; one that knows profiles gets the profile.
        let text = try await world.pbctl("paste")
        expectSuccess(text)
        #expect(text.out == "Ada Lovelace")
        let rich = try await world.pbctl("paste", "-t", UTType.e2eProfile.identifier)
        expectSuccess(rich)
        #expect(try JSONDecoder().decode(Profile.self, from: rich.stdout) == profile)
    }

    @Test("proxy first degrades readers that know both; richest first does not")
    func proxyOrder() async throws {
        let world = try await World()
        let pasteboard = world.pasteboard()
        let profile = Profile(name: "Grace Hopper", email: "grace@example.com")

        // The mistake: the text proxy listed before the rich representation.
        try await pasteboard.writeObjects([TextFirstProfile(profile)])
        #expect(try await pasteboard.types == [.utf8PlainText, .e2eProfile], "written in declaration order")
        let degraded = try #require(try await pasteboard.loadTransferable(type: TextFirstProfile.self))
        #expect(degraded.profile == Profile(name: "Grace Hopper", email: nil), "the receiver got the text, not the profile")
        // So does a reader declared the same way, even when another program wrote the rich type first.
        try await world.pasteboard().writeObjects([RichFirstProfile(profile)])
        #expect(try await pasteboard.types == [.e2eProfile, .utf8PlainText])
        #expect(try await pasteboard.loadTransferable(type: TextFirstProfile.self)?.profile == Profile(name: "Grace Hopper", email: nil))

        // Richest first: the same reader gets the whole profile, whichever order the writer used.
        #expect(try await pasteboard.loadTransferable(type: RichFirstProfile.self)?.profile == profile)
        try await pasteboard.writeObjects([TextFirstProfile(profile)])
        #expect(try await pasteboard.loadTransferable(type: RichFirstProfile.self)?.profile == profile)
    }

    // MARK: FileRepresentation

    @Test("a video with a FileRepresentation arrives as a file of the caller's own with the exact bytes")
    func video() async throws {
        let world = try await World()
        let bytes = randomBytes(3 << 20 + 12_345)
        let source = try temporaryFile(bytes, extension: "mp4")
        defer { try? FileManager.default.removeItem(at: source) }
        try await world.pasteboard().writeObjects([Movie(file: source)])
        #expect(try await world.pasteboard().types == [.mpeg4Movie])
        // The server keeps its own copy: the sender's file may go.
        try FileManager.default.removeItem(at: source)

        let received = try #require(try await world.pasteboard().loadTransferable(type: Movie.self))
        defer { try? FileManager.default.removeItem(at: received.file) }
        #expect(received.file != source)
        #expect(received.wasOriginal == false)
        #expect(received.file.pathExtension == "mp4")
        let attributes = try FileManager.default.attributesOfItem(atPath: received.file.path)
        #expect((attributes[.ownerAccountID] as? NSNumber)?.uint32Value == getuid())
        #expect((attributes[.size] as? NSNumber)?.intValue == bytes.count)
        #expect(try Data(contentsOf: received.file) == bytes)
        // The caller owns it: it may write to it and delete it.
        #expect(FileManager.default.isWritableFile(atPath: received.file.path))

        // The same bytes reach another process.
        let pasted = try await world.pbctl("paste", "-t", "video/mp4")
        #expect(pasted.status == 0)
        #expect(pasted.stdout == bytes)
    }

    @Test("a file copied by another process is received as a file")
    func videoFromAnotherProcess() async throws {
        let world = try await World()
        let bytes = randomBytes(2 << 20)
        let source = try temporaryFile(bytes, extension: "mp4")
        defer { try? FileManager.default.removeItem(at: source) }
        expectSuccess(try await world.pbctl("copy", source.path, "-t", "video/mp4"))

        let received = try #require(try await world.pasteboard().loadTransferable(type: Movie.self))
        defer { try? FileManager.default.removeItem(at: received.file) }
        #expect(received.file.standardizedFileURL != source.standardizedFileURL)
        #expect(try Data(contentsOf: received.file) == bytes)
        // Bytes can be read as Data too.
        #expect(try await world.pasteboard().data(forType: .mpeg4Movie) == bytes)
    }

    // MARK: Custom types

    @Test("a type declared with UTType(exportedAs:conformingTo:) round-trips, here and through pbctl -t")
    func customType() async throws {
        let world = try await World()
        let pasteboard = world.pasteboard()
        #expect(UTType.e2eNote.conforms(to: .plainText))
        #expect(UTType.e2eNote.pasteboardType == "com.example.tests.e2e.note")

        let note = Note(body: "remember the milk")
        try await pasteboard.writeObjects([note])
        #expect(try await pasteboard.types == [.e2eNote])
        #expect(try await world.pasteboard().loadTransferable(type: Note.self) == note)
        let pasted = try await world.pbctl("paste", "-t", "com.example.tests.e2e.note")
        expectSuccess(pasted)
        #expect(pasted.out == "NOTE:remember the milk")

        expectSuccess(try await world.pbctl("copy", "-t", "com.example.tests.e2e.note", input: "NOTE:from pbctl"))
        #expect(try await pasteboard.loadTransferable(type: Note.self) == Note(body: "from pbctl"))
        // Bad bytes fail the import with the importer's error, not nil.
        expectSuccess(try await world.pbctl("copy", "-t", "com.example.tests.e2e.note", input: "not a note"))
        await #expect(throws: TransferError.self) { try await pasteboard.loadTransferable(type: Note.self) }
    }

    // MARK: Built-in types

    @Test("String, Data, URL and AttributedString round-trip")
    func builtIns() async throws {
        let world = try await World()
        let writer = world.pasteboard()
        let reader = world.pasteboard()

        try await writer.writeObjects(["héllo"])
        #expect(try await reader.loadTransferable(type: String.self) == "héllo")

        let bytes = Data([0, 1, 2, 254, 255])
        try await writer.writeObjects([bytes])
        #expect(try await reader.types == [.data])
        #expect(try await reader.loadTransferable(type: Data.self) == bytes)

        let url = URL(string: "https://example.com/a?b=c")!
        try await writer.writeObjects([url])
        #expect(try await reader.types == [.url, .utf8PlainText])
        #expect(try await reader.loadTransferable(type: URL.self) == url)
        #expect(try await reader.loadTransferable(type: String.self) == url.absoluteString)

        let file = URL(fileURLWithPath: "/example/some file.txt")
        try await writer.writeObjects([file])
        #expect(try await reader.loadTransferable(type: URL.self) == file)

        var attributed = AttributedString("Read ")
        var link = AttributedString("this")
        link.link = URL(string: "https://example.com")
        attributed.append(link)
        try await writer.writeObjects([attributed])
        #expect(try await reader.types == [.attributedString, .utf8PlainText])
        let back = try #require(try await reader.loadTransferable(type: AttributedString.self))
        #expect(back == attributed)
        #expect(try await reader.loadTransferable(type: String.self) == "Read this")

        // Text from another process reads as an AttributedString without attributes.
        expectSuccess(try await world.pbctl("copy", input: "plain"))
        #expect(try await reader.loadTransferable(type: AttributedString.self) == AttributedString("plain"))
    }

    // MARK: Representation kinds and modifiers

    @Test("DataRepresentation, two-way ProxyRepresentation and exportingCondition")
    func dataAndProxy() async throws {
        let world = try await World()
        let pasteboard = world.pasteboard()

        // With CSV allowed: CSV first, then the archive's own type.
        let archive = Rows(rows: ["a,1", "b,2"], supportsCSV: true)
        try await pasteboard.writeObjects([archive])
        #expect(try await pasteboard.types == [.commaSeparatedText, .e2eRows])
        #expect(try await pasteboard.string(forType: .commaSeparatedText) == "a,1\nb,2")
        #expect(try await pasteboard.loadTransferable(type: Rows.self)?.rows == archive.rows)

        // The condition false: the CSV representation is not offered at all.
        try await pasteboard.writeObjects([Rows(rows: ["x"], supportsCSV: false)])
        #expect(try await pasteboard.types == [.e2eRows])
        #expect(try await pasteboard.loadTransferable(type: Rows.self)?.rows == ["x"])

        // A two-way proxy to String reads text written by anyone.
        expectSuccess(try await world.pbctl("copy", input: "Tag: urgent"))
        #expect(try await pasteboard.loadTransferable(type: Tag.self) == Tag(label: "urgent"))
        try await pasteboard.writeObjects([Tag(label: "later")])
        #expect(try await pasteboard.types == [.utf8PlainText])
        let pasted = try await world.pbctl("paste")
        #expect(pasted.out == "Tag: later")
    }

    @Test("visibility(.ownProcess) writes owner-only: this process reads it, another does not")
    func ownProcess() async throws {
        let world = try await World()
        let secret = Secret(value: "hunter2")
        try await world.pasteboard().writeObjects([secret])
        #expect(try await world.pasteboard().loadTransferable(type: Secret.self) == secret)

        let other = try await world.pbctl("paste", "-t", UTType.e2eSecret.identifier)
        #expect(other.status == 65, "\(other)")
        #expect(other.stdout.isEmpty)
        #expect(other.err.contains("owner-only"))
        // Its types stay listed for everyone.
        #expect(try await world.pbctl("types").out == "com.example.tests.e2e.secret\n")
    }

    @Test("several values are several items; loadTransferables reads every one that matches")
    func severalItems() async throws {
        let world = try await World()
        let pasteboard = world.pasteboard()
        let todos = [Todo(text: "one", isDone: false), Todo(text: "two", isDone: true)]
        try await pasteboard.writeObjects([todos[0], "between", todos[1]])
        #expect(try await pasteboard.pasteboardItems?.count == 3)
        #expect(try await pasteboard.loadTransferables(type: Todo.self) == todos)
        #expect(try await pasteboard.loadTransferables(type: Profile.self) == [])
        #expect(try await pasteboard.loadTransferables(type: Note.self) == [])
        #expect(try await pasteboard.loadTransferable(type: Todo.self) == todos[0])
        #expect(try await pasteboard.loadTransferable(type: Todo.self, progress: nil) == todos[0])
        // A to-do's JSON is text: String reads every item.
        #expect(try await pasteboard.loadTransferables(type: String.self).count == 3)
        #expect(try await pasteboard.loadTransferables(type: String.self)[1] == "between")
        let items = try #require(try await pasteboard.pasteboardItems)
        #expect(try await items[2].loadTransferable(type: Todo.self) == todos[1])
        #expect(try await items[1].loadTransferable(type: Todo.self) == nil)

        try await pasteboard.clearContents()
        #expect(try await pasteboard.loadTransferable(type: Todo.self) == nil)
        #expect(try await pasteboard.loadTransferables(type: Todo.self) == [])
    }

    @Test("copy writes values in one change; cut removes them from the source only once written")
    func copyAndCut() async throws {
        let world = try await World()
        let pasteboard = world.pasteboard()
        #expect(try await pasteboard.copy(["owl", "swift"]) == 1)
        #expect(try await pasteboard.loadTransferables(type: String.self) == ["owl", "swift"])

        var birds = ["robin", "sparrow"]
        let count = try await pasteboard.cut(birds) {
            // Already on the pasteboard when the source lets go of them.
            let onPasteboard = try await pasteboard.loadTransferables(type: String.self)
            #expect(onPasteboard == ["robin", "sparrow"])
            birds.removeAll()
        }
        #expect(count == 2)
        #expect(birds.isEmpty)

        // When the write fails, the source keeps its values.
        let nowhere = World.noServerPasteboard()
        var kept = ["bluebird"]
        await #expect(throws: PasteboardConnectionError.self) {
            try await nowhere.cut(kept) { kept.removeAll() }
        }
        #expect(kept == ["bluebird"])
    }
}

// MARK: - Types for these tests

extension UTType {
    static let e2eTodo = UTType(exportedAs: "com.example.tests.e2e.todo", conformingTo: .json)
    static let e2eProfile = UTType(exportedAs: "com.example.tests.e2e.profile", conformingTo: .json)
    static let e2eNote = UTType(exportedAs: "com.example.tests.e2e.note", conformingTo: .plainText)
    static let e2eRows = UTType(exportedAs: "com.example.tests.e2e.rows")
    static let e2eSecret = UTType(exportedAs: "com.example.tests.e2e.secret")
}

extension TransferRoundTripTests {
    /// The reference's to-do: one `CodableRepresentation`.
    struct Todo: Codable, Equatable, Transferable {
        var text: String
        var isDone: Bool

        static var transferRepresentation: some TransferRepresentation {
            CodableRepresentation(contentType: .e2eTodo)
        }
    }

    /// The reference's profile: its own type first, then its name as text.
    struct Profile: Codable, Equatable, Transferable {
        var name: String
        var email: String?

        static var transferRepresentation: some TransferRepresentation {
            CodableRepresentation(contentType: .e2eProfile)
            ProxyRepresentation(exporting: \.name)
        }
    }

    /// The common mistake: a two-way text proxy listed before the rich type.
    struct TextFirstProfile: Transferable {
        var profile: Profile
        init(_ profile: Profile) { self.profile = profile }

        static var transferRepresentation: some TransferRepresentation {
            ProxyRepresentation { $0.profile.name } importing: { (name: String) in TextFirstProfile(Profile(name: name)) }
            ProxyRepresentation { $0.profile } importing: { (profile: Profile) in TextFirstProfile(profile) }
        }
    }

    /// The same representations, richest first.
    struct RichFirstProfile: Transferable {
        var profile: Profile
        init(_ profile: Profile) { self.profile = profile }

        static var transferRepresentation: some TransferRepresentation {
            ProxyRepresentation { $0.profile } importing: { (profile: Profile) in RichFirstProfile(profile) }
            ProxyRepresentation { $0.profile.name } importing: { (name: String) in RichFirstProfile(Profile(name: name)) }
        }
    }

    /// The reference's video: a `FileRepresentation` whose importer keeps the file it is given.
    struct Movie: Transferable {
        var file: URL
        var wasOriginal: Bool? = nil

        static var transferRepresentation: some TransferRepresentation {
            FileRepresentation(contentType: .mpeg4Movie) { movie in
                SentTransferredFile(movie.file)
            } importing: { received in
                Movie(file: received.file, wasOriginal: received.isOriginalFile)
            }
        }
    }

    /// A format of its own, under a declared type that conforms to plain text.
    struct Note: Equatable, Transferable {
        var body: String

        static var transferRepresentation: some TransferRepresentation {
            DataRepresentation(contentType: .e2eNote) { note in
                Data("NOTE:\(note.body)".utf8)
            } importing: { data in
                let text = String(decoding: data, as: UTF8.self)
                guard text.hasPrefix("NOTE:") else { throw TransferError(.undecodable, "not a note: \(text)") }
                return Note(body: String(text.dropFirst(5)))
            }
        }
    }

    /// CSV when allowed, then a type of its own.
    struct Rows: Transferable {
        var rows: [String]
        var supportsCSV: Bool

        static var transferRepresentation: some TransferRepresentation {
            DataRepresentation(contentType: .commaSeparatedText) { archive in
                Data(archive.rows.joined(separator: "\n").utf8)
            } importing: { data in
                Rows(rows: String(decoding: data, as: UTF8.self).components(separatedBy: "\n"), supportsCSV: true)
            }
            .exportingCondition { $0.supportsCSV }
            DataRepresentation(contentType: .e2eRows) { archive in
                try JSONEncoder().encode(archive.rows)
            } importing: { data in
                Rows(rows: try JSONDecoder().decode([String].self, from: data), supportsCSV: false)
            }
        }
    }

    /// Text both ways, through a two-way proxy.
    struct Tag: Equatable, Transferable {
        var label: String

        static var transferRepresentation: some TransferRepresentation {
            ProxyRepresentation { "Tag: \($0.label)" } importing: { (text: String) in
                Tag(label: text.hasPrefix("Tag: ") ? String(text.dropFirst(5)) : text)
            }
        }
    }

    /// Readable only by the process that wrote it.
    struct Secret: Codable, Equatable, Transferable {
        var value: String

        static var transferRepresentation: some TransferRepresentation {
            CodableRepresentation(contentType: .e2eSecret)
                .visibility(.ownProcess)
        }
    }
}
