import PasteboardModel
import Synchronization

/// Whether the client that started a descriptor transfer is still on the bus, asked now and
/// then while the transfer runs, on its thread.
///
/// A transfer holds one of `max-transfers` slots and the client's descriptors until its data
/// ends. The idle timeout ends one whose writer falls silent, but not one whose descriptor
/// keeps producing a few bytes (a timer's descriptor does, every second, with no process
/// behind it): its slot would be held until `max-item-bytes`, and four such clients that left
/// at once would keep every `WriteItemsFd` refused until a restart. What such a transfer read
/// would be dropped anyway: data from a pipe or socket whose caller left is never committed,
/// as its end may be the caller's death. So once the caller is gone, the transfer stops, and
/// its slot and descriptors are let go of. (A file is not watched: it ends at its size, known
/// to be within the limit, and is stored whoever is left.)
///
/// The bus is asked at most once per ``interval`` of the transfer's time, so a transfer that
/// ends within it never asks at all. (Used by one thread at a time; the lock makes it safe to
/// hand to another.) The error thrown reaches no one: its caller is gone.
final class CallerWatch: Sendable {
    /// How often the bus is asked at most: the longest a departed caller's transfer lives on.
    let interval: Duration

    private let hasLeft: @Sendable () -> Bool
    private let nextQuestion: Mutex<ContinuousClock.Instant>

    /// - Parameters:
    ///   - interval: A second; less for tests.
    ///   - hasLeft: Asks the bus whether the caller left (blocking the transfer's thread, never
    ///     the bus's); true only when the bus said so.
    init(interval: Duration = .seconds(1), hasLeft: @escaping @Sendable () -> Bool) {
        self.interval = interval
        self.hasLeft = hasLeft
        nextQuestion = Mutex(.now + interval)
    }

    /// Throws once the caller has left the bus; asks it at most once per ``interval``.
    func check() throws(PasteboardError) {
        guard ContinuousClock.now >= nextQuestion.withLock({ $0 }) else { return }
        guard !hasLeft() else {
            throw .invalidArgument("the caller left the bus: the transfer is abandoned, and nothing is stored")
        }
        nextQuestion.withLock { $0 = .now + interval }
    }

    /// The `poll` timeout before asking again: `limit` (milliseconds) or the time to the next
    /// question, rounded up, whichever is shorter.
    func pollTimeout(atMost limit: Int32) -> Int32 {
        let left = nextQuestion.withLock { $0 } - ContinuousClock.now
        let milliseconds = max(0, (left / .milliseconds(1)).rounded(.up))
        return Int32(min(Double(limit), milliseconds))
    }
}
