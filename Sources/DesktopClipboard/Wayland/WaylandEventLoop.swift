import CDBus
import CWaylandClient
import Dispatch
import Synchronization

#if canImport(Glibc)
import Glibc
#endif

/// The thread that owns one Wayland connection: the `wl_display` and every proxy on it.
///
/// libwayland lets several threads share a display only through event queues and the
/// prepare-read protocol; confining everything to one thread is simpler and leaves no room for
/// a proxy being destroyed while another thread uses it. The thread sleeps in `poll` on the
/// display's socket and an eventfd, and does nothing else that blocks: other threads hand work
/// over with ``submit(_:)``, which queues a closure and writes the eventfd. Reading follows
/// libwayland's `wl_display_prepare_read` / `wl_display_read_events` /
/// `wl_display_dispatch_pending` pattern, and requests are flushed before every wait.
///
/// `@unchecked Sendable`: `session` and `running` are touched only on the loop thread (and,
/// before it starts, by its creator); the command queue is behind a mutex, the rest is atomic
/// or immutable.
final class WaylandEventLoop: @unchecked Sendable {
    private let display: OpaquePointer
    private let wakeFD: Int32
    private let commands = Mutex<(queue: [@Sendable (SelectionSession) -> Void], ended: Bool)>(([], false))
    /// The loop thread (0 until it runs): what it submits itself needs no wake-up, and a
    /// ``close()`` from it must not wait for itself.
    private let loopThread = Atomic<UInt>(0)
    private let closing = Atomic<Bool>(false)
    /// Signalled once when the thread has finished (and again by each waiter, for the next).
    private let finished = DispatchSemaphore(value: 0)
    private var running = true
    /// Why the connection ended, when the compositor ended it.
    private var lostReason: String?
    private var session: SelectionSession!

    /// Takes over `display`; ``start(_:)`` runs the thread.
    init(display: OpaquePointer) throws(DesktopClipboardError) {
        self.display = display
        wakeFD = eventfd(0, Int32(EFD_CLOEXEC | EFD_NONBLOCK))
        guard wakeFD >= 0 else { throw .unavailable("eventfd: \(SystemCallErrorText.current)") }
    }

    deinit {
        Glibc.close(wakeFD)
    }

    /// Whether ``close()`` was called: the delegate hears nothing more.
    var isClosing: Bool { closing.load(ordering: .acquiring) }

    /// Starts the loop thread, which dispatches `session`'s events from then on.
    func start(_ session: SelectionSession) {
        self.session = session
        let context = Unmanaged.passRetained(self).toOpaque()
        var thread = pthread_t()
        let result = pthread_create(&thread, nil, { context in
            let loop = Unmanaged<WaylandEventLoop>.fromOpaque(context!).takeRetainedValue()
            loop.run()
            return nil
        }, context)
        precondition(result == 0, "could not start the Wayland display thread")
        pthread_detach(thread)
    }

    /// Runs `work` on the loop thread, after everything submitted before it. Returns false,
    /// without running it, when the loop has ended.
    @discardableResult
    func submit(_ work: @escaping @Sendable (SelectionSession) -> Void) -> Bool {
        let queued = commands.withLock { commands in
            if !commands.ended { commands.queue.append(work) }
            return !commands.ended
        }
        guard queued else { return false }
        if loopThread.load(ordering: .relaxed) == UInt(pthread_self()) { return true }
        var one: UInt64 = 1
        _ = write(wakeFD, &one, 8)
        return true
    }

    /// Ends the loop, destroys the proxies and disconnects; waits for that unless called on the
    /// loop thread (from a delegate method). The delegate hears nothing more once it returns.
    func close() {
        closing.store(true, ordering: .releasing)
        if loopThread.load(ordering: .relaxed) == UInt(pthread_self()) {
            running = false
            return
        }
        submit { session in session.loop.running = false }
        finished.wait()
        finished.signal()
    }

    /// Ends the loop because the compositor ended the connection or the device (loop thread).
    func end(because reason: String) {
        if lostReason == nil { lostReason = reason }
        running = false
    }

    // MARK: The loop

    private func run() {
        loopThread.store(UInt(pthread_self()), ordering: .relaxed)
        _ = cdbus_name_this_thread("wayland-clip")
        let displayFD = wl_display_get_fd(display)
        while running {
            runCommands()
            guard running else { break }
            // Events already queued must be dispatched before reading more.
            if wl_display_prepare_read(display) != 0 {
                if wl_display_dispatch_pending(display) < 0 { end(because: failure()) }
                continue
            }
            var events = Int16(POLLIN)
            if wl_display_flush(display) < 0 {
                if errno == EAGAIN {
                    events |= Int16(POLLOUT)  // the socket is full: wait until it drains
                } else {
                    wl_display_cancel_read(display)
                    end(because: failure())
                    break
                }
            }
            var fds = [pollfd(fd: displayFD, events: events, revents: 0), pollfd(fd: wakeFD, events: Int16(POLLIN), revents: 0)]
            if poll(&fds, 2, -1) < 0 {
                wl_display_cancel_read(display)  // EINTR: go round again
                continue
            }
            if fds[0].revents & Int16(POLLIN | POLLERR | POLLHUP) != 0 {
                // On a hang-up this reads the end of the stream and fails.
                if wl_display_read_events(display) < 0 {
                    end(because: failure())
                    break
                }
            } else {
                wl_display_cancel_read(display)
            }
            if fds[1].revents != 0 {
                var value: UInt64 = 0
                _ = read(wakeFD, &value, 8)
            }
            if wl_display_dispatch_pending(display) < 0 {
                end(because: failure())
            }
        }

        session.tearDown()
        _ = wl_display_flush(display)
        wl_display_disconnect(display)
        // Commands that came too late find the session ended (fetches then fail).
        runCommands(last: true)
        if let lostReason { session.reportLost(lostReason) }
        finished.signal()
    }

    /// Runs the queued commands until none is left; `last` also marks the loop ended, in the
    /// same step as finding the queue empty, so no command is ever left behind.
    private func runCommands(last: Bool = false) {
        while true {
            let batch = commands.withLock { commands -> [@Sendable (SelectionSession) -> Void] in
                let batch = commands.queue
                commands.queue.removeAll(keepingCapacity: true)
                if batch.isEmpty, last { commands.ended = true }
                return batch
            }
            if batch.isEmpty { return }
            for work in batch { work(session) }
        }
    }

    /// Why the display failed, from libwayland's last error.
    private func failure() -> String {
        let code = wl_display_get_error(display)
        if code == EPROTO {
            return "the Wayland compositor reported a protocol error"
        }
        if code == 0 || code == EPIPE || code == ECONNRESET {
            return "the Wayland compositor closed the connection"
        }
        return "the connection to the Wayland compositor failed: \(String(cString: strerror(code)))"
    }
}

/// The text of the current errno, for messages.
enum SystemCallErrorText {
    static var current: String { String(cString: strerror(errno)) }
}
