import PasteboardModel
import Synchronization

/// Keeps a client that does not read its replies from making dbus-daemon stop reading ours.
///
/// dbus-daemon counts every message it takes from a connection against that connection's
/// `max_incoming_bytes` (1 GB on the usual session bus) until all its recipients have read it.
/// A client that sends hundreds of `ReadData` calls for megabytes each and never reads the
/// answers piles our replies up in the bus; once they reach the limit, the bus reads nothing
/// more from us, and every client's call waits until that one leaves. So before a large inline
/// reply, the bus is asked what it holds (``BusStatistics``): a client whose earlier replies
/// wait unread past ``perClient`` bytes gets `QuotaExceeded` (a small error) instead of more
/// data; and once ours held in the bus pass `max-unread-bytes` (several such clients), so does
/// any client that is behind with its reading at all (``behind``). A client that reads its
/// replies has next to nothing waiting, and is never refused.
///
/// Small replies are not looked at (each check is a round trip to the bus): a client must make
/// millions of calls to pile up a gigabyte of them. Where the bus has no such statistics,
/// nothing is checked.
final class UnreadReplies: Sendable {
    /// Replies of at least this many bytes are checked.
    static let checkedSize = 64 * 1024
    /// The most of its replies a client may leave unread in the bus.
    static let perClient: UInt64 = 64 << 20
    /// What the bus may hold of ours before clients behind with their reading are refused
    /// (`max-unread-bytes`).
    private let overall: UInt64
    /// Unread replies past which a client is behind.
    static let behind: UInt64 = 1 << 20

    private struct State {
        /// Bytes each client may still be sent before the bus is asked again: what it was
        /// found to have waiting left room for, up to ``behind``.
        var allowance: [String: UInt64] = [:]
        /// The last large reply of each client in progress: the next waits for it, so that
        /// each question to the bus comes after the replies before it (the bus answers in the
        /// order it reads, so its answer counts them).
        var last: [String: Task<Void, Never>] = [:]
    }

    private let state = Mutex(State())
    private let statistics: BusStatistics

    init(statistics: BusStatistics, overall: UInt64) {
        self.statistics = statistics
        self.overall = overall
    }

    /// Whether a reply of `size` bytes goes through ``send(_:to:reply:refuse:)``.
    static func isChecked(_ size: UInt64) -> Bool {
        size >= UInt64(checkedSize)
    }

    /// Runs `reply` (which sends a reply of `size` bytes to `client`), or `refuse` with the
    /// error to answer instead, once the replies of `client`'s before it are on their way and
    /// the bus, if asked, has said what waits for the client.
    func send(_ size: UInt64, to client: String, reply: @escaping @Sendable () -> Void, refuse: @escaping @Sendable (PasteboardError) -> Void) {
        state.withLock { state in
            if state.last.count >= 4096 { state.last.removeAll(keepingCapacity: true) }
            let previous = state.last[client]
            state.last[client] = Task { [self] in
                await previous?.value
                if let refusal = await admit(size, to: client) {
                    refuse(refusal)
                } else {
                    reply()
                }
            }
        }
    }

    /// Nil when a reply of `size` bytes to `client` may go (counted against its allowance, the
    /// bus asked when that is spent), else the error to answer with.
    private func admit(_ size: UInt64, to client: String) async -> PasteboardError? {
        if statistics.isUnavailable { return nil }
        let spent = state.withLock { state -> Bool in
            let left = state.allowance[client, default: 0]
            guard left >= size else { return false }
            state.allowance[client] = left - size
            return true
        }
        if spent { return nil }
        let waiting: UInt64
        var overFull = false
        do throws(BusStatistics.Failure) {
            waiting = try await statistics.waiting(for: client)
            // What the bus holds of ours matters only for a client behind with its reading:
            // one that reads, the usual case, costs one question.
            if waiting > Self.behind, waiting + size <= Self.perClient {
                overFull = try await statistics.heldOfOurs() + size > overall
            }
        } catch {
            // Unanswered, this one reply goes unchecked.
            return nil
        }
        if waiting + size > Self.perClient || overFull {
            return .quotaExceeded(
                "\(waiting) bytes of earlier replies to this client wait unread in the bus; read them first (or read large data with ReadFd, which does not pass through the bus)")
        }
        state.withLock { state in
            if state.allowance.count >= 4096 { state.allowance.removeAll(keepingCapacity: true) }
            state.allowance[client] = waiting + size < Self.behind ? Self.behind - waiting - size : 0
        }
        return nil
    }
}
