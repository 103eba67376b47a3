import CDBus

/// The pipes the server widens to 1 MiB, counted so that there are never many at once.
///
/// A pipe of 1 MiB lets a writer and its reader keep running where one of 64 KiB makes them
/// take turns every 64 KiB (see ``TransferSource/enlargePipeBuffer()`` and
/// ``StoredFileFeeder``). But every pipe's pages count against its user's allowance
/// (`pipe-user-pages-soft`, 64 MiB by default), past which the kernel gives each new pipe of
/// that user's programs two pages and refuses to widen any: `max-transfers` transfers and four
/// times as many readers, each with a pipe of 1 MiB, would take far more than all of it, and
/// leave the user's shell pipelines crawling. So only a few pipes of each kind (``most``) are
/// wide at once; the others keep a narrower buffer.
final class WidePipes: Sendable {
    /// The size of a wide pipe: the most an unprivileged process may ask for by default.
    static let size: Int32 = 1 << 20
    /// `WriteItemsFd`'s pipes, read into the store.
    static let writers = WidePipes()
    /// `ReadFd`'s pipes, fed from the store.
    static let readers = WidePipes()

    /// Wide pipes of this kind at once: 16 by default, 16 MiB of the default allowance.
    let most: Int
    private let held = SharedAllowance()

    init(most: Int = 16) {
        self.most = most
    }

    /// Widens `pipe` (either end) to ``size`` if fewer than ``most`` are wide, else to
    /// `otherwise` (when larger than it is); never narrows it. True when it took one of the
    /// wide ones, which ``giveBack()`` returns once the pipe is done with.
    func widen(_ pipe: Int32, otherwise: Int32) -> Bool {
        let current = cdbus_fcntl(pipe, cdbus_F_GETPIPE_SZ)
        if current < Self.size, held.take(upTo: 1, of: most) == 1 {
            if cdbus_fcntl_int(pipe, cdbus_F_SETPIPE_SZ, Self.size) >= 0 { return true }
            giveBack()
        }
        if current < otherwise { _ = cdbus_fcntl_int(pipe, cdbus_F_SETPIPE_SZ, otherwise) }
        return false
    }

    /// Returns a wide pipe ``widen(_:otherwise:)`` took.
    func giveBack() {
        held.giveBack(1)
    }
}
