import Foundation
@testable import PasteboardServer
import Testing

/// `--store` URLs: libpq's TLS parameters, and the password taken as libpq takes it when the
/// URL has none.
struct StoreLocationTests {
    func location(_ text: String) throws -> PostgresLocation {
        guard case .postgresql(let location) = try StoreLocation(parsing: text) else { throw StoreLocationError("not a PostgreSQL store") }
        return location
    }

    @Test func sslmodeIsLibpqs() throws {
        #expect(try location("postgresql://pb@db/pasteboards").tls == .prefer)
        #expect(try location("postgresql://pb@db/pasteboards?sslmode=allow").tls == .prefer)
        for mode in PostgresLocation.TLSMode.allCases {
            #expect(try location("postgresql://pb@db/pasteboards?sslmode=\(mode.rawValue)").tls == mode)
        }
        let checked = try location("postgresql://pb:secret@db/pasteboards?sslmode=verify-full&sslrootcert=/etc/ca.pem")
        #expect(checked.rootCertificates == "/etc/ca.pem")
        #expect(checked.description == "postgresql://pb@db:5432/pasteboards?sslmode=verify-full&sslrootcert=/etc/ca.pem")
        for (url, says) in [
            ("postgresql://pb@db/pasteboards?sslmode=always", "sslmode must be one of"),
            ("postgresql://pb@db/pasteboards?sslrootcert=ca.pem", "absolute path"),
            ("postgresql://pb:secret@db/pasteboards?application_name=x", "unknown parameter 'application_name'"),
        ] {
            let error = #expect(throws: StoreLocationError.self) { try location(url) }
            #expect(error?.description.contains(says) == true, "\(url): \(String(describing: error))")
            #expect(error?.description.contains("secret") == false)
        }
    }

    /// No refusal shows a password: not one given as a parameter (libpq's `password=`, refused
    /// here as unknown), nor one in text that is no URL.
    @Test(arguments: [
        "postgresql://pb@db/pasteboards?password=S3cret",
        "postgresql://pb@db/pasteboards?sslmode=disable&PASSWORD=S3cret&x=1",
        "postgresql://pb@db/pasteboards?password=S3cret#password=S3cret",
        "postgresql:pb:S3cret@db/pasteboards",
        "postgres:pb:S3cret@db/pasteboards",
        "postgresql://pb:S3cret@/pasteboards",
        "postgresql://pb@db/pasteboards?pass%77ord=S3cret",
        "postgresql//pb:S3cret@db/pasteboards",
        "pb:S3cret@db/pasteboards",
        "postgresql://pb@db/pasteboards?password=S3#cret",
    ])
    func noRefusalShowsAPassword(url: String) throws {
        let error = #expect(throws: StoreLocationError.self) { try StoreLocation(parsing: url) }
        #expect(error?.description.contains("S3") == false && error?.description.contains("cret") == false, "\(String(describing: error))")
        #expect(error?.description.contains("***") == true, "\(String(describing: error))")
    }

    /// An IPv6 address is written in brackets, and is connected to without them.
    @Test func anIPv6AddressIsTheHost() throws {
        let local = try location("postgresql://pb@[::1]:5433/pasteboards")
        #expect(local.host == "::1")
        #expect(local.port == 5433)
        #expect(local.description == "postgresql://pb@[::1]:5433/pasteboards")
        #expect(try location("postgresql://pb@[fe80::1]/pasteboards").host == "fe80::1")
    }

    /// A port past 65535 is refused, not wrapped round to another server's (99999 is 34463).
    @Test(arguments: ["99999", "65536", "0"])
    func aPortOutOfRangeIsRefused(port: String) throws {
        let error = #expect(throws: StoreLocationError.self) { try location("postgresql://pb:secret@db:\(port)/pasteboards") }
        #expect(error?.description.contains("the port \(port) is not a TCP port") == true, "\(String(describing: error))")
        #expect(error?.description.contains("secret") == false)
        #expect(try location("postgresql://pb@db:65535/pasteboards").port == 65535)
    }

    /// `PGPASSWORD`, else the first matching line of the password file, which must be the
    /// user's alone.
    @Test func thePasswordComesAsLibpqFindsIt() throws {
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("pgpass-\(UUID().uuidString)").path
        try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(atPath: folder) }
        let file = folder + "/pgpass"
        try """
            # comment
            otherhost:5432:pasteboards:pb:wrong
            db:*:pasteboards:pb:pa\\:ss\\\\word
            *:*:*:*:fallback
            """.write(toFile: file, atomically: false, encoding: .utf8)
        chmod(file, 0o600)
        let environment = ["PGPASSFILE": file]
        #expect(PostgresLocation.environmentPassword(host: "db", port: 5433, database: "pasteboards", user: "pb", environment: environment) == "pa:ss\\word")
        #expect(PostgresLocation.environmentPassword(host: "elsewhere", port: 5432, database: "x", user: "y", environment: environment) == "fallback")
        #expect(PostgresLocation.environmentPassword(host: "db", port: 5432, database: "pasteboards", user: "pb", environment: environment.merging(["PGPASSWORD": "fromenv"]) { $1 }) == "fromenv")
        // Others may read it: not used, as libpq does not.
        chmod(file, 0o644)
        #expect(PostgresLocation.environmentPassword(host: "db", port: 5432, database: "pasteboards", user: "pb", environment: environment) == nil)
        #expect(PostgresLocation.environmentPassword(host: "db", port: 5432, database: "pasteboards", user: "pb", environment: [:]) == nil)
    }
}
