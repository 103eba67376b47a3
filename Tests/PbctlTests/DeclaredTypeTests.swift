import Foundation
import Testing
import TestSupport

/// `pbctl types declare`, `undeclare` and `show` against a running server, which must honour a
/// declaration at once: the new user's walk-through, with readers that are not Swift.
@Suite("pbctl types declare")
struct DeclaredTypeTests {
    /// Data directories of the test's own (a user's and a system's, then the machine's
    /// database), shared by the server and every pbctl run.
    final class DataDirectories: Sendable {
        let root: String
        let environment: [String: String]

        init() throws {
            root = try Paths.temporaryDirectory("pasteboard-data")
            try FileManager.default.createDirectory(atPath: root + "/system", withIntermediateDirectories: true)
            environment = ["XDG_DATA_HOME": root + "/user", "XDG_DATA_DIRS": root + "/system:/usr/share"]
        }

        deinit { try? FileManager.default.removeItem(atPath: root) }

        var package: String { root + "/user/mime/packages/com.example.todo.xml" }
    }

    static let todoJSON = #"{"title":"Buy milk","done":false}"#
    static let declare = [
        "types", "declare", "com.example.todo", "--mime", "application/vnd.example.todo+json", "--conforms-to", "public.json",
        "--extension", "todo", "--comment", "Todo item",
    ]

    /// ReadData (an exact read) through dbus-python: the data, or the error's name.
    static func pythonReadData(_ world: PbctlHarness, _ type: String) async throws -> String {
        let script = """
            import dbus, sys
            bus = dbus.bus.BusConnection(sys.argv[1])
            pb = dbus.Interface(bus.get_object('org.pasteboardd.Pasteboard1', '/org/pasteboardd/Pasteboard1', introspect=False), 'org.pasteboardd.Pasteboard1')
            try:
                count, data = pb.ReadData('general', dbus.UInt32(0), sys.argv[2], dbus.UInt64(0))
                print(bytes(data).decode())
            except dbus.exceptions.DBusException as e:
                print(e.get_dbus_name())
            """
        let result = try await runProgram("/usr/bin/python3", ["-c", script, world.bus.address, type], timeout: .seconds(30))
        try #require(result.status == 0, "\(result)")
        return String(decoding: result.stdout, as: UTF8.self).trimmingCharacters(in: .newlines)
    }

    /// ReadBest through dbus-python (libdbus underneath, but not this project's binding):
    /// prints the type and the data, or the error's name.
    static func pythonReadBest(_ world: PbctlHarness, _ types: [String]) async throws -> String {
        let script = """
            import dbus, sys
            bus = dbus.bus.BusConnection(sys.argv[1])
            pb = dbus.Interface(bus.get_object('org.pasteboardd.Pasteboard1', '/org/pasteboardd/Pasteboard1', introspect=False), 'org.pasteboardd.Pasteboard1')
            try:
                count, kind, data = pb.ReadBest('general', dbus.UInt32(0), sys.argv[2:], dbus.UInt64(0))
                print(kind, bytes(data).decode())
            except dbus.exceptions.DBusException as e:
                print(e.get_dbus_name())
            """
        let result = try await runProgram("/usr/bin/python3", ["-c", script, world.bus.address] + types, timeout: .seconds(30))
        try #require(result.status == 0, "\(result)")
        return String(decoding: result.stdout, as: UTF8.self).trimmingCharacters(in: .newlines)
    }

    /// `gdbus call` (GLib's own D-Bus implementation) of a method of the interface.
    static func gdbus(_ world: PbctlHarness, _ method: String, _ arguments: String...) async throws -> String {
        let result = try await runProgram(
            try Paths.executable(named: "gdbus"),
            ["call", "--address", world.bus.address, "--dest", "org.pasteboardd.Pasteboard1", "--object-path", "/org/pasteboardd/Pasteboard1",
             "--method", "org.pasteboardd.Pasteboard1." + method] + arguments, timeout: .seconds(20))
        return String(decoding: result.status == 0 ? result.stdout : result.stderr, as: UTF8.self).trimmingCharacters(in: .newlines)
    }

    @Test("a todo copied under its identifier is read as JSON by Python and pbctl once declared, and not after")
    func walkThrough() async throws {
        let data = try DataDirectories()
        let world = try await PbctlHarness(environment: data.environment)
        // Another app copies a todo under its identifier, before anyone declared it.
        expectSuccess(try await world.pbctl("copy", "-t", "com.example.todo", input: Data(Self.todoJSON.utf8), environment: data.environment))
        #expect(try await Self.pythonReadBest(world, ["application/json"]) == "org.pasteboardd.Error.NoSuchType")
        expect(try await world.pbctl("paste", "-t", "application/json", environment: data.environment), status: 1)

        expectSuccess(try await world.pbctl(Self.declare, environment: data.environment))
        #expect(FileManager.default.fileExists(atPath: data.package))

        // At once: no restart, no waiting.
        #expect(try await Self.pythonReadBest(world, ["application/json"]) == "com.example.todo \(Self.todoJSON)")
        #expect(try await Self.pythonReadBest(world, ["text/plain"]) == "com.example.todo \(Self.todoJSON)", "JSON is text")
        #expect(try await Self.gdbus(world, "CanRead", "general", "['application/json']") == "(true,)")
        // Exact reads: the identifier and the declared MIME type are one type now.
        #expect(try await Self.pythonReadData(world, "com.example.todo") == Self.todoJSON)
        #expect(try await Self.pythonReadData(world, "application/vnd.example.todo+json") == Self.todoJSON)
        #expect(try await Self.pythonReadData(world, "application/json") == "org.pasteboardd.Error.NoSuchType")
        let available = try await Self.gdbus(world, "AvailableType", "general", "['image/png', 'public.json']")
        #expect(available == "('public.json',)", "\(available)")
        expectSuccess(try await world.pbctl("paste", "-t", "application/json", environment: data.environment), stdout: Self.todoJSON)
        expectSuccess(try await world.pbctl("paste", "-t", "public.json", environment: data.environment), stdout: Self.todoJSON)

        // A todo copied now under the identifier is stored under the declared MIME type.
        expectSuccess(try await world.pbctl("copy", "-t", "com.example.todo", input: Data(Self.todoJSON.utf8), environment: data.environment))
        expectSuccess(try await world.pbctl("types", environment: data.environment), stdout: "application/vnd.example.todo+json\n")
        #expect(try await Self.pythonReadBest(world, ["com.example.todo"]) == "application/vnd.example.todo+json \(Self.todoJSON)")

        expectSuccess(try await world.pbctl("types", "undeclare", "com.example.todo", environment: data.environment))
        #expect(!FileManager.default.fileExists(atPath: data.package))
        #expect(try await Self.pythonReadBest(world, ["application/json"]) == "org.pasteboardd.Error.NoSuchType")
        #expect(try await Self.gdbus(world, "CanRead", "general", "['application/json']") == "(false,)")
        #expect(try await Self.pythonReadBest(world, ["application/vnd.example.todo+json"]) == "application/vnd.example.todo+json \(Self.todoJSON)")
    }

    @Test("types show prints the identifier, MIME type, every supertype and where it is declared")
    func show() async throws {
        let data = try DataDirectories()
        let world = try await PbctlHarness(server: false)
        expectSuccess(try await world.pbctl(Self.declare, environment: data.environment))
        let expected = """
            identifier: com.example.todo
            mime-type: application/vnd.example.todo+json
            supertypes: application/json application/javascript application/ecmascript application/x-executable text/plain application/octet-stream
            comment: Todo item
            extensions: todo
            declared-in: \(data.package)

            """
        expectSuccess(try await world.pbctl("types", "show", "com.example.todo", environment: data.environment), stdout: expected)
        expectSuccess(try await world.pbctl("types", "show", "application/vnd.example.todo+json", environment: data.environment), stdout: expected)
        let json = try await world.pbctl("types", "show", "--json", "com.example.todo", environment: data.environment)
        let object = try #require(try JSONSerialization.jsonObject(with: json.stdout) as? [String: Any])
        #expect(object["mimeType"] as? String == "application/vnd.example.todo+json")
        #expect((object["supertypes"] as? [String])?.first == "application/json")

        let html = try await world.pbctl("types", "show", "public.html", environment: data.environment)
        expect(html, status: 0)
        let lines = String(decoding: html.stdout, as: UTF8.self).split(separator: "\n")
        #expect(lines.first == "identifier: public.html")
        #expect(lines.contains("mime-type: text/html"))
        #expect(lines.contains("supertypes: text/plain application/octet-stream"))
        #expect(lines.contains("declared-in: /usr/share/mime/text/html.xml"))
        // An identifier is shown as copy takes it: public.utf8-plain-text is UTF-8 text, a
        // subtype of text/plain; the two URL identifiers keep their own names.
        for (asked, mime, supertypes) in [
            ("public.utf8-plain-text", "text/plain;charset=utf-8", "text/plain application/octet-stream"),
            ("text/plain;charset=utf-8", "text/plain;charset=utf-8", "text/plain application/octet-stream"),
            ("public.file-url", "text/uri-list", "text/plain application/octet-stream"),
            ("text/html;charset=utf-8", "text/html;charset=utf-8", "text/html text/plain application/octet-stream"),
        ] {
            let shown = String(decoding: try await world.pbctl("types", "show", asked, environment: data.environment).stdout, as: UTF8.self).split(separator: "\n")
            // A refined type without an Apple identifier of its own is named by itself.
            let identifier = asked == "text/plain;charset=utf-8" ? "public.utf8-plain-text" : asked
            #expect(shown.first == "identifier: \(identifier)", "\(shown)")
            #expect(shown.contains(Substring("mime-type: \(mime)")), "\(shown)")
            #expect(shown.contains(Substring("supertypes: \(supertypes)")), "\(shown)")
        }

        expect(
            try await world.pbctl("types", "show", "com.example.nothing", environment: data.environment), status: 1,
            stdout: "", stderr: "pbctl: com.example.nothing is not declared; declare it with `pbctl types declare com.example.nothing --mime TYPE --conforms-to TYPE`\n")
        // A type with a '/' that is no MIME type is kept as written: nothing to declare it as.
        expect(
            try await world.pbctl("types", "show", "a/b/c", environment: data.environment), status: 1,
            stdout: "", stderr: "pbctl: \"a/b/c\" is no MIME type, only a name kept as written; the MIME database knows nothing of it\n")
    }

    @Test(
        "bad declarations exit 65 with what to fix, and write nothing",
        arguments: [
            (["types", "declare", "todo", "--mime", "application/x-todo", "--conforms-to", "public.json"], "reverse-DNS"),
            (["types", "declare", "com.example.todo", "--mime", "todo", "--conforms-to", "public.json"], "not a MIME type"),
            (["types", "declare", "com.example.todo", "--mime", "application/json", "--conforms-to", "text/plain"], "system type public.json"),
            (["types", "declare", "com.example.todo", "--mime", "application/json", "--conforms-to", "public.json"], "itself: public.json is application/json, the MIME type given it; give com.example.todo a MIME type of its own with --mime"),
            (["types", "declare", "com.example.todo", "--mime", "application/x-todo", "--conforms-to", "com.example.nope"], "declare it first"),
            (["types", "declare", "com.example.todo", "--mime", "application/x-todo", "--conforms-to", "public.json", "--extension", "a/b"], "extension"),
            (["types", "declare", "com.example.todo", "--mime", "application/x-todo", "--conforms-to", "public.json", "--comment", "a\u{1}b"], "control characters"),
        ])
    func refused(arguments: [String], expected: String) async throws {
        let data = try DataDirectories()
        let world = try await PbctlHarness(environment: data.environment)
        expectSuccess(try await world.pbctl("copy", input: "kept"))
        let result = try await world.pbctl(arguments, environment: data.environment)
        expect(result, status: 65, stdout: "")
        #expect(String(decoding: result.stderr, as: UTF8.self).hasPrefix("pbctl: "))
        #expect(String(decoding: result.stderr, as: UTF8.self).contains(expected), "\(result)")
        #expect(!FileManager.default.fileExists(atPath: data.root + "/user/mime/packages"))
        expectSuccess(try await world.pbctl("paste"), stdout: "kept")
    }

    @Test("a declaration without --conforms-to is a usage error, as one without --mime is, and writes nothing")
    func requiredOptions() async throws {
        let data = try DataDirectories()
        let world = try await PbctlHarness(server: false)
        for arguments in [
            ["types", "declare", "com.example.todo", "--mime", "application/x-todo"],
            ["types", "declare", "com.example.todo", "--mime", "application/x-todo", "--conforms-to"],
            ["types", "declare", "com.example.todo", "--conforms-to", "public.json"],
        ] {
            let result = try await world.pbctl(arguments, environment: data.environment)
            expect(result, status: 64, stdout: "")
            let message = String(decoding: result.stderr, as: UTF8.self)
            #expect(message.contains(arguments.contains("--mime") ? "--conforms-to" : "--mime"), "\(arguments): \(message)")
            #expect(message.contains("Usage: pbctl types declare <IDENTIFIER> --mime <TYPE> --conforms-to <TYPE> ..."), "\(message)")
        }
        #expect(!FileManager.default.fileExists(atPath: data.root + "/user/mime/packages"))
    }

    @Test("undeclaring what is not declared exits 1, what another type conforms to or what is no identifier 65; a system declaration without root's rights exits 74")
    func undeclareAndRights() async throws {
        let data = try DataDirectories()
        let world = try await PbctlHarness(server: false)
        expect(try await world.pbctl("types", "undeclare", "com.example.todo", environment: data.environment), status: 1)
        // A type another conforms to: refused (65), saying which, and both stay declared.
        expectSuccess(try await world.pbctl(Self.declare, environment: data.environment))
        expectSuccess(try await world.pbctl(
            "types", "declare", "com.example.checklist", "--mime", "application/vnd.example.checklist+json", "--conforms-to", "com.example.todo",
            environment: data.environment))
        let parent = try await world.pbctl("types", "undeclare", "com.example.todo", environment: data.environment)
        expect(parent, status: 65, stdout: "")
        #expect(String(decoding: parent.stderr, as: UTF8.self).contains("com.example.checklist"), "\(parent)")
        let child = try await world.pbctl("types", "show", "com.example.checklist", environment: data.environment)
        #expect(child.status == 0 && child.out.contains("application/vnd.example.todo+json"), "\(child)")
        expectSuccess(try await world.pbctl("types", "undeclare", "com.example.checklist", environment: data.environment))
        expectSuccess(try await world.pbctl("types", "undeclare", "com.example.todo", environment: data.environment))
        let path = try await world.pbctl("types", "undeclare", "../evil", environment: data.environment)
        expect(path, status: 65, stdout: "")
        #expect(String(decoding: path.stderr, as: UTF8.self).contains("is not a type identifier"), "\(path)")
        // A folder no one may write in, root included: a file where the folder should be.
        try Data().write(to: URL(fileURLWithPath: data.root + "/system/mime"))
        let result = try await world.pbctl(Self.declare + ["--system"], environment: data.environment)
        expect(result, status: 74, stdout: "")
        #expect(String(decoding: result.stderr, as: UTF8.self).contains("com.example.todo.xml"))
    }

    @Test("a malformed package dropped in while the server runs is logged and ignored; declarations keep working")
    func malformedPackage() async throws {
        let data = try DataDirectories()
        let world = try await PbctlHarness(environment: data.environment)
        expectSuccess(try await world.pbctl(Self.declare, environment: data.environment))
        let broken = data.root + "/user/mime/packages/broken.xml"
        try Data("<mime-info xmlns:p=\"https://pasteboardd.org/ns/uttype\"><mime-type".utf8).write(to: URL(fileURLWithPath: broken))
        expectSuccess(try await world.pbctl("copy", "-t", "com.example.todo", input: Data(Self.todoJSON.utf8), environment: data.environment))
        #expect(try await Self.pythonReadBest(world, ["application/json"]) == "application/vnd.example.todo+json \(Self.todoJSON)")
        let server = try #require(world.server)
        #expect(server.log.contains("broken.xml"), "\(server.log)")
    }

    @Test("the server reads a changed MIME database on a thread of its own, before any call needs it")
    func readInTheBackground() async throws {
        let data = try DataDirectories()
        let world = try await PbctlHarness(environment: data.environment)
        expectSuccess(try await world.pbctl(Self.declare, environment: data.environment))
        // A call that matches types reads the database, and so starts the watch.
        #expect(try await Self.gdbus(world, "CanRead", "general", "['application/json']") == "(false,)")
        let server = try #require(world.server)
        #expect(!server.log.contains("broken.xml"))
        let broken = data.root + "/user/mime/packages/broken.xml"
        try Data("<mime-info xmlns:p=\"https://pasteboardd.org/ns/uttype\"><mime-type".utf8).write(to: URL(fileURLWithPath: broken))
        // A machine out of inotify instances (the tests run a hundred buses at once, each
        // dbus-daemon holding one) gets the stand-in, which reads at the next call instead.
        if server.log.contains("no inotify instance left") {
            #expect(try await Self.gdbus(world, "CanRead", "general", "['application/json']") == "(false,)")
            #expect(server.log.contains("broken.xml"), "\(server.log)")
            return
        }
        // No call from here on: only the server's own reading can find the broken package.
        let deadline = ContinuousClock.now + .seconds(30)
        while !server.log.contains("broken.xml") {
            guard ContinuousClock.now < deadline else {
                Issue.record("the server did not read the database after it changed:\n\(server.log)")
                return
            }
            try await Task.sleep(for: .milliseconds(20))
        }
    }

    @Test("`pbctl types` still lists the pasteboard's types, and `types list` too")
    func listing() async throws {
        let world = try await PbctlHarness()
        expectSuccess(try await world.pbctl("copy", "-t", "text/html", "-t", "text/plain", input: "<b>"))
        expectSuccess(try await world.pbctl("types"), stdout: "text/html\ntext/plain\n")
        expectSuccess(try await world.pbctl("types", "list"), stdout: "text/html\ntext/plain\n")
    }
}
