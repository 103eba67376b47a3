import DBus
import Logging
import Synchronization

/// What dbus-daemon holds of each connection's messages, from its `Debug.Stats`: asked by the
/// checks that keep clients that do not read from stalling the server (``UnreadReplies``,
/// ``ChangedBacklogWatch``).
///
/// A bus without these statistics (dbus-broker, which bounds what a peer may queue on its own),
/// or that does not let us read them, is not asked again after its first refusal, and the log
/// says once that the checks are off.
final class BusStatistics: Sendable {
    /// Why there is no answer.
    enum Failure: Error {
        /// The bus has no statistics for us: nothing is asked any more.
        case unavailable
        /// This question failed (a busy bus's timeout): another may be answered.
        case unanswered
    }

    private let connection: Connection
    private let logger: Logger
    private let unavailable = Atomic<Bool>(false)

    init(connection: Connection, logger: Logger) {
        self.connection = connection
        self.logger = logger
    }

    /// Whether the bus turned out to have no statistics.
    var isUnavailable: Bool { unavailable.load(ordering: .relaxed) }

    /// The bytes the bus holds for `uniqueName` to read.
    func waiting(for uniqueName: String) async throws(Failure) -> UInt64 {
        try await held(uniqueName).outgoing
    }

    /// The bytes of the server's messages the bus holds (not yet read by all their recipients).
    func heldOfOurs() async throws(Failure) -> UInt64 {
        try await held(connection.uniqueName).incoming
    }

    private func held(_ uniqueName: String) async throws(Failure) -> (outgoing: UInt64, incoming: UInt64) {
        guard !isUnavailable else { throw .unavailable }
        do throws(DBusError) {
            return try await connection.heldBytes(of: uniqueName)
        } catch {
            let lacking = ["org.freedesktop.DBus.Error.UnknownMethod", "org.freedesktop.DBus.Error.UnknownInterface",
                           "org.freedesktop.DBus.Error.AccessDenied", "org.freedesktop.DBus.Error.ServiceUnknown"]
            guard lacking.contains(error.name) else { throw .unanswered }
            if !unavailable.exchange(true, ordering: .relaxed) {
                logger.notice("the bus does not tell what waits unread for each client (\(error.name)): large replies and announcements go unchecked")
            }
            throw .unavailable
        }
    }
}
