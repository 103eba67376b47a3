import Foundation
import Synchronization

/// A private PostgreSQL server for one test: `initdb` into a temporary directory, started on a
/// loopback port of its own with a user `pb` (password `pw`) and a database `pasteboards`, and
/// stopped when the value is released.
///
/// ```swift
/// let database = try await TestPostgres()
/// let server = try await TestServer(bus: bus, store: database.url)
/// ```
///
/// PostgreSQL refuses to run as root: as root it runs as the `postgres` user the Debian package
/// makes, through `setpriv`.
public final class TestPostgres: Sendable {
    public static let user = "pb"
    public static let password = "pw"
    public static let database = "pasteboards"

    public let port: Int
    private let directory: String
    private let binaries: String
    private let running = Mutex(false)

    /// The store URL servers are given: `postgresql://pb:pw@127.0.0.1:PORT/pasteboards`.
    public var url: String { "postgresql://\(Self.user):\(Self.password)@127.0.0.1:\(port)/\(Self.database)" }

    /// Makes and starts the server, and creates the database.
    ///
    /// - Throws: when PostgreSQL is not installed (the test then fails: it needs the
    ///   `postgresql` package), or does not start.
    public init() async throws {
        guard let binaries = Self.findBinaries() else {
            throw TestSupportError("PostgreSQL is not installed: the shared-store tests need the postgresql package (scripts/install-deps installs it)")
        }
        self.binaries = binaries
        directory = try Paths.temporaryDirectory("pasteboardd-postgres")
        port = try Self.freePort()
        let passwordFile = directory + "/password"
        try Self.password.write(toFile: passwordFile, atomically: false, encoding: .utf8)
        if getuid() == 0 {
            chown(directory, Self.postgresUID, Self.postgresGID)
            chown(passwordFile, Self.postgresUID, Self.postgresGID)
        }
        let made = try await Self.run(binaries + "/initdb", [
            "-D", directory + "/data", "-U", Self.user, "--pwfile", passwordFile, "--auth-local=trust",
            "--auth-host=scram-sha-256", "--no-sync", "-E", "UTF8", "--locale=C",
        ])
        guard made.status == 0 else { throw TestSupportError("initdb failed: \(made)") }
        try await start()
        let created = try await runProgram(
            binaries + "/createdb", ["-h", directory, "-p", String(port), "-U", Self.user, Self.database], timeout: .seconds(30))
        guard created.status == 0 else { throw TestSupportError("createdb failed: \(created)") }
    }

    deinit {
        stopNow()
        try? FileManager.default.removeItem(atPath: directory)
    }

    /// Starts the server (again), and waits until it accepts connections.
    public func start() async throws {
        let started = try await Self.run(binaries + "/pg_ctl", [
            "-D", directory + "/data", "-l", directory + "/log", "-w", "-t", "30",
            "-o", "-k \(directory) -p \(port) -c listen_addresses=127.0.0.1 -c fsync=off -c full_page_writes=off", "start",
        ])
        guard started.status == 0 else {
            let log = (try? String(contentsOfFile: directory + "/log", encoding: .utf8)) ?? ""
            throw TestSupportError("PostgreSQL did not start: \(started)\n\(log.suffix(2000))")
        }
        running.withLock { $0 = true }
    }

    /// Stops the server at once (`immediate`: its clients lose their connections).
    public func stop() async throws {
        _ = try await Self.run(binaries + "/pg_ctl", ["-D", directory + "/data", "-m", "immediate", "-w", "stop"])
        running.withLock { $0 = false }
    }

    /// Runs `psql` on the test database; returns its output (unaligned, tuples only).
    public func query(_ sql: String) async throws -> String {
        let result = try await runProgram(
            binaries + "/psql", ["-h", directory, "-p", String(port), "-U", Self.user, "-d", Self.database, "-At", "-c", sql],
            timeout: .seconds(30))
        guard result.status == 0 else { throw TestSupportError("psql failed: \(result)") }
        return result.out
    }

    private func stopNow() {
        guard running.withLock({ $0 }) else { return }
        let arguments = ["-D", directory + "/data", "-m", "immediate", "-w", "stop"]
        let pid = try? spawn(
            getuid() == 0 ? "/usr/bin/setpriv" : binaries + "/pg_ctl",
            getuid() == 0 ? Self.asPostgres + [binaries + "/pg_ctl"] + arguments : arguments,
            standardInput: .open("/dev/null", flags: O_RDONLY, mode: 0), standardOutput: .open("/dev/null", flags: O_WRONLY, mode: 0),
            standardError: .open("/dev/null", flags: O_WRONLY, mode: 0))
        if let pid { _ = reap(pid) }
    }

    // MARK: Helpers

    private static let postgresUID: uid_t = {
        getpwnam("postgres").map { $0.pointee.pw_uid } ?? 65534
    }()
    private static let postgresGID: gid_t = {
        getpwnam("postgres").map { $0.pointee.pw_gid } ?? 65534
    }()
    private static var asPostgres: [String] {
        ["--reuid=\(postgresUID)", "--regid=\(postgresGID)", "--clear-groups"]
    }

    /// Runs a PostgreSQL program, as `postgres` when the tests run as root.
    private static func run(_ program: String, _ arguments: [String]) async throws -> Outcome {
        if getuid() == 0 {
            return try await runProgram("/usr/bin/setpriv", asPostgres + [program] + arguments, timeout: .seconds(60))
        }
        return try await runProgram(program, arguments, timeout: .seconds(60))
    }

    /// The newest PostgreSQL's programs (Debian keeps them under /usr/lib/postgresql/VERSION/bin).
    private static func findBinaries() -> String? {
        let root = "/usr/lib/postgresql"
        let versions = (try? FileManager.default.contentsOfDirectory(atPath: root)) ?? []
        let sorted = versions.compactMap { Int($0) }.sorted(by: >)
        for version in sorted where FileManager.default.isExecutableFile(atPath: "\(root)/\(version)/bin/initdb") {
            return "\(root)/\(version)/bin"
        }
        if let initdb = try? Paths.executable(named: "initdb") { return (initdb as NSString).deletingLastPathComponent }
        return nil
    }

    /// A loopback port nothing listens on now.
    private static func freePort() throws -> Int {
        let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        guard fd >= 0 else { throw TestSupportError("socket: \(String(cString: strerror(errno)))") }
        defer { close(fd) }
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        address.sin_port = 0
        let bound = withUnsafePointer(to: &address) { $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(fd, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) } }
        guard bound == 0 else { throw TestSupportError("bind: \(String(cString: strerror(errno)))") }
        var length = socklen_t(MemoryLayout<sockaddr_in>.size)
        _ = withUnsafeMutablePointer(to: &address) { $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { getsockname(fd, $0, &length) } }
        return Int(UInt16(bigEndian: address.sin_port))
    }
}
