import DBus
import Synchronization

/// Keeps a listener that never reads from making dbus-daemon stop reading the server.
///
/// dbus-daemon counts a signal against the sender's `max_incoming_bytes` (1 GB on the usual
/// session bus) until every recipient has read it. A client that subscribes to `Changed` and
/// never reads, beside writes that each announce up to `max-type-bytes` of type names, would
/// fill that in a few thousand writes, after which the bus reads nothing more from the server
/// and every client waits. So, after every sixteenth of `max-unread-bytes` (16 MiB by default)
/// of signals, the bus is asked (``BusStatistics``, as ``UnreadReplies`` does) what it holds
/// of ours; past `max-unread-bytes`, the service refuses changes with large announcements
/// (``AnnouncementBacklog``), and the bus is asked again every ``recheck`` until the listener
/// has read or left. Ordinary changes, whose signals are a few hundred bytes, go on: a
/// gigabyte of them takes millions of writes.
final class ChangedBacklogWatch: Sendable {
    /// What the bus may hold of ours before large announcements are refused.
    private let full: UInt64
    /// Bytes of signals sent between two questions to the bus.
    private let checkEvery: UInt64
    /// How often the bus is asked again while it holds that much.
    static let recheck: Duration = .milliseconds(250)

    private let statistics: BusStatistics
    private let connection: Connection
    private let backlog: AnnouncementBacklog
    private let sinceCheck = Atomic<UInt64>(0)
    /// Whether a question (or a series of them, while full) is under way.
    private let checking = Atomic<Bool>(false)

    init(statistics: BusStatistics, connection: Connection, backlog: AnnouncementBacklog, full: UInt64) {
        self.statistics = statistics
        self.connection = connection
        self.backlog = backlog
        self.full = full
        checkEvery = max(full / 16, 64 * 1024)
    }

    /// Notes that signals of about `bytes` bytes are on their way to the bus.
    func sent(_ bytes: UInt64) {
        let total = sinceCheck.wrappingAdd(bytes, ordering: .relaxed).newValue
        guard total >= checkEvery, !statistics.isUnavailable,
              checking.compareExchange(expected: false, desired: true, ordering: .acquiringAndReleasing).exchanged else { return }
        sinceCheck.store(0, ordering: .relaxed)
        Task { await watch() }
    }

    /// Asks the bus until it holds less than `max-unread-bytes` of ours. The question leaves
    /// behind the signals sent before it (all but the one whose sending started the watch,
    /// which may follow it), and the bus answers in the order it reads, so they are counted.
    private func watch() async {
        defer { checking.store(false, ordering: .releasing) }
        while true {
            let held: UInt64
            do throws(BusStatistics.Failure) {
                held = try await statistics.heldOfOurs()
            } catch {
                // A bus without statistics is not asked again. A question that failed on a
                // busy bus is asked again while large announcements are held up (they must not
                // stay refused on a guess), and otherwise after the next share of signals.
                guard error == .unanswered, backlog.isHeldUp, connection.isConnected else {
                    backlog.set(heldUp: false)
                    return
                }
                try? await Task.sleep(for: Self.recheck)
                continue
            }
            let isFull = held > full
            backlog.set(heldUp: isFull)
            guard isFull else { return }
            try? await Task.sleep(for: Self.recheck)
        }
    }
}
