import CDBus
import Foundation
import Synchronization

#if canImport(Glibc)
import Glibc
#endif

/// A thread of its own for one display connection: it waits in `poll` on the display's socket
/// and on an eventfd, runs the work other threads hand it, and fires deadlines.
///
/// Display libraries' objects are confined to this thread, so nothing the display does (a slow
/// app, a large transfer) ever waits on the bus, and nothing on the bus waits on the display.
///
/// `@unchecked Sendable`: `deadlines` and `running` are touched only on the loop thread; the
/// work queue is behind its mutex.
final class DisplayLoop: @unchecked Sendable {
    private let wakeFD: Int32
    private let work = Mutex<(queue: [@Sendable () -> Void], ended: Bool)>(([], false))
    private var deadlines: [(at: ContinuousClock.Instant, id: UInt64, fire: () -> Void)] = []
    private var nextDeadlineID: UInt64 = 0
    private var running = true

    init() throws(DesktopClipboardError) {
        wakeFD = eventfd(0, Int32(EFD_CLOEXEC | EFD_NONBLOCK))
        guard wakeFD >= 0 else { throw .unavailable("eventfd: \(String(cString: strerror(errno)))") }
    }

    deinit {
        close(wakeFD)
    }

    /// Starts the thread: it polls `fd` and calls `readable` whenever the fd is readable (and
    /// once before each wait, for events the library already queued), `prepare` before each
    /// wait (to flush requests), and `ended` once when the loop stops, with the reason when the
    /// display hung up.
    func start(
        name: String, fd: Int32, prepare: @escaping () -> Void, readable: @escaping () -> Bool,
        ended: @escaping (String?) -> Void
    ) {
        let body = UncheckedBox { [self] in
            _ = cdbus_name_this_thread(name)
            var reason: String?
            while running {
                runQueuedWork()
                guard running else { break }
                if !readable() { reason = "the display closed the connection"; break }
                runQueuedWork()
                guard running else { break }
                prepare()
                var fds = [pollfd(fd: fd, events: Int16(POLLIN), revents: 0), pollfd(fd: wakeFD, events: Int16(POLLIN), revents: 0)]
                let result = poll(&fds, 2, pollTimeout())
                if result < 0, errno != EINTR { reason = "poll: \(String(cString: strerror(errno)))"; break }
                if fds[1].revents != 0 {
                    var count: UInt64 = 0
                    _ = read(wakeFD, &count, 8)
                }
                if fds[0].revents & Int16(POLLHUP | POLLERR | POLLNVAL) != 0, fds[0].revents & Int16(POLLIN) == 0 {
                    reason = "the display hung up"
                    break
                }
                fireDeadlines()
            }
            work.withLock { $0.ended = true }
            ended(running ? reason : nil)
            deadlines.removeAll()
        }
        let thread = Thread { body.value() }
        thread.start()
    }

    /// Runs `body` on the loop thread, after what was submitted before it; never, once the loop
    /// has ended (false).
    @discardableResult
    func submit(_ body: @escaping @Sendable () -> Void) -> Bool {
        let queued = work.withLock { work in
            if !work.ended { work.queue.append(body) }
            return !work.ended
        }
        guard queued else { return false }
        var one: UInt64 = 1
        _ = write(wakeFD, &one, 8)
        return true
    }

    /// Ends the loop after the work already queued (on the loop thread).
    func stop() {
        submit { [self] in running = false }
    }

    /// Calls `fire` on the loop thread once `delay` has passed, unless cancelled with the
    /// returned id first. Loop thread only.
    @discardableResult
    func after(_ delay: Duration, _ fire: @escaping () -> Void) -> UInt64 {
        nextDeadlineID += 1
        deadlines.append((ContinuousClock.now + delay, nextDeadlineID, fire))
        return nextDeadlineID
    }

    /// Forgets a deadline set with ``after(_:_:)``. Loop thread only.
    func cancel(_ id: UInt64) {
        deadlines.removeAll { $0.id == id }
    }

    private func runQueuedWork() {
        while true {
            let batch = work.withLock { work in
                defer { work.queue.removeAll() }
                return work.queue
            }
            if batch.isEmpty { return }
            for body in batch { body() }
        }
    }

    private func pollTimeout() -> Int32 {
        guard let first = deadlines.map(\.at).min() else { return -1 }
        let left = first - ContinuousClock.now
        if left <= .zero { return 0 }
        let (seconds, attoseconds) = left.components
        return Int32(clamping: seconds * 1000 + attoseconds / 1_000_000_000_000_000 + 1)
    }

    private func fireDeadlines() {
        let now = ContinuousClock.now
        let due = deadlines.filter { $0.at <= now }
        guard !due.isEmpty else { return }
        deadlines.removeAll { $0.at <= now }
        for deadline in due { deadline.fire() }
    }
}

/// Carries a closure that is only ever run on the thread it is handed to.
struct UncheckedBox<Value>: @unchecked Sendable {
    let value: Value
    init(_ value: Value) { self.value = value }
}
