import ArgumentParser
import PasteboardModel

/// `pbctl types declare`: a type declared once for every program, as a shared-mime-info
/// package (see ``TypeDeclarationInstaller``).
struct DeclareType: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "declare",
        abstract: "Declare a type for every program: its MIME type and what it conforms to.",
        discussion: """
            Writes a shared-mime-info package (~/.local/share/mime/packages/IDENTIFIER.xml, or \
            under the first of XDG_DATA_DIRS with --system) and runs update-mime-database, so \
            pasteboardd, pbctl, GTK, Qt and file managers all learn the type. A running \
            pasteboardd honours it at once. Declaring an identifier again replaces it.
            """)

    @Argument(help: ArgumentHelp("The type's reverse-DNS identifier, such as com.example.todo.", valueName: "IDENTIFIER"))
    var identifier: String

    @Option(help: ArgumentHelp("The MIME type its data is written under, such as application/vnd.example.todo+json.", valueName: "TYPE"))
    var mime: String

    @Option(
        name: .customLong("conforms-to"), parsing: .upToNextOption,
        help: ArgumentHelp("The types it conforms to: MIME types, Apple identifiers or declared identifiers (public.json).", valueName: "TYPE"))
    var conformsTo: [String]

    @Option(name: .customLong("extension"), help: ArgumentHelp("A file name extension, without the dot (repeatable).", valueName: "EXT"))
    var extensions: [String] = []

    @Option(help: ArgumentHelp("A description for people (default: the identifier).", valueName: "TEXT"))
    var comment: String?

    @Flag(help: "Declare it for every user of the machine (needs root).")
    var system = false

    func run() async throws {
        try declarationCommand { () throws(TypeDeclarationError) in
            let installer = TypeDeclarationInstaller()
            let declaration = try TypeDeclaration(
                identifier: identifier, mimeType: mime, conformsTo: conformsTo, extensions: extensions,
                comment: comment, declared: installer.currentDatabase().declarations)
            try installer.declare(declaration, scope: system ? .system : .user)
        }
    }
}

/// `pbctl types undeclare`: removes a declaration made with `declare`.
struct UndeclareType: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "undeclare", abstract: "Remove a type's declaration and update the MIME database.")

    @Argument(help: ArgumentHelp("The identifier declared.", valueName: "IDENTIFIER"))
    var identifier: String

    @Flag(help: "Remove the declaration made for every user (needs root).")
    var system = false

    func run() async throws {
        try declarationCommand { () throws(TypeDeclarationError) in
            try TypeDeclarationInstaller().undeclare(identifier: identifier, scope: system ? .system : .user)
        }
    }
}

/// `pbctl types show`: what the MIME database knows of a type.
struct ShowType: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "show",
        abstract: "Show a type's identifier, MIME type, every supertype and where it is declared.")

    @Argument(help: ArgumentHelp("An identifier (com.example.todo, public.json) or a MIME type.", valueName: "TYPE"))
    var type: String

    @Flag(help: "Print one JSON object: {\"identifier\", \"mimeType\", \"supertypes\", \"comment\", \"extensions\", \"declaredIn\"}.")
    var json = false

    func run() async throws {
        try declarationCommand { () throws(TypeDeclarationError) in
            let description = try TypeDescription(type, installer: TypeDeclarationInstaller())
            Output.line(json ? description.json : description.text)
        }
    }
}

/// Runs a declaration command, turning its errors into the contract's exit statuses: 65 for
/// a declaration refused (malformed or conflicting), 1 for a type not declared, 69 when the
/// MIME database tools are missing, 74 when a file cannot be written.
private func declarationCommand(_ body: () throws(TypeDeclarationError) -> Void) throws {
    do {
        try body()
    } catch {
        Output.error(error.message)
        let status: ExitStatus =
            switch error.kind {
            case .invalid, .conflict: .refused
            case .notDeclared: .nothing
            case .unavailable: .unavailable
            case .io: .ioError
            }
        throw ExitCode(status.rawValue)
    }
}

extension TypeDescription {
    /// `key: value` lines, one per part; supertypes and extensions separated by spaces.
    var text: String {
        var lines = ["identifier: \(identifier)", "mime-type: \(mimeType)", "supertypes: \(supertypes.joined(separator: " "))"]
        if !comment.isEmpty { lines.append("comment: \(comment)") }
        if !extensions.isEmpty { lines.append("extensions: \(extensions.joined(separator: " "))") }
        lines.append("declared-in: \(declaredIn.isEmpty ? "-" : declaredIn)")
        return lines.joined(separator: "\n")
    }

    var json: String {
        "{\"identifier\":\(Output.json(identifier)),\"mimeType\":\(Output.json(mimeType)),\"supertypes\":\(Output.json(supertypes)),"
            + "\"comment\":\(Output.json(comment)),\"extensions\":\(Output.json(extensions)),\"declaredIn\":\(Output.json(declaredIn))}"
    }
}
