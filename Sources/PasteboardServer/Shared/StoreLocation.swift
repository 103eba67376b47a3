import Foundation

/// Where the pasteboards are kept (`pasteboardd --store`, or `PASTEBOARDD_STORE`).
///
/// ```swift
/// try StoreLocation(parsing: "sqlite:/home/me/.local/state/pasteboardd")
/// try StoreLocation(parsing: "postgresql://pb:secret@db.example:5432/pasteboards")
/// ```
public enum StoreLocation: Sendable, Equatable, CustomStringConvertible {
    /// Embedded SQLite in a folder (nil: the state directory): one machine, nothing to set up.
    case sqlite(directory: String?)
    /// A PostgreSQL database shared by every server pointed at it.
    case postgresql(PostgresLocation)

    public init(parsing text: String) throws(StoreLocationError) {
        if text.hasPrefix("sqlite:") {
            let path = String(text.dropFirst("sqlite:".count))
            guard path.isEmpty || path.hasPrefix("/") else {
                throw StoreLocationError("'\(StoreLocationError.redact(text))': the folder of an SQLite store must be an absolute path (sqlite:/path/to/folder)")
            }
            self = .sqlite(directory: path.isEmpty ? nil : path)
        } else if text.hasPrefix("postgresql://") || text.hasPrefix("postgres://") {
            self = .postgresql(try PostgresLocation(parsing: text))
        } else {
            throw StoreLocationError("'\(StoreLocationError.redact(text))' is not a store: give sqlite:FOLDER or postgresql://USER[:PASSWORD]@HOST[:PORT]/DATABASE")
        }
    }

    /// The location with any password left out, fit for logs and messages.
    public var description: String {
        switch self {
        case .sqlite(let directory): "sqlite:\(directory ?? "(the state directory)")"
        case .postgresql(let location): location.description
        }
    }
}

/// A PostgreSQL database: `postgresql://USER[:PASSWORD]@HOST[:PORT]/DATABASE`, the host a name,
/// an address, or (`?host=/folder`) the folder of the server's unix socket; with libpq's
/// `sslmode` and `sslrootcert` for TLS.
///
/// Without a password in the URL, it is taken as libpq takes it: from `PGPASSWORD`, else from
/// the password file (`PGPASSFILE`, else `~/.pgpass`), which keeps it out of the command line
/// and the environment that other users' `ps` may show.
public struct PostgresLocation: Sendable, Equatable, CustomStringConvertible {
    public var user: String
    public var password: String?
    public var host: String
    public var port: Int
    public var database: String
    /// The folder of the server's unix socket, when it is reached that way.
    public var socketFolder: String?
    /// How the connection is encrypted (libpq's `sslmode`).
    public var tls: TLSMode
    /// The certificates to trust for `verify-ca` and `verify-full` (`sslrootcert`); nil: the
    /// system's.
    public var rootCertificates: String?

    /// libpq's `sslmode`, as far as it goes over a network (a unix socket is not encrypted).
    public enum TLSMode: String, Sendable, Equatable, CaseIterable {
        /// Never.
        case disable
        /// Encrypted if the server offers it, without checking its certificate (libpq's
        /// default; `allow` is taken as this too).
        case prefer
        /// Encrypted, the certificate not checked.
        case require
        /// Encrypted, the certificate checked against the trusted ones.
        case verifyCA = "verify-ca"
        /// Encrypted, the certificate checked, and issued for the host named.
        case verifyFull = "verify-full"
    }

    /// The parameters a URL may carry.
    static let parameters = ["host", "sslmode", "sslrootcert"]

    public init(parsing text: String) throws(StoreLocationError) {
        let shown = StoreLocationError.redact(text)
        guard let components = URLComponents(string: text) else {
            throw StoreLocationError("'\(shown)' is not a URL: give postgresql://USER[:PASSWORD]@HOST[:PORT]/DATABASE")
        }
        guard let user = components.percentEncodedUser.flatMap({ $0.removingPercentEncoding }), !user.isEmpty else {
            throw StoreLocationError("'\(shown)' names no user: give postgresql://USER@HOST/DATABASE")
        }
        let database = String(components.percentEncodedPath.dropFirst()).removingPercentEncoding ?? ""
        guard !database.isEmpty, !database.contains("/") else {
            throw StoreLocationError("'\(shown)' names no database: give postgresql://USER@HOST/DATABASE")
        }
        let socketFolder = components.queryItems?.first { $0.name == "host" }?.value
        // An IPv6 address comes bracketed (`[::1]`), which is the URL's syntax, not the address.
        let named = components.host.map { $0.hasPrefix("[") && $0.hasSuffix("]") ? String($0.dropFirst().dropLast()) : $0 }
        guard let host = named.flatMap({ $0.isEmpty ? nil : $0 }) ?? (socketFolder != nil ? "localhost" : nil) else {
            throw StoreLocationError("'\(shown)' names no host: give postgresql://USER@HOST/DATABASE (or ?host=/socket/folder)")
        }
        if let socketFolder, !socketFolder.hasPrefix("/") {
            throw StoreLocationError("'\(shown)': host= must be the absolute path of the folder of the server's socket")
        }
        for item in components.queryItems ?? [] where !Self.parameters.contains(item.name) {
            throw StoreLocationError("'\(shown)': unknown parameter '\(item.name)'; the parameters are \(Self.parameters.joined(separator: ", "))")
        }
        if let port = components.port, !(1...65535).contains(port) {
            throw StoreLocationError("'\(shown)': the port \(port) is not a TCP port; give one from 1 to 65535 (PostgreSQL's is 5432)")
        }
        let mode = components.queryItems?.first { $0.name == "sslmode" }?.value ?? "prefer"
        guard let tls = mode == "allow" ? .prefer : TLSMode(rawValue: mode) else {
            throw StoreLocationError("'\(shown)': sslmode must be one of disable, allow, prefer, require, verify-ca, verify-full")
        }
        let rootCertificates = components.queryItems?.first { $0.name == "sslrootcert" }?.value
        if let rootCertificates, !rootCertificates.hasPrefix("/") {
            throw StoreLocationError("'\(shown)': sslrootcert must be the absolute path of a PEM file of the certificates to trust")
        }
        self.user = user
        self.host = host
        self.port = components.port ?? 5432
        self.database = database
        self.socketFolder = socketFolder
        self.tls = tls
        self.rootCertificates = rootCertificates
        self.password = components.percentEncodedPassword.flatMap { $0.removingPercentEncoding }
            ?? Self.environmentPassword(host: socketFolder == nil ? host : "localhost", port: port, database: database, user: user)
    }

    /// libpq's password from the environment: `PGPASSWORD`, else the first line of the password
    /// file (`PGPASSFILE`, else `~/.pgpass`, `HOST:PORT:DATABASE:USER:PASSWORD` with `*` for
    /// any) that matches. As libpq does, a password file others may read is not used.
    static func environmentPassword(host: String, port: Int, database: String, user: String, environment: [String: String] = ProcessInfo.processInfo.environment) -> String? {
        if let password = environment["PGPASSWORD"], !password.isEmpty { return password }
        let file = environment["PGPASSFILE"] ?? environment["HOME"].map { $0 + "/.pgpass" }
        guard let file, let text = try? String(contentsOfFile: file, encoding: .utf8) else { return nil }
        var info = stat()
        guard stat(file, &info) == 0, info.st_mode & 0o077 == 0 else { return nil }
        for line in text.split(separator: "\n") where !line.hasPrefix("#") {
            let fields = Self.passwordFileFields(line)
            guard fields.count == 5 else { continue }
            let wanted = [host, String(port), database, user]
            if zip(fields.prefix(4), wanted).allSatisfy({ $0 == "*" || $0 == $1 }) { return fields[4] }
        }
        return nil
    }

    /// The `:`-separated fields of a password file's line, `\:` and `\\` taken as the
    /// characters themselves.
    private static func passwordFileFields(_ line: Substring) -> [String] {
        var fields = [""]
        var escaped = false
        for character in line {
            if escaped {
                fields[fields.count - 1].append(character)
                escaped = false
            } else if character == "\\" {
                escaped = true
            } else if character == ":" {
                fields.append("")
            } else {
                fields[fields.count - 1].append(character)
            }
        }
        return fields
    }

    /// Without the password: what logs, messages and properties may show.
    public var description: String {
        var parameters: [String] = []
        if let socketFolder { parameters.append("host=\(socketFolder)") }
        if tls != .prefer { parameters.append("sslmode=\(tls.rawValue)") }
        if let rootCertificates { parameters.append("sslrootcert=\(rootCertificates)") }
        let address = host.contains(":") ? "[\(host)]" : host
        return "postgresql://\(user)@\(address):\(port)/\(database)" + (parameters.isEmpty ? "" : "?" + parameters.joined(separator: "&"))
    }

    /// The path of the server's unix socket, when it is reached through one.
    var socketPath: String? {
        socketFolder.map { "\($0)/.s.PGSQL.\(port)" }
    }
}

/// A store location that cannot be used, in words that say what to give instead.
public struct StoreLocationError: Error, Sendable, Equatable, CustomStringConvertible {
    public let description: String

    init(_ description: String) {
        self.description = description
    }

    /// `text` with every password in it replaced, so that a message never shows one: the
    /// URL's (`USER:PASSWORD@`), and in text that is no URL (no `://`) everything from its
    /// first `:` to its last `@` (`postgresql:u:p@host`, `u:p@host`); and the value of any
    /// parameter named `password`, however its name is percent-encoded (libpq takes one; it is
    /// refused here as unknown), up to the next `&`.
    static func redact(_ text: String) -> String {
        var shown = text
        if let scheme = shown.range(of: "://") {
            if let at = shown[scheme.upperBound...].lastIndex(of: "@"), let colon = shown[scheme.upperBound..<at].firstIndex(of: ":") {
                shown.replaceSubrange(shown.index(after: colon)..<at, with: "***")
            }
        } else if let colon = shown.firstIndex(of: ":"), let at = shown.lastIndex(of: "@"), colon < at {
            shown.replaceSubrange(shown.index(after: colon)..<at, with: "***")
        }
        guard let question = shown.firstIndex(of: "?") else { return shown }
        let parameters = shown[shown.index(after: question)...].split(separator: "&", omittingEmptySubsequences: false).map { parameter in
            guard let equals = parameter.firstIndex(of: "=") else { return String(parameter) }
            let name = String(parameter[..<equals])
            guard (name.removingPercentEncoding ?? name).lowercased() == "password" else { return String(parameter) }
            return name + "=***"
        }
        return String(shown[...question]) + parameters.joined(separator: "&")
    }
}
