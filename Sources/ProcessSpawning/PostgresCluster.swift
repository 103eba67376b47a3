import Foundation

/// A private PostgreSQL server in a folder of its own, for the tests and the benchmark: made
/// with `initdb`, run on a loopback port with a user `pb` (password `pw`) and a database
/// `pasteboards`, stopped by ``stop()`` or when released.
///
/// PostgreSQL refuses to run as root: as root it runs as the `postgres` user of Debian's
/// package, through `setpriv`.
public final class PostgresCluster: @unchecked Sendable {
    public static let user = "pb"
    public static let password = "pw"
    public static let database = "pasteboards"

    public let port: Int
    public let directory: String
    private let binaries: String
    /// Whether the server runs; only touched by the owner's calls (one at a time).
    private var running = false

    /// The store URL servers are given: `postgresql://pb:pw@127.0.0.1:PORT/pasteboards`.
    public var url: String { "postgresql://\(Self.user):\(Self.password)@127.0.0.1:\(port)/\(Self.database)" }

    /// With TLS, the PEM file of the authority that signed the server's certificate (issued for
    /// 127.0.0.1 and localhost), for `sslrootcert`; nil without.
    public let certificateAuthority: String?

    /// Makes and starts the server, and creates the database.
    ///
    /// - Parameter tls: Whether the server takes TLS connections (`ssl=on`), with a certificate
    ///   of an authority made for it (``certificateAuthority``).
    /// - Throws: when PostgreSQL is not installed (Debian's `postgresql` package), or does not
    ///   start; the message says which.
    public init(tls: Bool = false) throws {
        guard let binaries = Self.findBinaries() else {
            throw SpawnError(description: "PostgreSQL is not installed: install the postgresql package (scripts/install-deps does)")
        }
        self.binaries = binaries
        Self.removeLeftovers()
        directory = FileManager.default.temporaryDirectory.appendingPathComponent("pasteboardd-postgres-\(UUID().uuidString)").path
        try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
        port = try Self.freePort()
        certificateAuthority = tls ? try Self.makeCertificates(in: directory) : nil
        let passwordFile = directory + "/password"
        try Self.password.write(toFile: passwordFile, atomically: false, encoding: .utf8)
        if getuid() == 0 {
            chown(directory, Self.postgresUID, Self.postgresGID)
            chown(passwordFile, Self.postgresUID, Self.postgresGID)
        }
        try run("initdb", [
            "-D", directory + "/data", "-U", Self.user, "--pwfile", passwordFile, "--auth-local=trust",
            "--auth-host=scram-sha-256", "--no-sync", "-E", "UTF8", "--locale=C",
        ])
        try start()
        try run("createdb", ["-h", directory, "-p", String(port), "-U", Self.user, Self.database], asPostgres: false)
    }

    deinit {
        try? stop()
        try? FileManager.default.removeItem(atPath: directory)
    }

    /// Deletes the folders of servers of earlier runs that ended without deleting them (a test
    /// process's shared server, stopped at exit, or one killed): each holds gigabytes after a
    /// full test run. A folder is left alone while its server runs, and for ten minutes after it
    /// was made (another run's server may be starting in it).
    private static func removeLeftovers() {
        let temporary = FileManager.default.temporaryDirectory.path
        guard let names = try? FileManager.default.contentsOfDirectory(atPath: temporary) else { return }
        for name in names where name.hasPrefix("pasteboardd-postgres-") {
            let folder = temporary + "/" + name
            let pidFile = (try? String(contentsOfFile: folder + "/data/postmaster.pid", encoding: .utf8)) ?? ""
            if let first = pidFile.split(separator: "\n").first, let pid = pid_t(first), kill(pid, 0) == 0 { continue }
            guard let made = (try? FileManager.default.attributesOfItem(atPath: folder))?[.modificationDate] as? Date,
                made.timeIntervalSinceNow < -600
            else { continue }
            try? FileManager.default.removeItem(atPath: folder)
        }
    }

    /// Starts the server (again), and waits until it accepts connections.
    public func start() throws {
        try run("pg_ctl", [
            "-D", directory + "/data", "-l", directory + "/log", "-w", "-t", "30",
            "-o", "-k \(directory) -p \(port) -c listen_addresses=127.0.0.1 -c fsync=off -c full_page_writes=off -c max_connections=400"
                + (certificateAuthority == nil ? "" : " -c ssl=on -c ssl_cert_file=\(directory)/server.pem -c ssl_key_file=\(directory)/server.key"),
            "start",
        ])
        running = true
    }

    /// Stops the server at once (`immediate`: its clients lose their connections).
    public func stop() throws {
        guard running else { return }
        running = false
        try run("pg_ctl", ["-D", directory + "/data", "-m", "immediate", "-w", "stop"])
    }

    /// Freezes the server and every process of it (SIGSTOP), as a machine gone from the network
    /// looks to its clients: connections stay open, nothing answers. ``resume()`` undoes it.
    public func pause() throws {
        try signalAll(SIGSTOP)
    }

    public func resume() throws {
        try signalAll(SIGCONT)
    }

    /// Shuts the server down at once by signal (PostgreSQL's immediate shutdown), without
    /// starting `pg_ctl`, and waits (up to 5 s) until it is gone, so that its folder can be
    /// deleted: for a process that is exiting, where starting programs is not to be relied on.
    public func quit() throws {
        let postmaster = try signalAll(SIGQUIT)
        for _ in 0..<500 where kill(postmaster, 0) == 0 {
            usleep(10_000)
        }
    }

    /// Signals the server's processes; returns the postmaster's.
    @discardableResult
    private func signalAll(_ signal: Int32) throws -> pid_t {
        let pidFile = (try? String(contentsOfFile: directory + "/data/postmaster.pid", encoding: .utf8)) ?? ""
        guard let first = pidFile.split(separator: "\n").first, let postmaster = pid_t(first) else {
            throw SpawnError(description: "PostgreSQL is not running (no postmaster.pid)")
        }
        let children = (try? String(contentsOfFile: "/proc/\(postmaster)/task/\(postmaster)/children", encoding: .utf8)) ?? ""
        for child in children.split(separator: " ").compactMap({ pid_t($0) }) { kill(child, signal) }
        kill(postmaster, signal)
        return postmaster
    }

    /// Makes an authority and a server certificate it signs, for 127.0.0.1 and localhost, with
    /// `openssl`; returns the authority's PEM file. The server's key is the server's user's
    /// alone, as PostgreSQL demands.
    private static func makeCertificates(in directory: String) throws -> String {
        let openssl = ["/usr/bin/openssl", "/usr/local/bin/openssl"].first { FileManager.default.isExecutableFile(atPath: $0) }
        guard let openssl else { throw SpawnError(description: "openssl is not installed: install the openssl package (scripts/install-deps does)") }
        try "subjectAltName=IP:127.0.0.1,DNS:localhost\n".write(toFile: directory + "/san.cnf", atomically: false, encoding: .utf8)
        for arguments in [
            ["req", "-x509", "-newkey", "rsa:2048", "-nodes", "-keyout", "ca.key", "-out", "ca.pem", "-days", "2", "-subj", "/CN=pasteboardd test authority"],
            ["req", "-newkey", "rsa:2048", "-nodes", "-keyout", "server.key", "-out", "server.csr", "-subj", "/CN=127.0.0.1"],
            ["x509", "-req", "-in", "server.csr", "-CA", "ca.pem", "-CAkey", "ca.key", "-CAcreateserial", "-out", "server.pem", "-days", "2", "-extfile", "san.cnf"],
        ] {
            let pid = try spawn(
                openssl, arguments.map { $0.hasSuffix(".key") || $0.hasSuffix(".pem") || $0.hasSuffix(".csr") || $0.hasSuffix(".cnf") ? directory + "/" + $0 : $0 },
                standardInput: .open("/dev/null", flags: O_RDONLY, mode: 0),
                standardOutput: .open("/dev/null", flags: O_WRONLY, mode: 0), standardError: .open(directory + "/tools.log", flags: O_WRONLY | O_CREAT | O_APPEND, mode: 0o666))
            guard reap(pid) == 0 else { throw SpawnError(description: "openssl \(arguments[0]) failed: \((try? String(contentsOfFile: directory + "/tools.log", encoding: .utf8)) ?? "")") }
        }
        chmod(directory + "/server.key", 0o600)
        if getuid() == 0 {
            chown(directory + "/server.key", postgresUID, postgresGID)
            chown(directory + "/server.pem", postgresUID, postgresGID)
        }
        return directory + "/ca.pem"
    }

    /// Creates another database, owned by the same user.
    public func createDatabase(_ name: String) throws {
        try run("createdb", ["-h", directory, "-p", String(port), "-U", Self.user, name], asPostgres: false)
    }

    /// The path of a PostgreSQL program (`psql`, …).
    public func program(_ name: String) -> String {
        binaries + "/" + name
    }

    /// Runs a PostgreSQL program to its end (as `postgres` when root, for the server's own
    /// programs); its output goes to the folder's `tools.log`.
    private func run(_ name: String, _ arguments: [String], asPostgres: Bool = true) throws {
        let log = directory + "/tools.log"
        let executable = binaries + "/" + name
        let root = getuid() == 0 && asPostgres
        let pid = try spawn(
            root ? "/usr/bin/setpriv" : executable,
            root ? ["--reuid=\(Self.postgresUID)", "--regid=\(Self.postgresGID)", "--clear-groups", executable] + arguments : arguments,
            standardInput: .open("/dev/null", flags: O_RDONLY, mode: 0),
            standardOutput: .open(log, flags: O_WRONLY | O_CREAT | O_APPEND, mode: 0o666),
            standardError: .open(log, flags: O_WRONLY | O_CREAT | O_APPEND, mode: 0o666))
        let status = reap(pid) ?? -1
        guard status == 0 else {
            let output = (try? String(contentsOfFile: log, encoding: .utf8)) ?? ""
            let serverLog = (try? String(contentsOfFile: directory + "/log", encoding: .utf8)) ?? ""
            throw SpawnError(description: "\(name) exited with status \(status):\n\(output.suffix(1500))\(serverLog.suffix(1500))")
        }
    }

    private static let postgresUID: uid_t = getpwnam("postgres").map { $0.pointee.pw_uid } ?? 65534
    private static let postgresGID: gid_t = getpwnam("postgres").map { $0.pointee.pw_gid } ?? 65534

    /// The newest PostgreSQL's programs (Debian keeps them under /usr/lib/postgresql/VERSION/bin).
    private static func findBinaries() -> String? {
        let root = "/usr/lib/postgresql"
        let versions = (try? FileManager.default.contentsOfDirectory(atPath: root)) ?? []
        for version in versions.compactMap({ Int($0) }).sorted(by: >) where FileManager.default.isExecutableFile(atPath: "\(root)/\(version)/bin/initdb") {
            return "\(root)/\(version)/bin"
        }
        for folder in ["/usr/bin", "/usr/local/bin"] where FileManager.default.isExecutableFile(atPath: folder + "/initdb") {
            return folder
        }
        return nil
    }

    /// A loopback port nothing listens on now.
    private static func freePort() throws -> Int {
        let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        guard fd >= 0 else { throw SpawnError(description: "socket: \(String(cString: strerror(errno)))") }
        defer { close(fd) }
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        let bound = withUnsafePointer(to: &address) { $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(fd, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) } }
        guard bound == 0 else { throw SpawnError(description: "bind: \(String(cString: strerror(errno)))") }
        var length = socklen_t(MemoryLayout<sockaddr_in>.size)
        _ = withUnsafeMutablePointer(to: &address) { $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { getsockname(fd, $0, &length) } }
        return Int(UInt16(bigEndian: address.sin_port))
    }
}
