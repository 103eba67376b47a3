import Foundation
import Synchronization
import PasteboardModel
import Testing

/// Installing declarations into private data directories with the real `update-mime-database`
/// (shared-mime-info, installed by scripts/install-deps).
@Suite("Type declaration installer")
struct TypeDeclarationInstallerTests {
    /// A user and a system data directory of the test's own, the system's database after them.
    final class World: Sendable {
        let root: String
        let installer: TypeDeclarationInstaller

        init(path: String? = nil, turnTimeout: Duration = .seconds(60)) throws {
            root = FileManager.default.temporaryDirectory.appendingPathComponent("pasteboard-declare-\(UUID().uuidString)").path
            try FileManager.default.createDirectory(atPath: root + "/system", withIntermediateDirectories: true)
            var environment = ProcessInfo.processInfo.environment
            environment["XDG_DATA_HOME"] = root + "/user"
            environment["XDG_DATA_DIRS"] = root + "/system:/usr/share"
            if let path { environment["PATH"] = path }
            installer = TypeDeclarationInstaller(environment: environment, turnTimeout: turnTimeout)
        }

        deinit { try? FileManager.default.removeItem(atPath: root) }

        var userPackages: String { root + "/user/mime/packages" }

        func text(_ path: String) -> String {
            String(decoding: FileManager.default.contents(atPath: path) ?? Data(), as: UTF8.self)
        }
    }

    static func todo(_ identifier: String = "com.example.todo", mime: String = "application/vnd.example.todo+json", parents: [String] = ["public.json"]) throws -> TypeDeclaration {
        try TypeDeclaration(identifier: identifier, mimeType: mime, conformsTo: parents, extensions: ["todo"], comment: "Todo item")
    }

    @Test("declaring writes the package and compiles it: subclasses, globs and the type's own file")
    func declare() throws {
        let world = try World()
        let file = try world.installer.declare(Self.todo(), scope: .user)
        #expect(file == world.userPackages + "/com.example.todo.xml")
        #expect(world.text(world.root + "/user/mime/subclasses").contains("application/vnd.example.todo+json application/json"))
        #expect(world.text(world.root + "/user/mime/globs2").contains("application/vnd.example.todo+json:*.todo"))
        #expect(world.text(world.root + "/user/mime/application/vnd.example.todo+json.xml").contains("com.example.todo"))
        let database = world.installer.currentDatabase()
        #expect(database.declarations.declaration(forIdentifier: "com.example.todo")?.file == file)
        #expect(database.conforms(try PasteboardType(validating: "application/vnd.example.todo+json"), to: .plainText), "JSON is text, by the system's database")

        let description = try TypeDescription("com.example.todo", installer: world.installer)
        #expect(description.mimeType == "application/vnd.example.todo+json")
        #expect(description.supertypes.first == "application/json")
        #expect(description.supertypes.last == "application/octet-stream")
        #expect(description.supertypes.contains("text/plain"))
        #expect(description.declaredIn == file)
        #expect(description.extensions == ["todo"])
    }

    @Test("a declared type may conform to another declared by identifier; declaring again replaces")
    func chainAndReplace() throws {
        let world = try World()
        try world.installer.declare(Self.todo(), scope: .user)
        let urgent = try TypeDeclaration(
            identifier: "com.example.urgent-todo", mimeType: "application/vnd.example.urgent-todo+json",
            conformsTo: ["com.example.todo"], declared: world.installer.currentDatabase().declarations)
        try world.installer.declare(urgent, scope: .user)
        let database = world.installer.currentDatabase()
        #expect(database.conforms(try PasteboardType(validating: "application/vnd.example.urgent-todo+json"), to: .json))

        try world.installer.declare(Self.todo(parents: ["text/plain"]), scope: .user)
        let again = world.installer.currentDatabase()
        #expect(!again.conforms(try PasteboardType(validating: "application/vnd.example.todo+json"), to: .json), "the new declaration replaced the old")
        #expect(again.declarations.all.count == 2)
    }

    /// A format of one's own that is an image (`--conforms-to public.image`): the wildcard
    /// `image/*` is its parent, and a request for any image matches it.
    @Test("a declared type may conform to an abstract media type: public.image is image/*")
    func conformingToAnyImage() throws {
        let world = try World()
        try world.installer.declare(TypeDeclaration(identifier: "com.example.sketch", mimeType: "application/vnd.example.sketch", conformsTo: ["public.image"]), scope: .user)
        #expect(world.text(world.root + "/user/mime/subclasses").contains("application/vnd.example.sketch image/*"))
        let database = world.installer.currentDatabase()
        let sketch = try PasteboardType(validating: "application/vnd.example.sketch")
        #expect(database.conforms(sketch, to: try PasteboardType(validating: "public.image")))
        #expect(!database.conforms(sketch, to: try PasteboardType(validating: "audio/*")))
        // A misspelt media type is no media type.
        #expect {
            try world.installer.declare(TypeDeclaration(identifier: "com.example.typo", mimeType: "application/vnd.example.typo", conformsTo: ["imag/*"]), scope: .user)
        } throws: { error in
            (error as? TypeDeclarationError)?.message.contains("not a type the MIME database knows") == true
        }
    }

    @Test(
        "conflicting declarations are refused and change nothing",
        arguments: [
            ("com.example.other", "application/vnd.example.todo+json", ["public.json"], "already the MIME type of com.example.todo"),
            ("com.example.todo", "application/vnd.example.other+json", ["public.json"], "already declared as"),
            ("com.example.json", "application/json", ["text/plain"], "system type public.json"),
            ("com.example.diff", "text/x-patch", ["text/plain"], "already a type of the MIME database"),
            // An alias is another type's name (text/x-csv is text/csv).
            ("com.example.csv", "text/x-csv", ["text/plain"], "another name of text/csv in the MIME database (an alias)"),
            ("com.example.loop", "application/vnd.example.loop", ["application/vnd.example.todo+json"], nil),
            ("com.example.typo", "application/vnd.example.typo", ["application/jsno"], "not a type the MIME database knows"),
        ] as [(String, String, [String], String?)])
    func conflicts(identifier: String, mime: String, parents: [String], expected: String?) throws {
        let world = try World()
        // Declared for the machine; the user's declarations below would contradict it.
        try world.installer.declare(Self.todo(), scope: .system)
        let before = (try? FileManager.default.contentsOfDirectory(atPath: world.userPackages).sorted()) ?? []
        let subclasses = world.text(world.root + "/user/mime/subclasses")
        // A loop: todo → loop is declared after loop → todo would close it.
        if identifier == "com.example.loop" {
            try world.installer.declare(TypeDeclaration(identifier: "com.example.loop", mimeType: mime, conformsTo: ["application/vnd.example.todo+json"]), scope: .user)
            #expect {
                try world.installer.declare(Self.todo(parents: ["application/vnd.example.loop"]), scope: .system)
            } throws: { error in
                (error as? TypeDeclarationError)?.message.contains("cycle") == true
            }
            return
        }
        #expect {
            try world.installer.declare(TypeDeclaration(identifier: identifier, mimeType: mime, conformsTo: parents), scope: .user)
        } throws: { error in
            guard let error = error as? TypeDeclarationError, let expected else { return false }
            return error.message.contains(expected)
        }
        #expect(((try? FileManager.default.contentsOfDirectory(atPath: world.userPackages).sorted()) ?? []) == before)
        #expect(world.text(world.root + "/user/mime/subclasses") == subclasses)
    }

    @Test("undeclaring removes the package and the type from the database; a second time says where it is not")
    func undeclare() throws {
        let world = try World()
        try world.installer.declare(Self.todo(), scope: .system)
        #expect(FileManager.default.fileExists(atPath: world.root + "/system/mime/packages/com.example.todo.xml"))
        #expect {
            try world.installer.undeclare(identifier: "com.example.todo", scope: .user)
        } throws: { error in
            guard let error = error as? TypeDeclarationError else { return false }
            return error.kind == .notDeclared && error.message.contains("--system")
        }
        try world.installer.undeclare(identifier: "com.example.todo", scope: .system)
        #expect(!world.text(world.root + "/system/mime/subclasses").contains("vnd.example.todo"))
        #expect(world.installer.currentDatabase().declarations.isEmpty)
        #expect {
            try world.installer.undeclare(identifier: "com.example.todo", scope: .system)
        } throws: { error in
            (error as? TypeDeclarationError)?.kind == .notDeclared
        }
    }

    @Test("a type another declared type conforms to is neither undeclared nor given another MIME type while it does")
    func undeclareAParent() throws {
        let world = try World()
        try world.installer.declare(Self.todo(), scope: .user)
        try world.installer.declare(Self.todo("com.example.checklist", mime: "application/vnd.example.checklist+json", parents: ["application/vnd.example.todo+json"]), scope: .user)
        let subclasses = world.text(world.root + "/user/mime/subclasses")
        #expect {
            try world.installer.undeclare(identifier: "com.example.todo", scope: .user)
        } throws: { error in
            guard let error = error as? TypeDeclarationError else { return false }
            return error.kind == .conflict && error.message.contains("com.example.checklist") && error.message.contains("undeclare it first")
        }
        // Nor is it declared again under another MIME type, which takes the old one away too.
        #expect {
            try world.installer.declare(Self.todo(mime: "application/vnd.example.todo2+json"), scope: .user)
        } throws: { error in
            (error as? TypeDeclarationError)?.kind == .conflict && (error as? TypeDeclarationError)?.message.contains("com.example.checklist") == true
        }
        // Nothing was touched: both packages, and the database as it was.
        #expect(world.text(world.userPackages + "/com.example.todo.xml").contains("application/vnd.example.todo+json"))
        #expect(world.text(world.root + "/user/mime/subclasses") == subclasses)
        // Declared again as it was, it stays.
        try world.installer.declare(Self.todo(), scope: .user)
        // The child first, then the parent.
        try world.installer.undeclare(identifier: "com.example.checklist", scope: .user)
        try world.installer.undeclare(identifier: "com.example.todo", scope: .user)
        #expect(world.installer.currentDatabase().declarations.isEmpty)
    }

    @Test("a package of someone else's under the same name is never overwritten")
    func foreignFile() throws {
        let world = try World()
        try FileManager.default.createDirectory(atPath: world.userPackages, withIntermediateDirectories: true)
        let foreign = #"<?xml version="1.0"?><mime-info xmlns="http://www.freedesktop.org/standards/shared-mime-info"/>"#
        try Data(foreign.utf8).write(to: URL(fileURLWithPath: world.userPackages + "/com.example.todo.xml"))
        #expect(throws: TypeDeclarationError.self) { try world.installer.declare(Self.todo(), scope: .user) }
        #expect(world.text(world.userPackages + "/com.example.todo.xml") == foreign)
    }

    @Test("without update-mime-database nothing is written and the error says what to install")
    func toolMissing() throws {
        let world = try World(path: "/nonexistent")
        #expect {
            try world.installer.declare(Self.todo(), scope: .user)
        } throws: { error in
            guard let error = error as? TypeDeclarationError else { return false }
            return error.kind == .unavailable && error.message.contains("shared-mime-info")
        }
        #expect(!FileManager.default.fileExists(atPath: world.userPackages + "/com.example.todo.xml"))
    }

    @Test("an unwritable data directory is an I/O error naming the file")
    func unwritable() throws {
        let world = try World()
        // A file where the folder should be: no user, root included, can write under it.
        try FileManager.default.createDirectory(atPath: world.root + "/user", withIntermediateDirectories: true)
        try Data().write(to: URL(fileURLWithPath: world.root + "/user/mime"))
        #expect {
            try world.installer.declare(Self.todo(), scope: .user)
        } throws: { error in
            guard let error = error as? TypeDeclarationError else { return false }
            return error.kind == .io && error.message.contains("com.example.todo.xml")
        }
    }

    @Test("a malformed package in the folder is reported and ignored; the others still count")
    func malformedPackage() throws {
        let world = try World()
        try world.installer.declare(Self.todo(), scope: .user)
        try Data("<mime-info xmlns:p=\"\(TypeDeclaration.namespace)\"><broken".utf8).write(to: URL(fileURLWithPath: world.userPackages + "/broken.xml"))
        let declared = world.installer.currentDatabase().declarations
        #expect(declared.declaration(forIdentifier: "com.example.todo") != nil)
        #expect(declared.problems.count == 1)
        #expect(declared.problems.first?.contains("broken.xml") == true)
    }

    @Test("declarations made at once in one folder take turns: every one is declared, none fails")
    func declaredAtOnce() throws {
        let world = try World()
        let count = 8
        let failures = Mutex<[String]>([])
        DispatchQueue.concurrentPerform(iterations: count) { index in
            do {
                try world.installer.declare(Self.todo("com.example.at-once\(index)", mime: "application/vnd.example.at-once\(index)"), scope: .user)
            } catch {
                failures.withLock { $0.append("\(index): \(error)") }
            }
        }
        #expect(failures.withLock { $0 } == [])
        let database = world.installer.currentDatabase()
        for index in 0..<count {
            #expect(database.conforms(try PasteboardType(validating: "application/vnd.example.at-once\(index)"), to: .json), "at-once\(index)")
        }
        let subclasses = world.text(world.root + "/user/mime/subclasses")
        #expect((0..<count).allSatisfy { subclasses.contains("application/vnd.example.at-once\($0) application/json") })
    }

    @Test("a declaration waits for its turn a bounded time, then gives up having changed nothing")
    func turnTimesOut() throws {
        let world = try World(turnTimeout: .milliseconds(300))
        // Another declaration holding the turn (its update-mime-database hung): the lock taken here.
        try FileManager.default.createDirectory(atPath: world.userPackages, withIntermediateDirectories: true)
        let holder = open(world.userPackages + "/.pasteboardd-declarations.lock", O_RDWR | O_CREAT | O_CLOEXEC, 0o644)
        #expect(holder >= 0)
        #expect(flock(holder, LOCK_EX) == 0)
        let started = ContinuousClock.now
        let error = #expect(throws: TypeDeclarationError.self) {
            try world.installer.declare(Self.todo(), scope: .user)
        }
        #expect(error?.kind == .unavailable)
        #expect(error?.message.contains("held its turn") == true, "\(String(describing: error))")
        #expect(ContinuousClock.now - started >= .milliseconds(300))
        #expect(!FileManager.default.fileExists(atPath: world.userPackages + "/com.example.todo.xml"))
        // Once the turn is free, the declaration goes through.
        close(holder)
        try world.installer.declare(Self.todo(), scope: .user)
        #expect(FileManager.default.fileExists(atPath: world.userPackages + "/com.example.todo.xml"))
    }

    @Test("an identifier too long for a file name of its own is declared and undeclared all the same")
    func longIdentifier() throws {
        let world = try World()
        // 255 bytes, the most a type may have; two of them sharing their first 250.
        let stem = "com.example." + String(repeating: "x", count: 238)
        let identifiers = [stem + "aaaaa", stem + "bbbbb"]
        #expect(identifiers.allSatisfy { $0.utf8.count == 255 })
        var files: [String] = []
        for (index, identifier) in identifiers.enumerated() {
            files.append(try world.installer.declare(Self.todo(identifier, mime: "application/vnd.example.long\(index)"), scope: .user))
        }
        #expect(Set(files).count == 2)
        #expect(files.allSatisfy { $0.split(separator: "/").last!.utf8.count <= 255 && $0.hasSuffix(".xml") })
        let database = world.installer.currentDatabase()
        #expect(database.declarations.declaration(forIdentifier: identifiers[1])?.mimeType.essence == "application/vnd.example.long1")
        // Declared again, the same file is replaced.
        #expect(try world.installer.declare(Self.todo(identifiers[0], mime: "application/vnd.example.long0"), scope: .user) == files[0])
        #expect(try world.installer.undeclare(identifier: identifiers[0], scope: .user) == files[0])
        #expect(!FileManager.default.fileExists(atPath: files[0]))
        #expect(world.installer.currentDatabase().declarations.all.map(\.identifier) == [identifiers[1]])
    }
}
