import Foundation
import Synchronization
import Testing
import TestSupport

@testable import Pasteboard

// The examples of `Pasteboard.docc/DeclaringTypes.md`, run against a private bus: the same
// declaration, the same reads and writes, with an identifier of the test run's own (the
// process's types are declared once per process). Keep the two in step.

/// A type this test process declares for every program, with the Swift helper, in the data
/// directory `scripts/test` gives the tests (never the developer's own).
enum DeclaredTodo {
    static let suffix = UUID().uuidString.prefix(8).lowercased()
    static let identifier = "org.pasteboardd.tests.todo-\(suffix)"
    static let mimeType = "application/vnd.pasteboardd-tests.todo-\(suffix)+json"

    /// Installed on first use, as an app does before it first names the type.
    static let type: UTType = {
        _ = try? UTTypeDeclaration.install([
            UTTypeDeclaration(identifier: identifier, mimeType: mimeType, conformingTo: [.json], filenameExtensions: ["todo"], description: "Todo item")
        ])
        return UTType(exportedAs: identifier, conformingTo: .json)
    }()

    struct Item: Codable, Equatable, Transferable {
        var title: String
        static var transferRepresentation: some TransferRepresentation {
            CodableRepresentation(contentType: DeclaredTodo.type)
        }
    }
}

/// A type declared with `pbctl types declare` by someone else, before the Swift app starts:
/// its `UTType` is made only then (``current``), as an app's `static let` would be.
enum PbctlDeclaredTodo {
    static let suffix = UUID().uuidString.prefix(8).lowercased()
    static let identifier = "org.pasteboardd.tests.pbctl-todo-\(suffix)"
    static let mimeType = "application/vnd.pasteboardd-tests.pbctl-todo-\(suffix)+json"
    static let current = Mutex<UTType>(.json)

    struct Item: Codable, Equatable, Transferable {
        var title: String
        static var transferRepresentation: some TransferRepresentation {
            CodableRepresentation(contentType: PbctlDeclaredTodo.current.withLock { $0 })
        }
    }
}

@Suite("Types declared for every program")
struct DeclaredTypeBindingTests {
    /// The tests' own data directory: a declaration must never land in the developer's.
    static func requireTestDataHome() throws {
        let dataHome = ProcessInfo.processInfo.environment["XDG_DATA_HOME"] ?? ""
        try #require(dataHome.contains("pasteboardd-test"), "run the tests with scripts/test, which gives them a data directory of their own (XDG_DATA_HOME is \(dataHome))")
    }

    @Test("UTType(exportedAs:) takes the declared MIME type, and a todo crosses between pbctl and Swift as JSON")
    func declaredForEveryone() async throws {
        try Self.requireTestDataHome()
        let todo = DeclaredTodo.type
        defer { try? UTTypeDeclaration.uninstall(identifiers: [DeclaredTodo.identifier]) }
        #expect(todo.pasteboardType == DeclaredTodo.mimeType)
        #expect(UTType(mimeType: DeclaredTodo.mimeType) == todo)
        #expect(UTType(DeclaredTodo.identifier)?.preferredMIMEType == DeclaredTodo.mimeType)
        #expect(todo.conforms(to: .json) && todo.conforms(to: .text))

        let world = try await World()
        // Another program copies a todo under the identifier; the Swift app reads it.
        let json = #"{"title":"Buy milk"}"#
        #expect(try await world.pbctl("copy", "-t", DeclaredTodo.identifier, input: Data(json.utf8)).status == 0)
        #expect(try await world.pbctl("types").out == DeclaredTodo.mimeType + "\n")
        let read = try await world.pasteboard().loadTransferable(type: DeclaredTodo.Item.self)
        #expect(read == DeclaredTodo.Item(title: "Buy milk"))

        // The Swift app copies one; a program that knows only JSON pastes it.
        try await world.pasteboard().clearContents()
        try await world.pasteboard().writeObjects([DeclaredTodo.Item(title: "Walk the dog")])
        let pasted = try await world.pbctl("paste", "-t", "application/json")
        #expect(pasted.status == 0)
        #expect(try JSONDecoder().decode(DeclaredTodo.Item.self, from: pasted.stdout) == DeclaredTodo.Item(title: "Walk the dog"))
    }

    @Test("declared with pbctl, a type is known to a Swift app started after, which reads a todo another program copied")
    func declaredWithPbctl() async throws {
        try Self.requireTestDataHome()
        let world = try await World()
        let declare = try await world.pbctl(
            "types", "declare", PbctlDeclaredTodo.identifier, "--mime", PbctlDeclaredTodo.mimeType, "--conforms-to", "public.json")
        #expect(declare.status == 0, "\(declare)")
        defer { _ = try? TypeDeclarationInstaller().undeclare(identifier: PbctlDeclaredTodo.identifier, scope: .user) }
        // The app starts now: it reads the MIME database afresh, and names its type.
        MIMEDatabase.reload()
        let todo = UTType(exportedAs: PbctlDeclaredTodo.identifier, conformingTo: .json)
        PbctlDeclaredTodo.current.withLock { $0 = todo }
        #expect(todo.pasteboardType == PbctlDeclaredTodo.mimeType)

        let json = #"{"title":"Buy milk"}"#
        #expect(try await world.pbctl("copy", "-t", PbctlDeclaredTodo.identifier, input: Data(json.utf8)).status == 0)
        #expect(try await world.pasteboard().loadTransferable(type: PbctlDeclaredTodo.Item.self) == PbctlDeclaredTodo.Item(title: "Buy milk"))
        #expect(try await world.pasteboard().string(forType: .json) == json, "read as JSON by the server's conformance")
    }

    @Test("a bad declaration throws what to change, and installs nothing")
    func refused() throws {
        try Self.requireTestDataHome()
        #expect {
            try UTTypeDeclaration.install([UTTypeDeclaration(identifier: "org.pasteboardd.tests.bad", mimeType: "application/json", conformingTo: [.plainText])])
        } throws: { error in
            guard let error = error as? TypeDeclarationError else { return false }
            return error.kind == .conflict
                && error.message.hasPrefix("application/json is the system type public.json; give org.pasteboardd.tests.bad a MIME type of its own")
        }
        #expect(UTType("org.pasteboardd.tests.bad")?.preferredMIMEType == nil)
        #expect {
            try UTTypeDeclaration.install([UTTypeDeclaration(identifier: "org.pasteboardd.tests.abstract", mimeType: "image/x-tests", conformingTo: [.content])])
        } throws: { error in
            (error as? TypeDeclarationError)?.kind == .invalid
        }
    }
}
