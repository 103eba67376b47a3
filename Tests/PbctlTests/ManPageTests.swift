import DBus
import Foundation
import Testing
import TestSupport

/// The man pages, completions and version that installation puts in front of people.
@Suite("Man pages, completions, version")
struct ManPageTests {
    @Test("The committed man pages are what scripts/generate-man makes from the programs now, and render without warnings")
    func manPagesAreCurrent() async throws {
        let output = try Paths.temporaryDirectory("man")
        defer { try? FileManager.default.removeItem(atPath: output) }
        let generated = try await runProgram(Paths.repository + "/scripts/generate-man", [Paths.products, output])
        #expect(generated.status == 0, "\(generated)")
        for page in ["pbctl.1", "pasteboardd.8"] {
            let fresh = FileManager.default.contents(atPath: output + "/" + page)
            let committed = FileManager.default.contents(atPath: Paths.repository + "/man/" + page)
            #expect(fresh != nil && fresh == committed, "man/\(page) is out of date: run scripts/generate-man")
            let rendered = try await runProgram(
                try X11World.tool("groff", package: "groff-base"), ["-man", "-ww", "-z", Paths.repository + "/man/" + page],
                environment: ["LC_ALL": "C"])
            expect(rendered, status: 0, stderr: "")
        }
        let page = String(decoding: FileManager.default.contents(atPath: Paths.repository + "/man/pbctl.1") ?? Data(), as: UTF8.self)
        for section in ["NAME", "SYNOPSIS", "DESCRIPTION", "OPTIONS", "COMMANDS", "EXIT STATUS", "ENVIRONMENT", "FILES", "EXAMPLES", "SEE ALSO"] {
            #expect(page.contains(".SH \(section)\n"), "pbctl(1) lacks \(section)")
        }
        // Every command is documented, with its own options.
        for command in ["copy", "paste", "types", "info", "count", "list", "clear", "remove", "watch", "history", "restore"] {
            #expect(page.contains(".TP\n\\fB\(command)\\fR"), "pbctl(1) does not document \(command)")
        }
        #expect(page.contains("\\fB\\-\\-concealed\\fR"))
    }

    @Test("pbctl completes its commands in bash, zsh and fish")
    func completions() async throws {
        for shell in ["bash", "zsh", "fish"] {
            let script = try await runPbctl(["--generate-completion-script", shell])
            #expect(script.status == 0, "\(shell): \(script)")
            #expect(script.out.contains("copy") && script.out.contains("watch"), "\(shell)")
        }
    }

    @Test("pbctl --version, pasteboardd --version and the Version property agree")
    func versions() async throws {
        let pbctl = try await runPbctl(["--version"])
        let server = try await runProgram(try Paths.product("pasteboardd"), ["--version"])
        expect(pbctl, status: 0)
        #expect(pbctl.out == server.out)
        #expect(pbctl.out.range(of: #"^\d+\.\d+\.\d+\n$"#, options: .regularExpression) != nil, "\(pbctl.out)")
        let world = try await PbctlHarness()
        let connection = try Connection.connect(address: world.bus.address)
        defer { connection.close() }
        let property = try await connection.call(
            destination: "org.pasteboardd.Pasteboard1", path: "/org/pasteboardd/Pasteboard1", interface: "org.freedesktop.DBus.Properties",
            method: "Get", arguments: [.string("org.pasteboardd.Pasteboard1"), .string("Version")])
        #expect(property.first?.variantValue?.stringValue.map { $0 + "\n" } == pbctl.out)
    }
}
