import DBus
import Foundation
import Synchronization
import Testing

/// A connection made with `drivenByCaller` on a thread of the test's own, which drives it
/// (`turn()`) until it ends.
enum DrivingThread {
    /// Connects on a new thread and returns the connection once made; the thread waits for
    /// `before` to return before it starts turning, and calls `ended` once `turn()` says the
    /// connection is over.
    static func connect(
        to address: String, awaitingName: Bool,
        before: @escaping @Sendable () -> Void = {}, ended: @escaping @Sendable () -> Void = {}
    ) async throws -> Connection {
        let made = Mutex<Connection?>(nil)
        let driver = Thread {
            guard let connection = try? Connection.connect(address: address, awaitingName: awaitingName, drivenByCaller: true) else { return }
            made.withLock { $0 = connection }
            before()
            while connection.turn() {}
            ended()
        }
        driver.start()
        for _ in 0..<2_000 {
            if let connection = made.withLock({ $0 }) { return connection }
            try await Task.sleep(for: .milliseconds(5))
        }
        throw DrivingThreadError()
    }

    struct DrivingThreadError: Error, CustomStringConvertible {
        var description: String { "the driven connection was not made within 10 s" }
    }
}
