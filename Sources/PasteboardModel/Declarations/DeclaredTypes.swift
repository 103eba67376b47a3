#if canImport(Glibc)
import Glibc
#endif
import Foundation

/// Every type declared in the MIME database's packages, found by identifier or by MIME type.
///
/// Read from `mime/packages/*.xml` in each XDG data directory, most important first (the
/// user's `~/.local/share` before the system's), so a user's declaration of an identifier
/// hides the system's. Only packages of at most 1 MiB that mention
/// ``TypeDeclaration/namespace`` are parsed: the database's own `freedesktop.org.xml` (2.4 MB,
/// no declarations of ours) is never read, so reading the declarations again after a change
/// costs a directory listing and a few small files.
///
/// ```swift
/// let declared = DeclaredTypes(directories: MIMEDatabase.searchDirectories(environment: env))
/// declared.declaration(forIdentifier: "com.example.todo")?.mimeType   // application/vnd.example.todo+json
/// ```
public struct DeclaredTypes: Sendable {
    /// The declarations in force, in order of precedence.
    public let all: [TypeDeclaration]
    /// Declarations that could not be read (a malformed package, a missing part), each a
    /// sentence naming the file; they are ignored, and the server logs them.
    public let problems: [String]

    private let byIdentifier: [String: TypeDeclaration]
    private let byMIME: [String: TypeDeclaration]

    /// No declarations.
    public static let none = DeclaredTypes(declarations: [], problems: [])

    /// Declarations given directly (tests, and the database's built-in fallback).
    public init(declarations: [TypeDeclaration], problems: [String] = []) {
        var byIdentifier: [String: TypeDeclaration] = [:]
        var byMIME: [String: TypeDeclaration] = [:]
        var all: [TypeDeclaration] = []
        for declaration in declarations where byIdentifier[declaration.identifier.lowercased()] == nil {
            // A MIME type claimed by a more important declaration keeps that one's identifier.
            guard byMIME[declaration.mimeType.essence] == nil else { continue }
            byIdentifier[declaration.identifier.lowercased()] = declaration
            byMIME[declaration.mimeType.essence] = declaration
            all.append(declaration)
        }
        self.all = all
        self.problems = problems
        self.byIdentifier = byIdentifier
        self.byMIME = byMIME
    }

    /// The declarations in the packages under each of `directories` (`DIR/mime/packages`).
    public init(directories: [String]) {
        var declarations: [TypeDeclaration] = []
        var problems: [String] = []
        let marker = Data(TypeDeclaration.namespace.utf8)
        for directory in directories {
            let packages = directory + "/mime/packages"
            guard let names = try? FileManager.default.contentsOfDirectory(atPath: packages) else { continue }
            for name in names.sorted() where name.hasSuffix(".xml") {
                let path = packages + "/" + name
                // stat(2), not FileManager's attributes: their NSNumbers need the whole of
                // Foundation, which the static pbctl does not carry.
                var information = stat()
                guard stat(path, &information) == 0, information.st_size <= Self.largestPackage else { continue }
                guard let data = FileManager.default.contents(atPath: path), data.firstRange(of: marker) != nil else { continue }
                do {
                    let text = String(decoding: data, as: UTF8.self)
                    declarations += try TypeDeclaration.declarations(inPackage: text, file: path, problems: &problems)
                } catch {
                    problems.append("\(path) is not a valid package (\(error)); its declarations are ignored")
                }
            }
        }
        self.init(declarations: declarations, problems: problems)
    }

    /// The size of the largest package read: declarations are a few lines each.
    static let largestPackage = 1 << 20

    /// The declaration of an identifier, ignoring case.
    public func declaration(forIdentifier identifier: String) -> TypeDeclaration? {
        byIdentifier.isEmpty ? nil : byIdentifier[identifier.lowercased()]
    }

    /// The declaration whose MIME type is `type`'s essence.
    public func declaration(forMIME type: PasteboardType) -> TypeDeclaration? {
        guard type.isMIME, !byMIME.isEmpty else { return nil }
        return byMIME[type.essence]
    }

    /// Whether nothing is declared.
    public var isEmpty: Bool { all.isEmpty }
}
