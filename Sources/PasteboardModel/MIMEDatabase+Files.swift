import Foundation

/// Finding and reading the database files, per the XDG Base Directory specification.
extension MIMEDatabase {
    /// A database read from the `mime/subclasses` and `mime/aliases` files under each of
    /// `directories`, the first directory the most important.
    ///
    /// When not one of those files can be read, the database falls back to a small built-in
    /// table of common types (``isBuiltIn`` is then `true`), so that `text/html` still
    /// conforms to `text/plain` on a machine without shared-mime-info.
    ///
    /// The declared types of the packages under the same directories come along (see
    /// ``DeclaredTypes``).
    ///
    /// - Parameter directories: XDG data directories, such as `/usr/share`.
    public init(directories: [String]) {
        var subclasses: [String] = []
        var aliases: [String] = []
        for directory in directories {
            let mime = URL(fileURLWithPath: directory).appendingPathComponent("mime")
            if let text = try? String(contentsOf: mime.appendingPathComponent("subclasses"), encoding: .utf8) {
                subclasses.append(text)
            }
            if let text = try? String(contentsOf: mime.appendingPathComponent("aliases"), encoding: .utf8) {
                aliases.append(text)
            }
        }
        let declarations = DeclaredTypes(directories: directories)
        if subclasses.isEmpty, aliases.isEmpty {
            self.init(
                subclasses: Self.builtInSubclasses, aliases: Self.builtInAliases, isBuiltIn: true, declarations: declarations,
                directories: directories)
        } else {
            self.init(
                subclasses: subclasses.joined(separator: "\n"),
                aliases: aliases.joined(separator: "\n"),
                isBuiltIn: false, declarations: declarations, directories: directories)
        }
    }

    /// The data directories to search, most important first, from an environment.
    ///
    /// Empty and relative entries are ignored, as the XDG specification asks.
    ///
    /// - Parameter environment: Usually `ProcessInfo.processInfo.environment`.
    public static func searchDirectories(environment: [String: String]) -> [String] {
        var directories: [String] = []
        if let dataHome = environment["XDG_DATA_HOME"], dataHome.hasPrefix("/") {
            directories.append(dataHome)
        } else if let home = environment["HOME"], home.hasPrefix("/") {
            directories.append(home + "/.local/share")
        }
        let dataDirs = (environment["XDG_DATA_DIRS"] ?? "").split(separator: ":").map(String.init)
            .filter { $0.hasPrefix("/") }
        directories += dataDirs.isEmpty ? ["/usr/local/share", "/usr/share"] : dataDirs
        return directories
    }
}
