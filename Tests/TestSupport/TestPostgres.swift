import Foundation

/// A private PostgreSQL server for one test (a ``PostgresCluster``), with `psql` at hand;
/// stopped when the value is released.
///
/// ```swift
/// let database = try await TestPostgres()
/// let server = try await TestServer(bus: bus, store: database.url)
/// ```
public final class TestPostgres: Sendable {
    public static let password = PostgresCluster.password

    private let cluster: PostgresCluster

    /// The store URL servers are given.
    public var url: String { cluster.url }

    /// With TLS, the PEM file of the authority of the server's certificate.
    public var certificateAuthority: String? { cluster.certificateAuthority }

    /// - Throws: when PostgreSQL is not installed (the test then fails: it needs the
    ///   `postgresql` package), or does not start.
    /// - Parameter tls: Whether the server takes TLS connections (see
    ///   ``PostgresCluster/init(tls:)``).
    public init(tls: Bool = false) async throws {
        do {
            cluster = try PostgresCluster(tls: tls)
        } catch {
            throw TestSupportError("the shared-store tests need a PostgreSQL server: \(error)")
        }
    }

    /// Starts the server again.
    public func start() async throws {
        try cluster.start()
    }

    /// Stops the server at once (its clients lose their connections).
    public func stop() async throws {
        try cluster.stop()
    }

    /// Freezes the server (connections stay open, nothing answers), until ``resume()``.
    public func pause() throws {
        try cluster.pause()
    }

    public func resume() throws {
        try cluster.resume()
    }

    /// Runs `psql` on the test database; returns its output (unaligned, tuples only).
    public func query(_ sql: String) async throws -> String {
        let result = try await runProgram(
            cluster.program("psql"),
            ["-h", cluster.directory, "-p", String(cluster.port), "-U", PostgresCluster.user, "-d", PostgresCluster.database, "-At", "-c", sql],
            timeout: .seconds(30))
        guard result.status == 0 else { throw TestSupportError("psql failed: \(result)") }
        return result.out
    }
}
