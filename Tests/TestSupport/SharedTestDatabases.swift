import Foundation
import Synchronization

/// The PostgreSQL of a test run that runs the behavioural tests on a shared store
/// (`PASTEBOARDD_TEST_STORE=postgresql`): one server for the run, a database for each test
/// server, so that the same tests check both stores.
enum SharedTestDatabases {
    private static let cluster = Mutex<Result<PostgresCluster, any Error>?>(nil)
    private static let next = Atomic<Int>(0)
    private static let creating = Mutex<Void>(())

    /// Stops the server and deletes its folder: being static, it is never released, and each
    /// run's would stay behind (gigabytes of databases). Earlier runs' that were not (a run
    /// killed) are deleted when a cluster is next made (``PostgresCluster``).
    private static func stop() {
        guard let server = cluster.withLock({ try? $0?.get() }) else { return }
        // pg_ctl, started at exit, left the server running (and its deleted files taking the disk).
        try? server.quit()
        try? FileManager.default.removeItem(atPath: server.directory)
    }

    /// A new database's store URL when the run asks for PostgreSQL; nil otherwise.
    static func storeForTests() throws -> String? {
        guard ProcessInfo.processInfo.environment["PASTEBOARDD_TEST_STORE"] == "postgresql" else { return nil }
        let server = try cluster.withLock { cluster in
            if cluster == nil {
                cluster = Result { try PostgresCluster() }
                // Stopped when the test run ends.
                atexit { SharedTestDatabases.stop() }
            }
            return try cluster!.get()
        }
        let name = "test\(next.add(1, ordering: .relaxed).newValue)"
        // CREATE DATABASE copies template1, which two at once cannot.
        try creating.withLock { _ in try server.createDatabase(name) }
        return server.url.replacingOccurrences(of: "/\(PostgresCluster.database)", with: "/\(name)")
    }
}
