import DBus
import Synchronization
import TestSupport

/// The server's `PropertiesChanged` signals, as one connection of the test's receives them:
/// each one's arguments (interface, changed values, invalidated names), in arrival order.
final class PropertiesChangedRecorder: Sendable {
    private let connection: Connection
    private let received = Received()
    private let collector: Task<Void, Never>

    /// Subscribes on the bus at `address`; what the server sends once this returns is recorded.
    init(address: String) async throws {
        connection = try Connection.connect(address: address)
        let signals = try await connection.signals(matching: MatchRule(
            path: "/org/pasteboardd/Pasteboard1", interface: "org.freedesktop.DBus.Properties", member: "PropertiesChanged"))
        collector = Task { [received] in
            for await signal in signals { received.list.withLock { $0.append(signal.arguments()) } }
        }
    }

    /// Each signal's arguments so far.
    var signals: [[DBusValue]] { received.list.withLock { $0 } }

    /// The names each signal invalidated so far.
    var invalidated: [[String]] { signals.map { $0.last?.stringArrayValue ?? [] } }

    /// Shared with the collecting task, which cannot borrow a lock of the recorder's own.
    private final class Received: Sendable {
        let list = Mutex<[[DBusValue]]>([])
    }

    deinit {
        collector.cancel()
        connection.close()
    }
}
