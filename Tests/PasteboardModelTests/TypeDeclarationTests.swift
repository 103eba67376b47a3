import Foundation
import PasteboardModel
import Testing

/// Declarations: their checks, their packages, and what the database makes of them.
@Suite("Type declarations")
struct TypeDeclarationTests {
    static func todo(_ identifier: String = "com.example.todo", mime: String = "application/vnd.example.todo+json") throws -> TypeDeclaration {
        try TypeDeclaration(identifier: identifier, mimeType: mime, conformsTo: ["public.json"], extensions: [".todo"], comment: "Todo item")
    }

    @Test("a valid declaration resolves its parents to MIME types and cleans its extensions")
    func valid() throws {
        let todo = try Self.todo()
        #expect(todo.identifier == "com.example.todo")
        #expect(todo.mimeType.rawValue == "application/vnd.example.todo+json")
        #expect(todo.parents.map(\.rawValue) == ["application/json"])
        #expect(todo.extensions == ["todo"])
        #expect(todo.comment == "Todo item")
        let plain = try TypeDeclaration(identifier: "org.example.note", mimeType: "text/x-note", conformsTo: ["text/plain;charset=utf-8", "text/plain"])
        #expect(plain.parents.map(\.rawValue) == ["text/plain"], "parameters dropped, duplicates once")
        #expect(plain.comment == "org.example.note", "the identifier when no comment is given")
    }

    @Test(
        "malformed declarations are refused with what to write instead",
        arguments: [
            ("todo", "application/x-todo", ["public.json"], "reverse-DNS"),
            ("com..todo", "application/x-todo", ["public.json"], "reverse-DNS"),
            ("com.example.to do", "application/x-todo", ["public.json"], "reverse-DNS"),
            ("public.todo", "application/x-todo", ["public.json"], "system type identifier"),
            ("com.apple.todo", "application/x-todo", ["public.json"], "system type identifier"),
            ("com.example.todo", "todo", ["public.json"], "not a MIME type"),
            ("com.example.todo", "application/x-todo;charset=utf-8", ["public.json"], "has parameters"),
            ("com.example.todo", "thing/x-todo", ["public.json"], "unknown media type"),
            ("com.example.todo", "application/x-todo", [], "conforms to nothing"),
            ("com.example.todo", "application/x-todo", ["application/x-todo"], "itself"),
            ("com.example.todo", "application/x-todo", ["com.example.undeclared"], "declare it first"),
            ("com.example.todo", "application/x-todo", ["public.content"], "abstract type"),
            ("com.example.todo", "text/*", ["text/plain"], "wildcard"),
            ("com.example.todo", "application/x-todo", ["bad type"], "not a type"),
        ])
    func malformed(identifier: String, mime: String, parents: [String], expected: String) {
        #expect {
            try TypeDeclaration(identifier: identifier, mimeType: mime, conformsTo: parents)
        } throws: { error in
            guard let error = error as? TypeDeclarationError else { return false }
            return error.kind == .invalid && error.message.contains(expected)
        }
    }

    @Test("bad extensions and comments are refused", arguments: [(["a/b"], "x"), (["*"], "x"), ([""], "x"), (["ok"], "two\nlines")])
    func badParts(extensions: [String], comment: String) {
        #expect(throws: TypeDeclarationError.self) {
            try TypeDeclaration(identifier: "com.example.todo", mimeType: "application/x-todo", conformsTo: ["public.json"], extensions: extensions, comment: comment)
        }
    }

    @Test("a package written is read back as the same declaration, escaping included")
    func packageRoundTrip() throws {
        let todo = try TypeDeclaration(
            identifier: "com.example.todo", mimeType: "application/vnd.example.todo+json", conformsTo: ["public.json", "text/plain"],
            extensions: ["todo", "td"], comment: "Todo <items> & \"lists\"")
        let xml = TypeDeclaration.packageXML([todo])
        var problems: [String] = []
        let read = try TypeDeclaration.declarations(inPackage: xml, file: "/x.xml", problems: &problems)
        #expect(problems.isEmpty)
        #expect(read.count == 1)
        #expect(read.first?.identifier == todo.identifier)
        #expect(read.first?.mimeType == todo.mimeType)
        #expect(read.first?.parents == todo.parents)
        #expect(read.first?.extensions == todo.extensions)
        #expect(read.first?.comment == todo.comment)
        #expect(read.first?.file == "/x.xml")
    }

    @Test("a package's other types, and declarations with bad parts, are skipped; the rest stay")
    func packageProblems() throws {
        let xml = """
            <?xml version="1.0"?>
            <!DOCTYPE mime-info>
            <m:mime-info xmlns:m="http://www.freedesktop.org/standards/shared-mime-info" xmlns:p="\(TypeDeclaration.namespace)">
              <m:mime-type type="text/x-not-ours"><m:comment>Not ours</m:comment></m:mime-type>
              <m:mime-type type="not-a-mime"><p:identifier>com.example.bad</p:identifier></m:mime-type>
              <m:mime-type type="application/x-good">
                <m:comment xml:lang="fr">Bon</m:comment><m:comment>Good</m:comment>
                <m:sub-class-of type="text/plain"/><!-- a comment -->
                <p:identifier> com.example.good </p:identifier>
              </m:mime-type>
            </m:mime-info>
            """
        var problems: [String] = []
        let read = try TypeDeclaration.declarations(inPackage: xml, file: "/p.xml", problems: &problems)
        #expect(read.map(\.identifier) == ["com.example.good"])
        #expect(read.first?.comment == "Good", "the comment without a language")
        #expect(problems.count == 1)
        #expect(problems.first?.contains("/p.xml") == true)
    }

    @Test(
        "malformed XML is refused with the line of the problem",
        arguments: ["", "<a>", "<a></b>", "<a x=1/>", "<a>&bogus;</a>", "<p:a/>", "<a/><b/>", "<a x='1' x='2'/>", "<a>\n<b>\n</a>"])
    func malformedXML(text: String) {
        #expect(throws: XMLReader.Malformed.self) { try XMLReader.parse(text) }
    }

    @Test("XML entities, CDATA and namespaces are read")
    func xmlReading() throws {
        let root = try XMLReader.parse(#"<a xmlns="urn:one" xmlns:t="urn:two" k="&lt;&#65;&#x42;&gt;"><t:b><![CDATA[<raw>]]> &amp; more</t:b></a>"#)
        #expect(root.namespace == "urn:one")
        #expect(root.attributes == ["k": "<AB>"])
        #expect(root.children.first?.namespace == "urn:two")
        #expect(root.children.first?.text == "<raw> & more")
    }

    @Test("declared identifiers conform as their MIME types do, in both directions")
    func conformance() throws {
        let declared = DeclaredTypes(declarations: [try Self.todo()])
        let database = MIMEDatabase(subclasses: "application/json application/javascript\n", aliases: "", declarations: declared)
        let identifier = try PasteboardType(validating: "com.example.todo.v2")  // an undeclared identifier stays one
        #expect(!identifier.isMIME)
        let todoMIME = try PasteboardType(validating: "application/vnd.example.todo+json")
        #expect(database.conforms(todoMIME, to: .json), "the declared parent counts before update-mime-database ran")
        #expect(database.conforms(todoMIME, to: try PasteboardType(validating: "application/javascript")), "and transitively")
        #expect(!database.conforms(.json, to: todoMIME))
        #expect(database.declaredMIME(try PasteboardType(validating: "com.example.todo.v2")) == identifier)
        #expect(database.supertypes(of: todoMIME)["application/json"] == 1)
    }

    @Test("a user's declaration of an identifier hides the system's; a MIME type keeps its first owner")
    func precedence() throws {
        let user = try Self.todo()
        let system = try Self.todo(mime: "application/x-todo-old")
        let thief = try Self.todo("com.example.thief")
        let declared = DeclaredTypes(declarations: [user, system, thief])
        #expect(declared.declaration(forIdentifier: "COM.EXAMPLE.TODO")?.mimeType.rawValue == "application/vnd.example.todo+json")
        #expect(declared.declaration(forIdentifier: "com.example.thief") == nil)
        #expect(declared.all.count == 1)
    }
}
