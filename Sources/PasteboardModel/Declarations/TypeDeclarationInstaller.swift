#if canImport(Glibc)
import Glibc
#endif
import Foundation

/// Installs and removes type declarations: a package in `mime/packages/`, then
/// `update-mime-database`, with everything checked first and undone on failure, so the MIME
/// database is never left broken.
///
/// `pbctl types declare` and the Swift bindings' `UTType.installDeclarations` both come here.
/// A declaration is one package per identifier, `DIR/mime/packages/IDENTIFIER.xml` (see
/// ``packageFileName(for:)`` for an identifier too long for that), where
/// `DIR` is `$XDG_DATA_HOME` (default `~/.local/share`) for ``Scope/user`` and the first of
/// `$XDG_DATA_DIRS` (default `/usr/local/share`) for ``Scope/system``.
///
/// Declarations made at the same time in one data directory take turns (``withTurn(in:_:)``):
/// `update-mime-database` renames its files into place and fails when another run moves them
/// first, and the checks of one must see what the other declared.
///
/// ```swift
/// let installer = TypeDeclarationInstaller()
/// let todo = try TypeDeclaration(identifier: "com.example.todo",
///                                mimeType: "application/vnd.example.todo+json", conformsTo: ["public.json"])
/// let file = try installer.declare(todo, scope: .user)   // ~/.local/share/mime/packages/com.example.todo.xml
/// try installer.undeclare(identifier: "com.example.todo", scope: .user)
/// ```
public struct TypeDeclarationInstaller: Sendable {
    /// Where a declaration goes.
    public enum Scope: Sendable {
        /// This user's data directory: no privileges needed.
        case user
        /// The system's (usually `/usr/local/share`): every user of the machine; needs root.
        case system
    }

    /// The environment the XDG directories are taken from.
    public let environment: [String: String]
    /// How long a declaration waits for its turn in a data directory (see ``withTurn(in:writing:_:)``)
    /// before giving up: a declaration takes well under a second, so only one whose
    /// `update-mime-database` hangs holds the turn this long.
    public let turnTimeout: Duration

    public init(environment: [String: String] = ProcessInfo.processInfo.environment, turnTimeout: Duration = .seconds(60)) {
        self.environment = environment
        self.turnTimeout = turnTimeout
    }

    /// Every data directory, most important first.
    public var searchDirectories: [String] {
        MIMEDatabase.searchDirectories(environment: environment)
    }

    /// The data directory of a scope.
    public func dataDirectory(_ scope: Scope) -> String {
        switch scope {
        case .user:
            if let dataHome = environment["XDG_DATA_HOME"], dataHome.hasPrefix("/") { return dataHome }
            if let home = environment["HOME"], home.hasPrefix("/") { return home + "/.local/share" }
            // No HOME (a service's environment): the account's home folder.
            guard let account = getpwuid(getuid()), let home = account.pointee.pw_dir else { return "/.local/share" }
            return String(cString: home) + "/.local/share"
        case .system:
            let directories = (environment["XDG_DATA_DIRS"] ?? "").split(separator: ":").map(String.init).filter { $0.hasPrefix("/") }
            return directories.first ?? "/usr/local/share"
        }
    }

    /// The database as it is now on disk (not this process's cached one).
    public func currentDatabase() -> MIMEDatabase {
        MIMEDatabase(directories: searchDirectories)
    }

    // MARK: Declaring

    /// Writes a declaration's package and updates the MIME database.
    ///
    /// Declaring the same identifier again in the same place replaces its declaration.
    ///
    /// - Returns: The package's path.
    /// - Throws: ``TypeDeclarationError``: ``TypeDeclarationError/Kind/conflict`` when the
    ///   identifier or the MIME type is already another type's, or a parent would make a
    ///   cycle; ``TypeDeclarationError/Kind/unavailable`` when `update-mime-database` is
    ///   missing or fails; ``TypeDeclarationError/Kind/io`` when the package cannot be written.
    @discardableResult
    public func declare(_ declaration: TypeDeclaration, scope: Scope) throws(TypeDeclarationError) -> String {
        let mimeFolder = dataDirectory(scope) + "/mime"
        let path = mimeFolder + "/packages/" + Self.packageFileName(for: declaration.identifier)
        // Checked before the turn too, so that a refused declaration makes no folder.
        try checkConflicts(declaration, at: path, database: currentDatabase())
        let tool = try updateTool()
        return try withTurn(in: mimeFolder, writing: path) { () throws(TypeDeclarationError) -> String in
            // Again: a declaration made while this one waited may conflict with it.
            try checkConflicts(declaration, at: path, database: currentDatabase())
            let previous = FileManager.default.contents(atPath: path)
            if let previous, previous.firstRange(of: Data(TypeDeclaration.namespace.utf8)) == nil {
                throw .conflict("\(path) exists and is not a type declaration; move it away or choose another identifier")
            }
            try write(Data(TypeDeclaration.packageXML([declaration]).utf8), to: path)
            try update(mimeFolder, with: tool, orRestore: previous, at: path)
            return path
        }
    }

    /// The file name of `identifier`'s package: `IDENTIFIER.xml`, or, when that would be longer
    /// than a file name may be (255 bytes; an identifier may have as many), the identifier's
    /// first 200 bytes, `_`, and a digest of the whole (FNV-1a, 16 hexadecimal digits), so
    /// that two long identifiers sharing a beginning still get two files, and no identifier's
    /// own name (which has no `_`) is one of them. The package names the identifier inside;
    /// the file's name only has to be its own.
    static func packageFileName(for identifier: String) -> String {
        let bytes = Array(identifier.utf8)
        guard bytes.count + 4 > 255 else { return identifier + ".xml" }
        let digits = String(FNV1a.hash(bytes), radix: 16)
        let digest = String(repeating: "0", count: 16 - digits.count) + digits
        // Identifiers are ASCII (``TypeDeclaration/validate(identifier:)``): any cut is whole characters.
        return String(decoding: bytes.prefix(200), as: UTF8.self) + "_" + digest + ".xml"
    }

    /// Runs `body` holding the turn of the data directory whose MIME folder is `mimeFolder`:
    /// an exclusive `flock` on `mime/packages/.pasteboardd-declarations.lock`, waited for up
    /// to ``turnTimeout``.
    /// (The lock is advisory: it orders declarations made here, not a package copied in by
    /// hand, which `update-mime-database` takes as it finds it.) A failure names `path`, what
    /// the caller was about to write.
    private func withTurn<T>(in mimeFolder: String, writing path: String, _ body: () throws(TypeDeclarationError) -> T) throws(TypeDeclarationError) -> T {
        let packages = mimeFolder + "/packages"
        let failed = { (code: Int32) in Self.ioError("cannot write \(path)", code) }
        if let code = FileCalls.makeDirectories(packages) { throw failed(code) }
        let descriptor = open(packages + "/.pasteboardd-declarations.lock", O_RDWR | O_CREAT | O_CLOEXEC, 0o644)
        guard descriptor >= 0 else { throw failed(errno) }
        defer { close(descriptor) }
        let deadline = ContinuousClock.now + turnTimeout
        while flock(descriptor, LOCK_EX | LOCK_NB) != 0 {
            guard errno == EWOULDBLOCK || errno == EINTR else { throw failed(errno) }
            guard ContinuousClock.now < deadline else {
                throw .init(.unavailable, "another declaration in \(packages) has held its turn for over \(turnTimeout) (an update-mime-database that does not finish?); nothing was changed: try again once it is done")
            }
            usleep(20_000)
        }
        return try body()
    }

    /// Removes the declaration of `identifier` made in `scope` and updates the MIME database.
    ///
    /// - Returns: The path of the package removed.
    /// - Throws: ``TypeDeclarationError/Kind/notDeclared`` when `scope` has no declaration of
    ///   it (the message names where it is declared, if anywhere);
    ///   ``TypeDeclarationError/Kind/conflict`` when another declaration conforms to it; or as
    ///   ``declare(_:scope:)``.
    @discardableResult
    public func undeclare(identifier: String, scope: Scope) throws(TypeDeclarationError) -> String {
        // What is no identifier (`../x`) is refused as such, not looked for.
        try TypeDeclaration.validate(identifier: identifier)
        let directory = dataDirectory(scope)
        let mimeFolder = directory + "/mime"
        // Nothing declared here (no packages folder, or not this identifier): said without
        // taking the turn, which needs the right to write there.
        guard FileManager.default.fileExists(atPath: mimeFolder + "/packages"),
            DeclaredTypes(directories: [directory]).declaration(forIdentifier: identifier) != nil
        else {
            return try undeclare(identifier: identifier, in: directory, scope: scope)
        }
        return try withTurn(in: mimeFolder, writing: mimeFolder + "/packages") { () throws(TypeDeclarationError) -> String in
            try undeclare(identifier: identifier, in: directory, scope: scope)
        }
    }

    /// ``undeclare(identifier:scope:)``, holding the data directory's turn when it has packages.
    private func undeclare(identifier: String, in directory: String, scope: Scope) throws(TypeDeclarationError) -> String {
        let mimeFolder = directory + "/mime"
        guard let declaration = DeclaredTypes(directories: [directory]).declaration(forIdentifier: identifier),
            let path = declaration.file
        else {
            if let elsewhere = DeclaredTypes(directories: searchDirectories).declaration(forIdentifier: identifier) {
                let hint = scope == .user ? "; undeclare it with --system (as root)" : ""
                throw .init(.notDeclared, "\(identifier) is declared in \(elsewhere.file ?? "another data directory"), not in \(mimeFolder)/packages\(hint)")
            }
            throw .init(.notDeclared, "\(identifier) is not declared in \(mimeFolder)/packages; `pbctl types show \(identifier)` tells what is known of it")
        }
        try refuseLosing(declaration, among: DeclaredTypes(directories: searchDirectories))
        let tool = try updateTool()
        let previous = FileManager.default.contents(atPath: path)
        guard unlink(path) == 0 else {
            throw Self.ioError("cannot remove \(path)", errno)
        }
        try update(mimeFolder, with: tool, orRestore: previous, at: path)
        return path
    }

    // MARK: Checks

    private func checkConflicts(_ declaration: TypeDeclaration, at path: String, database: MIMEDatabase) throws(TypeDeclarationError) {
        let declared = database.declarations
        let mime = declaration.mimeType
        if let existing = declared.declaration(forIdentifier: declaration.identifier), existing.mimeType != mime {
            guard existing.file == path else {
                throw .conflict("\(declaration.identifier) is already declared as \(existing.mimeType) in \(existing.file ?? "the MIME database"); undeclare it there first, or declare it with the same MIME type")
            }
            // Declared again under another MIME type: the one it replaces goes.
            try refuseLosing(existing, among: declared)
        }
        if let owner = declared.declaration(forMIME: mime), owner.identifier.lowercased() != declaration.identifier.lowercased() {
            throw .conflict("\(mime) is already the MIME type of \(owner.identifier) (\(owner.file ?? "the MIME database")); choose a MIME type of your own, such as \(Self.suggestedMIME(for: declaration.identifier))")
        }
        if let apple = mime.appleIdentifier {
            throw .conflict("\(mime) is the system type \(apple); give \(declaration.identifier) a MIME type of its own, such as \(Self.suggestedMIME(for: declaration.identifier))+json")
        }
        let aliases = aliases()
        let known = knownTypes(aliases: aliases)
        if declared.declaration(forMIME: mime) == nil, let target = aliases[mime.essence] {
            throw .conflict("\(mime) is another name of \(target) in the MIME database (an alias); give \(declaration.identifier) a MIME type of its own, such as \(Self.suggestedMIME(for: declaration.identifier))")
        }
        if declared.declaration(forMIME: mime) == nil, known.contains(mime.essence) {
            throw .conflict("\(mime) is already a type of the MIME database; give \(declaration.identifier) a MIME type of its own, such as \(Self.suggestedMIME(for: declaration.identifier))")
        }
        for parent in declaration.parents {
            if database.supertypes(of: parent)[mime.essence] != nil {
                throw .conflict("\(declaration.identifier) cannot conform to \(parent), which already conforms to \(mime): that would be a cycle")
            }
            let isKnown = known.isEmpty || known.contains(parent.essence) || declared.declaration(forMIME: parent) != nil
                || parent.essence == "text/plain" || parent.essence == "application/octet-stream"
                || MIMEDatabase.wildcardMedia(parent.essence).map(MIMEDatabase.standardMedia.contains) == true
            guard isKnown else {
                throw .invalid("\(parent) is not a type the MIME database knows; check its spelling (`pbctl types show \(parent)`), or declare it first")
            }
        }
    }

    /// Refuses to take `declaration`'s MIME type out of the database while another declaration
    /// conforms to it: that one would name a parent the database no longer knows, which
    /// ``declare(_:scope:)`` itself refuses.
    private func refuseLosing(_ declaration: TypeDeclaration, among declared: DeclaredTypes) throws(TypeDeclarationError) {
        let children = declared.all.filter { other in
            other.identifier.lowercased() != declaration.identifier.lowercased() && other.parents.contains { $0.essence == declaration.mimeType.essence }
        }
        guard let child = children.first else { return }
        let more = children.count > 1 ? " (and \(children.count - 1) more)" : ""
        throw .conflict("\(child.identifier)\(more) conforms to \(declaration.identifier), as \(declaration.mimeType) (\(child.file ?? "the MIME database")); undeclare it first, or declare it again without that parent")
    }

    /// Every MIME type the databases list (`mime/types`) and every alias they know of one
    /// (`aliases`, those of ``aliases()``), lowercased; empty when no database is installed.
    func knownTypes(aliases: [String: String]) -> Set<String> {
        var types = Set(aliases.keys)
        for directory in searchDirectories {
            guard let text = try? String(contentsOfFile: directory + "/mime/types", encoding: .utf8) else { continue }
            for line in text.split(whereSeparator: \.isNewline) where !line.isEmpty {
                types.insert(line.lowercased())
            }
        }
        return types
    }

    /// The databases' aliases (`mime/aliases`: `text/x-csv` is `text/csv`), lowercased, each
    /// with the type it names. An alias is another type's name: declaring it would take it
    /// from that type.
    func aliases() -> [String: String] {
        var aliases: [String: String] = [:]
        for directory in searchDirectories.reversed() {
            guard let text = try? String(contentsOfFile: directory + "/mime/aliases", encoding: .utf8) else { continue }
            for line in text.split(whereSeparator: \.isNewline) {
                let fields = line.split(separator: " ")
                guard fields.count == 2 else { continue }
                aliases[fields[0].lowercased()] = fields[1].lowercased()
            }
        }
        return aliases
    }

    // MARK: Files and the database tool

    private func write(_ data: Data, to path: String) throws(TypeDeclarationError) {
        let folder = String(path[..<path.lastIndex(of: "/")!])
        let temporary = folder + "/.\(UInt32.random(in: 0...UInt32.max)).xml-new"
        let failed = { (code: Int32) in Self.ioError("cannot write \(path)", code) }
        if let code = FileCalls.makeDirectories(folder) { throw failed(code) }
        if let code = FileCalls.write(data, to: temporary) { throw failed(code) }
        // rename(2) replaces the package at once: update-mime-database never reads half of one.
        guard rename(temporary, path) == 0 else {
            let code = errno
            unlink(temporary)
            throw failed(code)
        }
    }

    /// Compiles the database after the package at `path` changed; when that fails, puts the
    /// package back as it was (`previous`, or no file) and compiles that again, so the database
    /// is left as it was found. This process's own database is read again either way.
    private func update(_ folder: String, with tool: String, orRestore previous: Data?, at path: String) throws(TypeDeclarationError) {
        defer { MIMEDatabase.reload() }
        do {
            try update(folder, with: tool)
        } catch {
            if let previous {
                _ = FileCalls.write(previous, to: path)
            } else {
                unlink(path)
            }
            try? update(folder, with: tool)
            throw error
        }
    }

    /// A MIME type of its own to suggest for `identifier`: `application/vnd.example.` and its
    /// last part.
    private static func suggestedMIME(for identifier: String) -> String {
        "application/vnd.example.\(identifier.split(separator: ".").last ?? "type")"
    }

    /// An I/O failure: `what`, the system's reason, and what to do when it is one of rights.
    private static func ioError(_ what: String, _ code: Int32) -> TypeDeclarationError {
        let hint = code == EACCES || code == EPERM || code == EROFS ? " (a system declaration needs root: run it with sudo)" : ""
        return .init(.io, "\(what): \(String(cString: strerror(code)))\(hint)")
    }

    /// The path of `update-mime-database`, from `PATH`.
    private func updateTool() throws(TypeDeclarationError) -> String {
        let path = environment["PATH"] ?? "/usr/local/bin:/usr/bin:/bin"
        for folder in path.split(separator: ":") where !folder.isEmpty {
            let candidate = String(folder) + "/update-mime-database"
            if FileManager.default.isExecutableFile(atPath: candidate) { return candidate }
        }
        throw .init(.unavailable, "update-mime-database is not installed, so the MIME database cannot learn the type; install shared-mime-info (apt install shared-mime-info) and declare it again")
    }

    private func update(_ folder: String, with tool: String) throws(TypeDeclarationError) {
        let result = ProgramRun.run(tool, arguments: [folder])
        guard result.status == 0 else {
            let output = result.errorOutput.trimmingSpaces
            throw .init(.unavailable, "update-mime-database \(folder) failed\(output.isEmpty ? "" : ": \(output)"); nothing was changed")
        }
    }
}
