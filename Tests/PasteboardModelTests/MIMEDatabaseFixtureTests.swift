import Foundation
import PasteboardModel
import Testing

/// Conformance by a small database written for the test, so every rule is checked against
/// known files whatever is installed.
@Suite("MIMEDatabase (fixture files)")
struct MIMEDatabaseFixtureTests {
    /// Writes `mime/subclasses` and `mime/aliases` (each when given) into a new temporary
    /// data directory; the caller removes it with ``remove(_:)``.
    static func makeDataDirectory(subclasses: String?, aliases: String?) throws -> String {
        let path = FileManager.default.temporaryDirectory
            .appendingPathComponent("pasteboard-model-tests-\(UUID().uuidString)").path
        let mime = path + "/mime"
        try FileManager.default.createDirectory(atPath: mime, withIntermediateDirectories: true)
        if let subclasses {
            try Data(subclasses.utf8).write(to: URL(fileURLWithPath: mime + "/subclasses"))
        }
        if let aliases {
            try Data(aliases.utf8).write(to: URL(fileURLWithPath: mime + "/aliases"))
        }
        return path
    }

    static func remove(_ path: String) {
        try? FileManager.default.removeItem(atPath: path)
    }

    static let subclasses = """
        # comments and blank lines are skipped

        application/x-child application/x-parent
        application/x-parent application/x-grandparent
        application/x-loop-a application/x-loop-b
        application/x-loop-b application/x-loop-a
        application/x-adopted application/x-old-parent
        Image/X-Fancy Image/PNG
        inode/x-special inode/directory
        application/x-picture image/png
        application/x-any-picture image/*
        """

    static let aliases = """
        application/x-old-parent application/x-parent
        application/x-old-name application/x-child
        application/x-alias-loop application/x-alias-loop-2
        application/x-alias-loop-2 application/x-alias-loop
        """

    /// A less important directory: its alias for x-old-name loses, its subclass line adds.
    static let lowerSubclasses = "application/x-child application/x-extra\n"
    static let lowerAliases = "application/x-old-name application/x-other\n"

    func make(_ text: String) throws -> PasteboardType {
        try PasteboardType(validating: text)
    }

    /// The fixture database; the files are removed once read, since the database keeps
    /// everything it needs.
    func fixture() throws -> MIMEDatabase {
        let primary = try Self.makeDataDirectory(subclasses: Self.subclasses, aliases: Self.aliases)
        defer { Self.remove(primary) }
        let lower = try Self.makeDataDirectory(subclasses: Self.lowerSubclasses, aliases: Self.lowerAliases)
        defer { Self.remove(lower) }
        return MIMEDatabase(directories: [primary, lower])
    }

    @Test(
        "distances through the fixture",
        arguments: [
            ("application/x-child", "application/x-child", 0),
            ("application/x-child", "application/x-parent", 2),
            ("application/x-child", "application/x-grandparent", 4),
            ("application/x-child", "application/x-extra", 2),
            ("application/x-old-name", "application/x-child", 0),
            ("application/x-old-name", "application/x-grandparent", 4),
            ("application/x-child", "application/x-old-parent", 2),
            ("application/x-adopted", "application/x-parent", 2),
            ("application/x-adopted", "application/x-grandparent", 4),
            ("application/x-loop-a", "application/x-loop-b", 2),
            ("application/x-loop-b", "application/x-loop-a", 2),
            ("application/x-loop-a", "application/x-loop-a", 0),
            ("image/x-fancy", "image/png", 2),
            // A wildcard's media type through a supertype (as xdgmime reads it), or named
            // as a parent itself.
            ("application/x-picture", "image/*", 4),
            ("application/x-any-picture", "image/*", 2),
            ("application/x-any-picture", "public.image", 2),
            ("application/x-child;v=1", "application/x-parent", 3),
            ("application/x-child;v=1", "application/x-parent;v=1", 2),
            ("text/anything", "text/plain", 2),
            ("inode/x-special", "inode/directory", 2),
        ])
    func distances(offered: String, wanted: String, expected: Int) throws {
        let database = try fixture()
        #expect(try database.conformanceDistance(from: make(offered), to: make(wanted)) == expected)
    }

    @Test(
        "pairs the fixture does not relate",
        arguments: [
            ("application/x-parent", "application/x-child"),
            ("application/x-grandparent", "application/x-child"),
            ("application/x-child", "application/x-other"),
            ("application/x-loop-a", "application/x-child"),
            ("application/x-alias-loop", "application/x-child"),
            ("application/x-parent", "application/x-child;v=1"),
            ("image/png", "image/x-fancy"),
            ("text/html", "application/x-parent"),
        ])
    func unrelated(offered: String, wanted: String) throws {
        let database = try fixture()
        #expect(try database.conformanceDistance(from: make(offered), to: make(wanted)) == nil)
    }

    @Test("the fixture's files are what is read, not the built-in table")
    func readsFixture() throws {
        let database = try fixture()
        #expect(!database.isBuiltIn)
        // In the built-in table, but not in the fixture.
        #expect(try !database.conforms(make("image/svg+xml"), to: make("application/xml")))
        #expect(try database.conforms(make("image/svg+xml"), to: make("text/plain")) == false)
        #expect(try database.conforms(make("text/html"), to: make("text/plain")))
        #expect(try database.conformanceDistance(from: make("com.example.todo"), to: .octetStream)
            == MIMEDatabase.octetStreamDistance)
    }

    @Test("the first directory's alias wins")
    func aliasPrecedence() throws {
        let database = try fixture()
        #expect(try database.resolvingAliases(make("application/x-old-name")).rawValue == "application/x-child")
        #expect(try database.resolvingAliases(make("application/x-alias-loop")).essence.hasPrefix("application/x-alias-loop"))
    }

    @Test("missing files fall back to the built-in table")
    func fallback() throws {
        let empty = try Self.makeDataDirectory(subclasses: nil, aliases: nil)
        defer { Self.remove(empty) }
        let database = MIMEDatabase(directories: [empty, empty + "/missing"])
        #expect(database.isBuiltIn)
        #expect(try database.conformanceDistance(from: make("image/svg+xml"), to: make("application/xml")) == 2)
        #expect(try database.conformanceDistance(from: make("application/x-pdf"), to: make("application/pdf")) == 0)
        #expect(try database.conforms(make("application/json"), to: make("text/plain")))
        #expect(try !database.conforms(make("image/png"), to: make("image/jpeg")))
        #expect(MIMEDatabase(directories: []).isBuiltIn)
    }

    @Test("a database from text, one file present")
    func fromText() throws {
        let database = MIMEDatabase(subclasses: "a/child a/parent\n", aliases: "")
        #expect(!database.isBuiltIn)
        #expect(try database.conformanceDistance(from: make("a/child"), to: make("a/parent")) == 2)
        #expect(try database.conformanceDistance(from: make("a/parent"), to: make("a/child")) == nil)

        let aliasesOnly = try Self.makeDataDirectory(subclasses: nil, aliases: "a/old a/new\n")
        defer { Self.remove(aliasesOnly) }
        let fromFiles = MIMEDatabase(directories: [aliasesOnly])
        #expect(!fromFiles.isBuiltIn)
        #expect(try fromFiles.conformanceDistance(from: make("a/old"), to: make("a/new")) == 0)
    }
}
