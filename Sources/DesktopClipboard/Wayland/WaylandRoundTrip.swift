import CWaylandClient

#if canImport(Glibc)
import Glibc
#endif

/// `wl_display_roundtrip` with a deadline, for the exchanges made while connecting: a
/// compositor that accepts the connection and then never answers (hung, stopped) must not hold
/// the bridge's start for ever, nor keep `--desktop auto` from trying X11.
enum WaylandRoundTrip {
    enum Outcome {
        case answered
        /// The connection failed (the compositor went away).
        case failed
        case timedOut
    }

    /// Sends `wl_display.sync` and dispatches events until its callback is done, or `timeout`.
    static func run(_ display: OpaquePointer, within timeout: Duration) -> Outcome {
        guard let callback = wl_display_sync(display) else { return .failed }
        defer { wl_callback_destroy(callback) }
        let done = UnsafeMutablePointer<Bool>.allocate(capacity: 1)
        done.initialize(to: false)
        let listener = UnsafeMutablePointer<wl_callback_listener>.allocate(capacity: 1)
        listener.initialize(to: wl_callback_listener(done: { data, _, _ in data?.assumingMemoryBound(to: Bool.self).pointee = true }))
        defer {
            done.deallocate()
            listener.deallocate()
        }
        _ = wl_callback_add_listener(callback, listener, done)
        let fd = wl_display_get_fd(display)
        let deadline = ContinuousClock.now + timeout
        while !done.pointee {
            // Events already queued must be dispatched before reading more.
            if wl_display_prepare_read(display) != 0 {
                if wl_display_dispatch_pending(display) < 0 { return .failed }
                continue
            }
            var events = Int16(POLLIN)
            if wl_display_flush(display) < 0 {
                guard errno == EAGAIN else {
                    wl_display_cancel_read(display)
                    return .failed
                }
                events |= Int16(POLLOUT)
            }
            let left = deadline - ContinuousClock.now
            guard left > .zero else {
                wl_display_cancel_read(display)
                return .timedOut
            }
            var watched = pollfd(fd: fd, events: events, revents: 0)
            let milliseconds = Int32(clamping: left.components.seconds * 1000 + left.components.attoseconds / 1_000_000_000_000_000 + 1)
            guard poll(&watched, 1, milliseconds) > 0, watched.revents & Int16(POLLIN | POLLERR | POLLHUP) != 0 else {
                wl_display_cancel_read(display)
                continue
            }
            if wl_display_read_events(display) < 0 { return .failed }
            if wl_display_dispatch_pending(display) < 0 { return .failed }
        }
        return .answered
    }
}
