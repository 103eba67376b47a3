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
                throw StoreLocationError("'\(text)': the folder of an SQLite store must be an absolute path (sqlite:/path/to/folder)")
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
/// an address, or (`?host=/folder`) the folder of the server's unix socket.
public struct PostgresLocation: Sendable, Equatable, CustomStringConvertible {
    public var user: String
    public var password: String?
    public var host: String
    public var port: Int
    public var database: String
    /// The folder of the server's unix socket, when it is reached that way.
    public var socketFolder: String?

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
        guard let host = components.host.flatMap({ $0.isEmpty ? nil : $0 }) ?? (socketFolder != nil ? "localhost" : nil) else {
            throw StoreLocationError("'\(shown)' names no host: give postgresql://USER@HOST/DATABASE (or ?host=/socket/folder)")
        }
        if let socketFolder, !socketFolder.hasPrefix("/") {
            throw StoreLocationError("'\(shown)': host= must be the absolute path of the folder of the server's socket")
        }
        self.user = user
        self.password = components.percentEncodedPassword.flatMap { $0.removingPercentEncoding }
        self.host = host
        self.port = components.port ?? 5432
        self.database = database
        self.socketFolder = socketFolder
    }

    /// Without the password: what logs, messages and properties may show.
    public var description: String {
        "postgresql://\(user)@\(host):\(port)/\(database)\(socketFolder.map { "?host=\($0)" } ?? "")"
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

    /// `text` with the password of a URL in it replaced, so that a message never shows it.
    static func redact(_ text: String) -> String {
        guard let scheme = text.range(of: "://"), let at = text[scheme.upperBound...].lastIndex(of: "@") else { return text }
        let credentials = text[scheme.upperBound..<at]
        guard let colon = credentials.firstIndex(of: ":") else { return text }
        return text.replacingCharacters(in: credentials.index(after: colon)..<at, with: "***")
    }
}
