import Foundation
import PasteboardModel
import Testing

/// Conformance by the database installed on this machine (or the built-in table where none
/// is installed: every fact checked here holds for both).
@Suite("MIMEDatabase (installed database)")
struct MIMEDatabaseTests {
    let database = MIMEDatabase.shared

    static let systemDatabaseExists = MIMEDatabase.searchDirectories(
        environment: ProcessInfo.processInfo.environment
    ).contains { FileManager.default.fileExists(atPath: $0 + "/mime/subclasses") }

    func make(_ text: String) throws -> PasteboardType {
        try PasteboardType(validating: text)
    }

    func distance(_ offered: String, _ wanted: String) throws -> Int? {
        try database.conformanceDistance(from: make(offered), to: make(wanted))
    }

    @Test("the installed files are read when present")
    func readsInstalledFiles() {
        #expect(database.isBuiltIn == !Self.systemDatabaseExists)
    }

    @Test(
        "conforming pairs, with their distance",
        arguments: [
            ("text/plain", "text/plain", 0),
            ("TEXT/PLAIN", "text/plain", 0),
            ("text/html", "text/plain", 2),
            ("text/plain;charset=utf-8", "text/plain", 1),
            ("public.utf8-plain-text", "public.plain-text", 1),
            ("text/html;charset=utf-8", "text/plain;charset=utf-8", 2),
            ("text/html;charset=utf-8", "text/plain", 3),
            ("text/csv", "text/plain", 2),
            ("text/x-made-up", "text/plain", 2),
            ("image/svg+xml", "application/xml", 2),
            ("image/svg+xml", "text/plain", 4),
            ("application/x-pdf", "application/pdf", 0),
            ("application/pdf", "application/x-pdf", 0),
            ("text/rtf", "application/rtf", 0),
            ("public.rtf", "text/plain", 2),
            ("text/xml", "text/plain", 2),
            ("application/epub+zip", "application/zip", 2),
            ("audio/x-vorbis+ogg", "application/ogg", 4),
            ("inode/mount-point", "inode/directory", 2),
            ("image/png", "image/*", 2),
            ("image/svg+xml", "image/*", 2),
            ("IMAGE/JPEG", "public.image", 2),
            ("image/png;x=1", "image/*", 3),
            ("text/rtf", "text/*", 2),
            ("text/html", "text/*", 2),
            ("audio/x-vorbis+ogg", "public.audio", 2),
            ("video/mp4", "public.movie", 2),
            ("image/*", "image/*", 0),
        ])
    func conforming(offered: String, wanted: String, expected: Int) throws {
        #expect(try distance(offered, wanted) == expected)
        #expect(try database.conforms(make(offered), to: make(wanted)))
    }

    @Test("application/json is text, by way of JavaScript")
    func jsonIsText() throws {
        let steps = try #require(try distance("application/json", "text/plain"))
        #expect(steps >= 1 && steps < MIMEDatabase.octetStreamDistance)
        #expect(try distance("application/ld+json", "application/json") == 2)
    }

    @Test(
        "everything is bytes, at the largest distance",
        arguments: [
            "image/png", "text/plain", "text/plain;charset=utf-8", "com.example.todo", "UTF8_STRING", "application/x-made-up",
            "inode/directory", "inode/mount-point",
        ])
    func octetStream(offered: String) throws {
        let steps = try #require(try distance(offered, "application/octet-stream"))
        #expect(steps >= MIMEDatabase.octetStreamDistance)
        #expect(try distance(offered, "public.data") == steps)
        #expect(try distance(offered, "*/*") == steps)
    }


    @Test(
        "unrelated types do not conform",
        arguments: [
            ("text/plain", "text/plain;charset=utf-8"),
            ("text/html", "text/plain;charset=utf-8"),
            ("text/plain;charset=utf-16", "text/plain;charset=utf-8"),
            ("text/plain", "text/html"),
            ("image/png", "image/jpeg"),
            ("image/png", "text/plain"),
            ("application/pdf", "text/plain"),
            ("video/mp4", "audio/mp4"),
            ("application/zip", "application/epub+zip"),
            ("application/octet-stream", "image/png"),
            ("com.example.todo", "text/plain"),
            ("com.example.todo", "com.example.todos"),
            ("text/plain", "com.example.todo"),
            ("application/vnd.example.profile+json", "application/json"),
            ("text/plain", "image/*"),
            ("video/mp4", "audio/*"),
            ("application/pdf", "public.image"),
            ("com.example.image", "image/*"),
            ("image/*", "image/png"),
        ])
    func notConforming(offered: String, wanted: String) throws {
        #expect(try distance(offered, wanted) == nil)
        #expect(try !database.conforms(make(offered), to: make(wanted)))
    }

    @Test("distances rank closer types first")
    func ordering() throws {
        let plain = try #require(try distance("text/plain", "text/plain"))
        let utf8 = try #require(try distance("text/plain;charset=utf-8", "text/plain"))
        let html = try #require(try distance("text/html", "text/plain"))
        let svg = try #require(try distance("image/svg+xml", "text/plain"))
        let bytes = try #require(try distance("text/plain", "application/octet-stream"))
        #expect(plain < utf8)
        #expect(html < svg)
        #expect(svg < bytes)
    }

    @Test("the best match is the closest offered type, the earliest on a tie")
    func bestMatch() throws {
        let offered = try ["image/png", "image/svg+xml", "text/html", "text/plain;charset=utf-8"].map(make)
        // Plain text with a charset is closer to plain text than HTML, which a browser offers first.
        #expect(try database.indexOfBestMatch(for: make("text/plain"), in: offered) == 3)
        #expect(try database.indexOfBestMatch(for: make("text/plain"), in: ["text/html", "text/csv"].map(make)) == 0)
        #expect(try database.indexOfBestMatch(for: make("text/plain;charset=utf-8"), in: offered) == 3)
        #expect(try database.indexOfBestMatch(for: make("application/xml"), in: offered) == 1)
        #expect(try database.indexOfBestMatch(for: make("application/octet-stream"), in: offered) == 0)
        // Bytes are bytes: the richest type, even one with parameters.
        let text = try ["text/plain;charset=utf-8", "text/html", "image/png"].map(make)
        #expect(try database.indexOfBestMatch(for: make("application/octet-stream"), in: text) == 0)
        #expect(try database.indexOfBestMatch(for: make("application/octet-stream"), in: text + [make("application/octet-stream")]) == 3)
        #expect(try database.indexOfBestMatch(for: make("image/jpeg"), in: offered) == nil)
        #expect(try database.indexOfBestMatch(for: make("text/plain"), in: []) == nil)
    }

    @Test("aliases resolve to the canonical spelling, parameters kept")
    func resolvingAliases() throws {
        #expect(try database.resolvingAliases(make("application/x-pdf")).rawValue == "application/pdf")
        #expect(try database.resolvingAliases(make("text/xml;charset=utf-8")).rawValue == "application/xml;charset=utf-8")
        #expect(try database.resolvingAliases(make("image/png")).rawValue == "image/png")
        #expect(try database.resolvingAliases(make("com.example.todo")).rawValue == "com.example.todo")
    }

    @Test("supertypes of a type")
    func supertypes() throws {
        let ancestors = try database.supertypes(of: make("image/svg+xml"))
        #expect(ancestors["application/xml"] == 1)
        #expect(ancestors["text/plain"] == 2)
        #expect(ancestors["image/svg+xml"] == nil)
    }

    @Test("subclass lines only the full database has", .enabled(if: MIMEDatabaseTests.systemDatabaseExists))
    func fullDatabase() throws {
        #expect(try distance("text/x-c++src", "text/x-csrc") == 2)
        #expect(try distance("application/x-shellscript", "application/x-executable") == 2)
    }

    @Test("search directories follow the XDG Base Directory specification")
    func searchDirectories() {
        #expect(
            MIMEDatabase.searchDirectories(environment: ["HOME": "/home/u"])
                == ["/home/u/.local/share", "/usr/local/share", "/usr/share"])
        #expect(
            MIMEDatabase.searchDirectories(environment: [
                "HOME": "/home/u", "XDG_DATA_HOME": "/data", "XDG_DATA_DIRS": "/a:relative::/b",
            ]) == ["/data", "/a", "/b"])
        #expect(
            MIMEDatabase.searchDirectories(environment: ["HOME": "/home/u", "XDG_DATA_HOME": "", "XDG_DATA_DIRS": ""])
                == ["/home/u/.local/share", "/usr/local/share", "/usr/share"])
        #expect(MIMEDatabase.searchDirectories(environment: [:]) == ["/usr/local/share", "/usr/share"])
    }
}
