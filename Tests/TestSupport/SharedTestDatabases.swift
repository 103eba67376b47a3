import Foundation
import Synchronization

/// The PostgreSQL of a test run that runs the behavioural tests on a shared store
/// (`PASTEBOARDD_TEST_STORE=postgresql`): one server for the run, a database for each test
/// server, so that the same tests check both stores.
enum SharedTestDatabases {
    private static let cluster = Mutex<Result<PostgresCluster, any Error>?>(nil)
    private static let next = Atomic<Int>(0)
    private static let creating = Mutex<Void>(())

    private static func stop() {
        let server = cluster.withLock { try? $0?.get() }
        try? server?.stop()
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
