import PasteboardModel
import Synchronization

/// Whether the bus is holding up the server's announcements: set (by the bus side, see
/// ``ChangedBacklogWatch``) while dbus-daemon holds more of the server's messages than a reader
/// could still be taking, so that a listener that never reads cannot pile up `Changed` signals
/// until the bus stops reading the server altogether.
///
/// While it is set, a change that would announce a large set of type names (``largeTypeBytes``
/// or more, each type counted once, as `Changed` carries them) is refused with
/// `QuotaExceeded` before anything is stored; every other change goes on as usual.
/// Announcements that large are a test of the limits, not a copy: a rich copy names a few
/// dozen types, a few KiB.
final class AnnouncementBacklog: Sendable {
    /// Changes announcing at least this many bytes of type names are refused while held up.
    static let largeTypeBytes: UInt64 = 64 * 1024

    private let heldUp = Atomic<Bool>(false)

    /// Whether the bus holds too much of ours (see ``ChangedBacklogWatch``).
    var isHeldUp: Bool { heldUp.load(ordering: .relaxed) }

    func set(heldUp value: Bool) {
        heldUp.store(value, ordering: .relaxed)
    }

    /// The refusal for a change of `name` to `entry`, or nil when it may go: what counts is
    /// what `Changed` would carry (each type once; none for concealed contents), summed only
    /// while held up.
    func refusal(_ name: PasteboardName, announcing entry: PasteboardEntry) -> PasteboardError? {
        guard isHeldUp else { return nil }
        let typeBytes = entry.announcedTypes.reduce(0) { $0 + UInt64($1.rawValue.utf8.count) }
        guard typeBytes >= Self.largeTypeBytes else { return nil }
        return .quotaExceeded(
            "the bus holds more of this server's messages than its clients are reading (max-unread-bytes); a change of '\(name)' announcing \(typeBytes) bytes of type names is refused until they read them (or leave)")
    }
}
