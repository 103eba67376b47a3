import Foundation
import Synchronization
import Testing

@testable import Pasteboard

@Suite("Transferable")
struct TransferableTests {
    // MARK: Codable

    @Test("a Codable value goes out as JSON and comes back")
    func codableRoundTrip() async throws {
        let profile = Profile(name: "Ada", age: 36)
        let written = try await item(profile)
        #expect(written.map(\.type) == ["com.example.tests.transfer.profile", "text/plain;charset=utf-8"])
        let json = try JSONDecoder().decode([String: AnyCodableValue].self, from: written[0].data)
        #expect(json["name"] == .string("Ada"))
        #expect(String(decoding: written[1].data, as: UTF8.self) == "Ada")
        #expect(try await read(Profile.self, from: written) == profile)
    }

    @Test("a CodableRepresentation takes other coders")
    func propertyList() async throws {
        struct Setting: Codable, Equatable, Transferable {
            var key: String
            static var transferRepresentation: some TransferRepresentation {
                let encoder = PropertyListEncoder()
                encoder.outputFormat = .xml
                return CodableRepresentation(for: Setting.self, contentType: .xml, encoder: encoder, decoder: PropertyListDecoder())
            }
        }
        let written = try await item(Setting(key: "k"))
        #expect(written.map(\.type) == ["application/xml"])
        #expect(String(decoding: written[0].data, as: UTF8.self).contains("<plist"))
        #expect(try await read(Setting.self, from: written) == Setting(key: "k"))
    }

    @Test("bad data fails the import with the decoder's error")
    func badCodable() async throws {
        await #expect(throws: DecodingError.self) {
            try await read(Profile.self, from: [("com.example.tests.transfer.profile", Data("{".utf8))])
        }
    }

    // MARK: Proxies and order

    @Test("a one-way proxy only exports")
    func oneWayProxy() async throws {
        #expect(Profile.importableContentTypes == [.testProfile])
        #expect(try await read(Profile.self, from: [("text/plain;charset=utf-8", Data("Ada".utf8))]) == nil)
        let entries = Profile.transferEntries
        #expect(entries.map(\.contentType) == [.testProfile, .utf8PlainText])
        #expect(entries[1].import == nil)
    }

    @Test("a two-way proxy also imports, through every importer of the other type")
    func twoWayProxy() async throws {
        #expect(TextFirstProfile.importableContentTypes == [.utf8PlainText, .utf16PlainText, .plainText, .text, .testProfile])
        let fromHTML = try await read(TextFirstProfile.self, from: [("text/html", Data("<b>Bo</b>".utf8))])
        #expect(fromHTML == TextFirstProfile(name: "<b>Bo</b>", age: 0))
    }

    @Test("a ProxyRepresentation listed first degrades receivers")
    func proxyFirstDegrades() async throws {
        let written = try await item(TextFirstProfile(name: "Ada", age: 36))
        // Text is offered first…
        #expect(written.map(\.type) == ["text/plain;charset=utf-8", "com.example.tests.transfer.profile"])
        // …and read first: a reader that can import both the profile and text picks text,
        // and loses the age.
        #expect(try await read(TextFirstProfile.self, from: written) == TextFirstProfile(name: "Ada", age: 0))

        // Listed richest first, the same representations keep everything.
        let rich = RichFirstProfile(name: "Ada", age: 36)
        let richItem = try await item(rich)
        #expect(richItem.map(\.type) == ["com.example.tests.transfer.profile", "text/plain;charset=utf-8"])
        #expect(try await read(RichFirstProfile.self, from: richItem) == rich)
        #expect(try await read(RichFirstProfile.self, from: written) == rich)
        // …while text alone still reads.
        #expect(try await read(RichFirstProfile.self, from: [written[0]]) == RichFirstProfile(name: "Ada", age: 0))
    }

    @Test("import-only proxies read a value from another type")
    func importOnlyProxy() async throws {
        enum Droppable: Transferable, Equatable {
            case text(String)
            case link(URL)
            static var transferRepresentation: some TransferRepresentation {
                ProxyRepresentation { (url: URL) in Droppable.link(url) }
                ProxyRepresentation { (text: String) in Droppable.text(text) }
            }
        }
        #expect(try await exportRepresentations(of: Droppable.text("x")).isEmpty)
        #expect(try await read(Droppable.self, from: [("text/plain", Data("hi".utf8))]) == .text("hi"))
        let link = try await read(Droppable.self, from: [("text/uri-list", Data("https://a.example\r\n".utf8))])
        #expect(link == .link(URL(string: "https://a.example")!))
    }

    @Test("proxies that lead back to the type contribute nothing")
    func proxyCycle() async throws {
        // A offers JSON and, through B, HTML; B's proxy back to A adds nothing.
        #expect(CycleA.transferEntries.map(\.contentType) == [.json, .html])
        #expect(CycleB.transferEntries.map(\.contentType) == [.html, .json])
        #expect(try await item(CycleA(value: "a")).map(\.type) == ["application/json", "text/html"])
    }

    // MARK: Data representations

    @Test("export-only and import-only data representations")
    func dataOneWay() async throws {
        struct Picture: Transferable, Equatable {
            var bytes: Data
            static var transferRepresentation: some TransferRepresentation {
                DataRepresentation(exportedContentType: .png) { picture in picture.bytes }
                DataRepresentation(importedContentType: .jpeg) { data in Picture(bytes: data) }
            }
        }
        let picture = Picture(bytes: Data([1, 2, 3]))
        #expect(try await item(picture).map(\.type) == ["image/png"])
        #expect(Picture.importableContentTypes == [.jpeg])
        #expect(try await read(Picture.self, from: [("image/png", Data([1]))]) == nil)
        #expect(try await read(Picture.self, from: [("image/jpeg", Data([9]))]) == Picture(bytes: Data([9])))
    }

    @Test("a data importer given a file reads it")
    func dataImporterReadsFile() async throws {
        let directory = try temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let file = directory.appendingPathComponent("in.txt")
        try Data("from a file".utf8).write(to: file)
        let entry = try #require(String.transferEntries.first)
        let value = try await entry.import!(.file(file))
        #expect(value == "from a file")
        #expect(FileManager.default.fileExists(atPath: file.path))
    }

    // MARK: Files

    @Test("a FileRepresentation exports its file and imports into a file of the importer's own")
    func fileRoundTrip() async throws {
        let directory = try temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let original = directory.appendingPathComponent("clip.mp4")
        try Data("movie bytes".utf8).write(to: original)

        let exported = try await exportRepresentations(of: Video(file: original))
        #expect(exported.count == 1)
        #expect(exported[0].contentType == .mpeg4Movie)
        guard case .file(let sent) = exported[0].content else {
            Issue.record("expected a file")
            return
        }
        #expect(sent == original)
        #expect(Video.transferEntries[0].prefersFile)

        // Given bytes, the importer gets a new temporary file holding them.
        let fromData = try await read(Video.self, from: [("video/mp4", Data("movie bytes".utf8))])
        let received = try #require(fromData)
        #expect(received.file != original)
        #expect(received.file.pathExtension == "mp4")
        #expect(received.wasOriginal == false)
        #expect(try Data(contentsOf: received.file) == Data("movie bytes".utf8))
        try? FileManager.default.removeItem(at: received.file)

        // Given a file, the importer gets that file.
        let copy = directory.appendingPathComponent("copy.mp4")
        try FileManager.default.copyItem(at: original, to: copy)
        let fromFile = try await Video.transferEntries[0].import!(.file(copy))
        #expect(fromFile.file == copy)
    }

    /// Code written for Apple platforms compiles as written: the open-in-place arguments take
    /// CoreTransferable's labels (recorded, while receivers here always get a file of their own).
    @Test("FileRepresentation takes Apple's open-in-place labels")
    func openInPlaceLabels() async throws {
        struct Clip: Transferable {
            var file: URL
            static var transferRepresentation: some TransferRepresentation {
                FileRepresentation(contentType: .mpeg4Movie, shouldAttemptToOpenInPlace: true) { clip in
                    SentTransferredFile(clip.file)
                } importing: { received in
                    Clip(file: received.file)
                }
                FileRepresentation(exportedContentType: .movie, shouldAllowToOpenInPlace: true) { clip in SentTransferredFile(clip.file) }
                FileRepresentation(importedContentType: .quickTimeMovie, shouldAttemptToOpenInPlace: true) { received in Clip(file: received.file) }
            }
        }
        let imported = try #require(try await read(Clip.self, from: [("video/quicktime", Data("mov".utf8))]))
        #expect(try Data(contentsOf: imported.file) == Data("mov".utf8))
        try? FileManager.default.removeItem(at: imported.file)
        #expect(Clip.transferEntries.map(\.contentType) == [.mpeg4Movie, .movie, .quickTimeMovie])
    }

    @Test("importValue hands a read file to a file importer, and deletes it otherwise")
    func importValueFiles() async throws {
        let directory = try temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }

        let movie = directory.appendingPathComponent("read.mp4")
        try Data("m".utf8).write(to: movie)
        let video = try await Video.importValue(offering: ["video/mp4"]) { type, prefersFile in
            #expect(type == "video/mp4")
            #expect(prefersFile)
            return .file(movie)
        }
        #expect(video?.file == movie)
        #expect(FileManager.default.fileExists(atPath: movie.path))

        let text = directory.appendingPathComponent("read.txt")
        try Data("t".utf8).write(to: text)
        let string = try await String.importValue(offering: ["text/plain;charset=utf-8"]) { _, prefersFile in
            #expect(!prefersFile)
            return .file(text)
        }
        #expect(string == "t")
        #expect(!FileManager.default.fileExists(atPath: text.path))
    }

    @Test("a failed file import leaves no file behind")
    func failedFileImport() async throws {
        struct Refused: Error {}
        struct Picky: Transferable {
            static var transferRepresentation: some TransferRepresentation {
                FileRepresentation(importedContentType: .png) { received -> Picky in
                    Picky.lastFile.withLock { $0 = received.file }
                    throw Refused()
                }
            }
            static let lastFile = Mutex<URL?>(nil)
        }
        await #expect(throws: Refused.self) {
            try await Picky.importValue(offering: ["image/png"]) { _, _ in .data(Data([1])) }
        }
        let made = try #require(Picky.lastFile.withLock { $0 })
        #expect(made.pathExtension == "png")
        #expect(!FileManager.default.fileExists(atPath: made.path))

        let directory = try temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let given = directory.appendingPathComponent("given.png")
        try Data([1]).write(to: given)
        await #expect(throws: Refused.self) {
            try await Picky.importValue(offering: ["image/png"]) { _, _ in .file(given) }
        }
        #expect(!FileManager.default.fileExists(atPath: given.path))
    }

    @Test("an import-only FileRepresentation of an abstract type accepts its subtypes")
    func abstractFileImport() async throws {
        struct AnyImage: Transferable {
            var file: URL
            static var transferRepresentation: some TransferRepresentation {
                FileRepresentation(importedContentType: .image) { received in AnyImage(file: received.file) }
            }
        }
        let match = try #require(AnyImage.importMatch(offering: ["text/plain", "image/x-xcf", "image/png"]))
        #expect(match.offeredType == "image/x-xcf")
        #expect(match.offeredIndex == 1)
        #expect(AnyImage.importMatch(offering: ["text/plain"]) == nil)
        #expect(try await exportRepresentations(of: AnyImage(file: URL(fileURLWithPath: "/x"))).isEmpty)
    }

    // MARK: Modifiers

    @Test("exportingCondition hides a representation for some values")
    func exportingCondition() async throws {
        #expect(try await item(Archive(rows: ["a"], supportsCSV: true)).map(\.type) == ["text/csv", "com.example.tests.transfer.archive"])
        #expect(try await item(Archive(rows: ["a"], supportsCSV: false)).map(\.type) == ["com.example.tests.transfer.archive"])
        // Reading is not affected.
        #expect(try await read(Archive.self, from: [("text/csv", Data("x\ny".utf8))])?.rows == ["x", "y"])
    }

    @Test("the other type's exportingCondition holds through a proxy")
    func conditionThroughProxy() async throws {
        struct Wrapper: Transferable {
            var archive: Archive
            static var transferRepresentation: some TransferRepresentation {
                ProxyRepresentation(exporting: \.archive)
            }
        }
        let hidden = Wrapper(archive: Archive(rows: [], supportsCSV: false))
        #expect(try await item(hidden).map(\.type) == ["com.example.tests.transfer.archive"])
        // Asked directly, the hidden entry refuses.
        let csvEntry = Wrapper.transferEntries[0]
        #expect(csvEntry.contentType == .commaSeparatedText)
        #expect(csvEntry.isExportable(hidden))
        await #expect(throws: TransferError.self) { try await csvEntry.export!(hidden) }
    }

    @Test("visibility is recorded, and the most restrictive one wins")
    func visibility() async throws {
        struct Secret: Transferable {
            var text: String
            static var transferRepresentation: some TransferRepresentation {
                DataRepresentation(exportedContentType: .json) { _ in Data("{}".utf8) }
                    .visibility(.ownProcess)
                ProxyRepresentation(exporting: \.text)
                    .visibility(.team)
                DataRepresentation(exportedContentType: .html) { _ in Data() }
            }
        }
        let entries = Secret.transferEntries
        #expect(entries.map(\.visibility) == [.ownProcess, .team, .all])
        let exported = try await exportRepresentations(of: Secret(text: "s"))
        #expect(exported.map(\.visibility) == [.ownProcess, .team, .all])

        let narrowed = AnyTransferRepresentation(
            DataRepresentation<Secret>(exportedContentType: .png) { _ in Data() }.visibility(.group).visibility(.all))
        #expect(narrowed.entries.map(\.visibility) == [.group])
        #expect(TransferRepresentationVisibility.ownProcess.description == "ownProcess")
    }

    @Test("suggestedFileName, fixed or from the value; the innermost wins")
    func suggestedFileName() async throws {
        struct Report: Transferable {
            var title: String
            static var transferRepresentation: some TransferRepresentation {
                DataRepresentation(exportedContentType: .pdf) { _ in Data("%PDF".utf8) }
                    .suggestedFileName { report in report.title + ".pdf" }
                DataRepresentation(exportedContentType: .html) { _ in Data() }
                    .suggestedFileName("report.html")
                    .suggestedFileName("ignored.html")
                DataRepresentation(exportedContentType: .json) { _ in Data() }
            }
        }
        #expect(Report.transferEntries.map { $0.exportFileName?(Report(title: "Q3")) ?? nil } == ["Q3.pdf", "report.html", nil])
        #expect(Video.transferEntries[0].exportFileName?(Video(file: URL(fileURLWithPath: "/v.mp4"))) == "Clip.mp4")
    }

    // MARK: Builder

    @Test("the builder takes if, if-else, switch and #available")
    func builder() async throws {
        #expect(Configurable.transferEntries.map(\.contentType) == [.json, .html, .png, .rtf])
        #expect(Empty.transferEntries.isEmpty)
        #expect(try await exportRepresentations(of: Empty()).isEmpty)
    }

    @Test("a representation of your own groups others through its body")
    func customRepresentation() async throws {
        struct Note: Transferable, Equatable {
            var text: String
            static var transferRepresentation: some TransferRepresentation {
                NoteRepresentations()
            }
        }
        struct NoteRepresentations: TransferRepresentation {
            typealias Item = Note
            var body: some TransferRepresentation<Note> {
                DataRepresentation(contentType: .html) { note in Data("<p>\(note.text)</p>".utf8) } importing: { data in
                    Note(text: String(decoding: data, as: UTF8.self))
                }
                ProxyRepresentation(exporting: \.text)
            }
        }
        #expect(try await item(Note(text: "n")).map(\.type) == ["text/html", "text/plain;charset=utf-8"])
    }

    // MARK: Engine

    @Test("duplicate pasteboard types are written once, the first one kept")
    func duplicates() async throws {
        struct Twice: Transferable {
            static var transferRepresentation: some TransferRepresentation {
                DataRepresentation(exportedContentType: .text) { _ in Data("first".utf8) }
                DataRepresentation(exportedContentType: .plainText) { _ in Data("second".utf8) }
            }
        }
        let written = try await item(Twice())
        #expect(written.map(\.type) == ["text/plain"])
        #expect(written[0].data == Data("first".utf8))
    }

    @Test("values of different types export through one list of any Transferable")
    func heterogeneous() async throws {
        let objects: [any Transferable] = ["text", Data([1, 2]), URL(string: "https://example.com")!, Profile(name: "P", age: 1)]
        var types: [[String]] = []
        for object in objects {
            types.append(try await exportRepresentations(of: object).map(\.contentType.pasteboardType))
        }
        #expect(
            types == [
                ["text/plain;charset=utf-8"],
                ["application/octet-stream"],
                ["text/uri-list", "text/plain;charset=utf-8"],
                ["com.example.tests.transfer.profile", "text/plain;charset=utf-8"],
            ])
    }

    @Test("reading picks the first importable entry, then the closest offered type")
    func importMatching() throws {
        let match = try #require(String.importMatch(offering: ["text/html", "text/plain", "text/plain;charset=utf-8"]))
        #expect(match.entry.contentType == .utf8PlainText)
        #expect(match.offeredType == "text/plain;charset=utf-8")

        let plain = try #require(String.importMatch(offering: ["text/html", "text/plain"]))
        #expect(plain.entry.contentType == .plainText)
        #expect(plain.offeredType == "text/plain")

        let bytes = try #require(Data.importMatch(offering: ["image/png", "application/octet-stream"]))
        #expect(bytes.offeredType == "application/octet-stream")
        #expect(Data.importMatch(offering: ["image/png", "text/plain"])?.offeredType == "image/png")

        #expect(Profile.importMatch(offering: ["text/plain"]) == nil)
    }
}

// MARK: - Types used above

struct Video: Transferable {
    var file: URL
    var wasOriginal: Bool? = nil

    static var transferRepresentation: some TransferRepresentation {
        FileRepresentation(contentType: .mpeg4Movie) { video in
            SentTransferredFile(video.file)
        } importing: { received in
            Video(file: received.file, wasOriginal: received.isOriginalFile)
        }
        .suggestedFileName("Clip.mp4")
    }
}

struct Archive: Transferable {
    var rows: [String]
    var supportsCSV: Bool

    static var transferRepresentation: some TransferRepresentation {
        DataRepresentation(contentType: .commaSeparatedText) { archive in
            Data(archive.rows.joined(separator: "\n").utf8)
        } importing: { data in
            Archive(rows: String(decoding: data, as: UTF8.self).split(separator: "\n").map(String.init), supportsCSV: true)
        }
        .exportingCondition { archive in archive.supportsCSV }
        DataRepresentation(contentType: .testArchive) { archive in
            try JSONEncoder().encode(archive.rows)
        } importing: { data in
            Archive(rows: try JSONDecoder().decode([String].self, from: data), supportsCSV: false)
        }
    }
}

struct CycleA: Transferable {
    var value: String
    static var transferRepresentation: some TransferRepresentation {
        DataRepresentation(exportedContentType: .json) { a in Data("\"\(a.value)\"".utf8) }
        ProxyRepresentation(exporting: { (a: CycleA) in CycleB(value: a.value) })
    }
}

struct CycleB: Transferable {
    var value: String
    static var transferRepresentation: some TransferRepresentation {
        DataRepresentation(exportedContentType: .html) { b in Data(b.value.utf8) }
        ProxyRepresentation(exporting: { (b: CycleB) in CycleA(value: b.value) })
    }
}

let includeHTML = true

struct Configurable: Transferable {
    enum Kind { case image, text }
    static let kind = Kind.image

    static var transferRepresentation: some TransferRepresentation {
        DataRepresentation(exportedContentType: .json) { _ in Data() }
        if includeHTML {
            DataRepresentation(exportedContentType: .html) { _ in Data() }
        }
        if !includeHTML {
            DataRepresentation(exportedContentType: .xml) { _ in Data() }
        }
        switch kind {
        case .image:
            DataRepresentation(exportedContentType: .png) { _ in Data() }
        case .text:
            DataRepresentation(exportedContentType: .plainText) { _ in Data() }
        }
        if #available(macOS 10.15, *) {
            DataRepresentation(exportedContentType: .rtf) { _ in Data() }
        }
    }
}

struct Empty: Transferable {
    static var transferRepresentation: some TransferRepresentation {}
}

/// Just enough of JSON to check a field.
enum AnyCodableValue: Codable, Equatable {
    case string(String)
    case number(Double)

    init(from decoder: any Decoder) throws {
        let container = try decoder.singleValueContainer()
        if let string = try? container.decode(String.self) {
            self = .string(string)
        } else {
            self = .number(try container.decode(Double.self))
        }
    }

    func encode(to encoder: any Encoder) throws {
        var container = encoder.singleValueContainer()
        switch self {
        case .string(let string): try container.encode(string)
        case .number(let number): try container.encode(number)
        }
    }
}
