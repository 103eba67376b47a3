import DBus
import Foundation
import Testing
import TestSupport

/// `pbctl types`, `info`, `count` and `list`.
struct InspectTests {
    @Test func types() async throws {
        let world = try await PbctlHarness()
        expectSuccess(try await world.pbctl("types"))
        try await world.writeItems("general", [
            [("text/html", Data("<b>".utf8)), ("text/plain;charset=utf-8", Data("b".utf8))],
            [("image/png", Data([0x89])), ("text/html", Data("<img>".utf8))],
        ])
        expectSuccess(try await world.pbctl("types"), stdout: "text/html\ntext/plain;charset=utf-8\nimage/png\n")
    }

    @Test func info() async throws {
        let world = try await PbctlHarness()
        expectSuccess(try await world.pbctl("info"), stdout: "pasteboard: general\ncount: 0\nitems: 0\n")
        try await world.writeItems("general", [
            [("text/html", Data("<b>b</b>".utf8)), ("text/plain;charset=utf-8", Data("b".utf8))],
            [("image/png", Data())],
        ])
        expectSuccess(try await world.pbctl("info"), stdout: """
            pasteboard: general
            count: 1
            items: 2
            item 0:
              text/html\t8 bytes
              text/plain;charset=utf-8\t1 byte
            item 1:
              image/png\t0 bytes

            """)
    }

    @Test func infoJSON() async throws {
        let world = try await PbctlHarness()
        expectSuccess(try await world.pbctl("info", "--json"), stdout: #"{"name":"general","count":0,"items":[]}"# + "\n")
        expectSuccess(try await world.pbctl("copy", input: "hello"))
        expectSuccess(try await world.pbctl("info", "--json"), stdout: #"{"name":"general","count":1,"items":[{"types":["text/plain;charset=utf-8"],"sizes":[5]}]}"# + "\n")
        try await world.writeItems("general", [[("text/html", Data("<b>".utf8)), ("text/plain", Data("b".utf8))], [("image/png", Data([1, 2]))]])
        expectSuccess(try await world.pbctl("info", "--json"), stdout: #"{"name":"general","count":2,"items":[{"types":["text/html","text/plain"],"sizes":[3,1]},{"types":["image/png"],"sizes":[2]}]}"# + "\n")
    }

    /// A secret is marked as `Items` marks it, so that a script can leave it alone.
    @Test func infoSaysWhatIsConcealedOrOwnerOnly() async throws {
        let world = try await PbctlHarness()
        expectSuccess(try await world.pbctl("copy", "--concealed", input: "hunter2"))
        expectSuccess(try await world.pbctl("info", "--json"), stdout: #"{"name":"general","count":1,"items":[{"types":["text/plain;charset=utf-8"],"sizes":[7],"concealed":true}]}"# + "\n")
        try await world.writeItems("general", [[("text/plain", Data("mine".utf8))]], options: [("owner-only", .boolean(true)), ("concealed", .boolean(true))])
        expectSuccess(try await world.pbctl("info", "--json"), stdout: #"{"name":"general","count":2,"items":[{"types":["text/plain"],"sizes":[4],"concealed":true,"owner-only":true}]}"# + "\n")
        // And so does the text a person reads.
        expectSuccess(try await world.pbctl("info"), stdout: "pasteboard: general\ncount: 2\nitems: 1\nitem 0 (concealed, owner-only):\n  text/plain\t4 bytes\n")
        try await world.writeItems("general", [[("text/plain", Data("a".utf8))], [("text/html", Data())]], options: [("owner-only", .boolean(true))])
        expectSuccess(try await world.pbctl("info"), stdout: "pasteboard: general\ncount: 3\nitems: 2\nitem 0 (owner-only):\n  text/plain\t1 byte\nitem 1 (owner-only):\n  text/html\t0 bytes\n")
        expectSuccess(try await world.pbctl("copy", "--concealed", input: "hunter2"))
        expectSuccess(try await world.pbctl("info"), stdout: "pasteboard: general\ncount: 4\nitems: 1\nitem 0 (concealed):\n  text/plain;charset=utf-8\t7 bytes\n")
    }

    @Test func infoJSONEscapesTheName() async throws {
        let world = try await PbctlHarness()
        expectSuccess(try await world.pbctl("-p", #"say "hi"\now"#, "copy", input: "x"))
        expectSuccess(try await world.pbctl("-p", #"say "hi"\now"#, "info", "--json"), stdout: #"{"name":"say \"hi\"\\now","count":1,"items":[{"types":["text/plain;charset=utf-8"],"sizes":[1]}]}"# + "\n")
    }

    @Test func count() async throws {
        let world = try await PbctlHarness()
        expectSuccess(try await world.pbctl("count"), stdout: "0\n")
        expectSuccess(try await world.pbctl("copy", input: "1"))
        expectSuccess(try await world.pbctl("copy", input: "2"))
        expectSuccess(try await world.pbctl("count"), stdout: "2\n")
        expectSuccess(try await world.pbctl("-p", "other", "count"), stdout: "0\n")
    }

    @Test func list() async throws {
        let world = try await PbctlHarness()
        expectSuccess(try await world.pbctl("list"))
        expectSuccess(try await world.pbctl("copy", input: "x"))
        expectSuccess(try await world.pbctl("-p", "find", "copy", input: "y"))
        expectSuccess(try await world.pbctl("-p", "cleared", "clear"))
        expectSuccess(try await world.pbctl("-p", "only-read", "count"), stdout: "0\n")
        expectSuccess(try await world.pbctl("list"), stdout: "cleared\nfind\ngeneral\n")
    }
}
