import CDBus
import Dispatch
import Synchronization

#if canImport(Glibc)
import Glibc
#endif

/// The thread that owns one libdbus connection and does all of its I/O.
///
/// libdbus starves sends from a second thread while one thread blocks inside it, so every
/// libdbus call on the connection happens here. Other threads hand work over through
/// ``submit(_:)``, which queues a closure and wakes the `poll` with an eventfd. The loop polls
/// the connection's watches, reads while data is available (libdbus reads 2 KiB per call),
/// dispatches every complete message to ``ConnectionState``, and fires deadlines.
///
/// Once the loop has ended, work submitted later runs on ``afterEnd`` instead, against the
/// ended ``ConnectionState`` (calls fail, disconnect handlers run at once, sends are dropped).
///
/// `@unchecked Sendable`: the mutable state (`state`, `watches`, `timeouts`) is touched only on
/// the loop thread, then only on ``afterEnd``; the command queue is behind a mutex.
final class EventLoop: @unchecked Sendable {
    let raw: OpaquePointer
    private let wakeFD: Int32
    private let commands = Mutex<(queue: [@Sendable (EventLoop) -> Void], ended: Bool)>(([], false))
    /// Runs what is submitted after the loop thread has finished, one piece at a time.
    private let afterEnd = DispatchQueue(label: "dbus.connection.after-end")
    private var running = true
    /// The loop thread (0 until it runs): what it submits itself needs no wake-up.
    private let loopThread = Atomic<UInt>(0)
    private var watches: [OpaquePointer] = []
    private var timeouts: [(timeout: OpaquePointer, deadline: UInt64)] = []
    /// Set once the thread runs; everything the loop does to messages goes through it.
    var state: ConnectionState!

    /// The bus's answers to a pipelined handshake, until they are read: libdbus must not read
    /// the socket before (see ``PipelinedHandshake``).
    private var handshake: HandshakeAnswers?

    /// Replies and signals sent together leave in one write when they may (loop thread only).
    private var gathered = GatheredWrite()
    /// How many messages left that way, in how many writes (the tests' window on which way
    /// they took).
    let gatheredMessages = Atomic<Int>(0)
    let gatheredWrites = Atomic<Int>(0)

    init(connection raw: OpaquePointer, handshake: HandshakeAnswers? = nil) throws(DBusError) {
        self.raw = raw
        self.handshake = handshake
        wakeFD = eventfd(0, Int32(EFD_CLOEXEC | EFD_NONBLOCK))
        guard wakeFD >= 0 else { throw .failed("eventfd: \(SystemCallError("eventfd"))") }
    }

    deinit {
        close(wakeFD)
    }

    /// Starts the loop thread. `state` receives every message.
    func start(state: ConnectionState) {
        self.state = state
        let context = Unmanaged.passRetained(self).toOpaque()
        var thread = pthread_t()
        let result = pthread_create(&thread, nil, { context in
            let loop = Unmanaged<EventLoop>.fromOpaque(context!).takeRetainedValue()
            loop.run()
            return nil
        }, context)
        precondition(result == 0, "could not start the D-Bus event-loop thread")
        pthread_detach(thread)
    }

    /// Runs `work` on the loop thread, after everything submitted before it.
    ///
    /// Work the loop thread submits itself (a reply made while dispatching) is run before the
    /// loop next waits, without writing to the eventfd.
    func submit(_ work: @escaping @Sendable (EventLoop) -> Void) {
        let queued = commands.withLock { commands in
            if !commands.ended { commands.queue.append(work) }
            return !commands.ended
        }
        guard queued else {
            afterEnd.async { work(self) }
            return
        }
        if loopThread.load(ordering: .relaxed) == UInt(pthread_self()) { return }
        var one: UInt64 = 1
        _ = write(wakeFD, &one, 8)
    }

    /// Wakes the loop's thread if it waits in `poll`.
    func wake() {
        var one: UInt64 = 1
        _ = write(wakeFD, &one, 8)
    }

    /// Ends the loop after the commands already queued; the connection is closed on the way out.
    func stop() {
        submit { loop in loop.running = false }
    }

    // MARK: The loop

    private func run() {
        prepare()
        while true {
            doPendingWork()
            guard isLive else { break }
            pollOnce()
        }
        finish()
    }

    /// Runs what was submitted, dispatches what was received, then runs what dispatching
    /// submitted from this thread (replies, mostly), before the loop waits.
    ///
    /// - Returns: whether there was anything to do.
    @discardableResult
    private func doPendingWork() -> Bool {
        var busy = runCommands()
        busy = dispatchAll() || busy
        return runCommands() || busy
    }

    /// Whether the loop goes on: not stopped, and the connection not lost.
    private var isLive: Bool {
        running && dbus_connection_get_is_connected(raw) != 0
    }

    /// Makes the calling thread the loop's, without a thread of its own: it drives the loop by
    /// calling ``turn()`` whenever it has nothing else to do. `state` receives every message.
    func adopt(state: ConnectionState) {
        self.state = state
        prepare()
        // libdbus holds this loop unretained in its callbacks until finish(): as the thread of
        // start(state:) does, the driver keeps it alive until then.
        heldByDriver = Unmanaged.passRetained(self)
    }

    /// The reference a driven loop holds on itself until ``finish()``.
    private var heldByDriver: Unmanaged<EventLoop>?

    /// One round of a loop driven by its thread (``adopt(state:)``): what was submitted, what
    /// was received, and only when neither gave anything to do, one wait in `poll` for the
    /// socket, a ``submit(_:)`` from another thread, or a deadline.
    ///
    /// - Returns: false once the connection has ended (closed or lost); the loop is then over.
    func turn() -> Bool {
        precondition(heldByDriver != nil || finished, "turn() on a connection that has a thread of its own")
        precondition(loopThread.load(ordering: .relaxed) == UInt(pthread_self()), "turn() from another thread than the connection's")
        guard !finished else { return false }
        let busy = doPendingWork()
        if isLive {
            // Busy, it only looks (a steady stream of work must not keep the socket unread);
            // what it finds is dispatched at once, so the driver has it on its return.
            pollOnce(waiting: !busy)
            doPendingWork()
        }
        guard isLive else {
            finish()
            // Last: this may let go of the loop itself.
            heldByDriver.take()?.release()
            return false
        }
        return true
    }

    /// Before the connection closes: what waits for the answer to `Hello` is sent once it comes
    /// (`close()` sends what is queued), waiting for it as long as `dbus_bus_register` would.
    private func sendHeldMessages() {
        let deadline = Clock.now + 25_000_000_000
        guard !state.holdsMessages || settleHandshake(until: deadline) else { return }
        while state.holdsMessages, dbus_connection_get_is_connected(raw) != 0, Clock.now < deadline {
            _ = dbus_connection_read_write(raw, 100)
            dispatchAll()
        }
    }

    /// Set once ``finish()`` has run.
    private var finished = false

    /// Hooks the connection's watches, timeouts and incoming messages to this loop, and makes
    /// the current thread its thread.
    private func prepare() {
        let user = Unmanaged.passUnretained(self).toOpaque()
        dbus_connection_set_watch_functions(raw, { watch, data in
            EventLoop.from(data).watches.append(watch!)
            return 1
        }, { watch, data in
            EventLoop.from(data).watches.removeAll { $0 == watch }
        }, { _, _ in
            // Enabled state is read on every iteration; nothing to record.
        }, user, nil)
        dbus_connection_set_timeout_functions(raw, { timeout, data in
            let loop = EventLoop.from(data)
            loop.timeouts.append((timeout!, Clock.now + UInt64(dbus_timeout_get_interval(timeout!)) * 1_000_000))
            return 1
        }, { timeout, data in
            EventLoop.from(data).timeouts.removeAll { $0.timeout == timeout }
        }, { timeout, data in
            let loop = EventLoop.from(data)
            if let index = loop.timeouts.firstIndex(where: { $0.timeout == timeout }) {
                loop.timeouts[index].deadline = Clock.now + UInt64(dbus_timeout_get_interval(timeout!)) * 1_000_000
            }
        }, user, nil)
        // `Peer` calls come to the filter too, not answered by libdbus at once: their answers
        // then leave in order with the rest, held or not (`ObjectDispatcher` answers them).
        dbus_connection_set_route_peer_messages(raw, 1)
        dbus_connection_add_filter(raw, { _, message, data in
            guard let message else { return DBUS_HANDLER_RESULT_NOT_YET_HANDLED }
            return EventLoop.from(data).state.receive(Message(retaining: message))
        }, user, nil)
        loopThread.store(UInt(pthread_self()), ordering: .relaxed)
    }

    /// Ends the loop: sends what waited for `Hello`'s answer, fails what waits for replies,
    /// closes and lets go of the connection, and hands what is submitted later to ``afterEnd``.
    private func finish() {
        sendHeldMessages()
        finished = true
        state.connectionEnded()
        if dbus_connection_get_is_connected(raw) != 0 {
            // A flush may read as well: not before the answers to a pipelined handshake are out
            // of the way (a bus that has not given them by now has nothing to flush to).
            if settleHandshake(until: Clock.now + 1_000_000_000) { dbus_connection_flush(raw) }
            if dbus_connection_get_is_connected(raw) != 0 { dbus_connection_close(raw) }
        }
        dbus_connection_set_watch_functions(raw, nil, nil, nil, nil, nil)
        dbus_connection_set_timeout_functions(raw, nil, nil, nil, nil, nil)
        _ = dispatchAll()
        dbus_connection_unref(raw)
        runCommands(last: true)
    }

    private static func from(_ data: UnsafeMutableRawPointer?) -> EventLoop {
        Unmanaged<EventLoop>.fromOpaque(data!).takeUnretainedValue()
    }

    /// Runs the queued commands until none is left; `last` also marks the loop ended, in the
    /// same step as finding the queue empty, so no command is ever left behind.
    /// - Returns: whether any command ran.
    @discardableResult
    private func runCommands(last: Bool = false) -> Bool {
        var ran = false
        while true {
            let batch = commands.withLock { commands -> [@Sendable (EventLoop) -> Void] in
                let batch = commands.queue
                commands.queue.removeAll(keepingCapacity: true)
                if batch.isEmpty, last { commands.ended = true }
                return batch
            }
            if batch.isEmpty { return ran }
            ran = true
            // Answers handed over from other threads, a batch's say, leave together as well.
            corking = true
            for work in batch { work(self) }
            corking = false
            uncork()
        }
    }

    /// Dispatches every whole message received. What the handlers of the second and later
    /// ones send is held (``corked``) and leaves together once they are done, or every
    /// ``corkLimit`` messages: the answers to calls that came in one read cost one write
    /// (``GatheredWrite``), not one each.
    ///
    /// - Returns: whether any message was dispatched.
    @discardableResult
    private func dispatchAll() -> Bool {
        guard dbus_connection_get_dispatch_status(raw) == DBUS_DISPATCH_DATA_REMAINS else { return false }
        // The first is answered as it is handled: alone, its answer should not wait. Behind it,
        // answers wait for each other.
        guard dbus_connection_dispatch(raw) == DBUS_DISPATCH_DATA_REMAINS else { return true }
        corking = true
        while dbus_connection_dispatch(raw) == DBUS_DISPATCH_DATA_REMAINS {}
        corking = false
        uncork()
        return true
    }

    /// Sends what was held while dispatching: before anything else is handed to libdbus
    /// (a call, say), so that messages leave in the order they were sent.
    func uncork() {
        guard !corked.isEmpty else { return }
        let messages = corked
        corked.removeAll(keepingCapacity: true)
        transmit(messages)
    }

    /// While the loop dispatches or runs what was submitted, what is sent waits in ``corked``.
    private var corking = false
    private var corked: [Message] = []
    /// The most messages held before they are sent: a few answers' worth, so that the first of
    /// them does not wait for many others, and the bus has them to pass on while the loop makes
    /// the next.
    private static let corkLimit = 8

    /// The descriptors of the last `poll` and the watches they stand for, kept between rounds so
    /// that a round allocates nothing.
    private var fds: [pollfd] = []
    private var polled: [OpaquePointer] = []

    /// - Parameter waiting: whether to wait for something to happen; without, `poll` only looks.
    private func pollOnce(waiting: Bool = true) {
        fds.removeAll(keepingCapacity: true)
        polled.removeAll(keepingCapacity: true)
        fds.append(pollfd(fd: wakeFD, events: Int16(POLLIN), revents: 0))
        for watch in watches where dbus_watch_get_enabled(watch) != 0 {
            let flags = dbus_watch_get_flags(watch)
            var events: Int16 = 0
            if flags & DBUS_WATCH_READABLE.rawValue != 0 { events |= Int16(POLLIN) }
            if flags & DBUS_WATCH_WRITABLE.rawValue != 0 { events |= Int16(POLLOUT) }
            fds.append(pollfd(fd: dbus_watch_get_unix_fd(watch), events: events, revents: 0))
            polled.append(watch)
        }

        let now = Clock.now
        var wait: Int32 = -1
        for entry in timeouts where dbus_timeout_get_enabled(entry.timeout) != 0 {
            wait = Self.earlier(wait, entry.deadline, now)
        }
        if let deadline = state.nextDeadline {
            wait = Self.earlier(wait, deadline, now)
        }

        let ready = poll(&fds, nfds_t(fds.count), waiting ? wait : 0)
        if ready < 0 { return }  // EINTR: just go round again

        if fds[0].revents != 0 {
            var value: UInt64 = 0
            _ = read(wakeFD, &value, 8)
        }
        for (index, watch) in polled.enumerated() {
            let revents = fds[index + 1].revents
            guard revents != 0, watches.contains(watch) else { continue }
            handle(watch, revents: revents, fd: fds[index + 1].fd)
        }

        let after = Clock.now
        for entry in timeouts where entry.deadline <= after && dbus_timeout_get_enabled(entry.timeout) != 0 {
            if let index = timeouts.firstIndex(where: { $0.timeout == entry.timeout }) {
                timeouts[index].deadline = after + UInt64(dbus_timeout_get_interval(entry.timeout)) * 1_000_000
            }
            dbus_timeout_handle(entry.timeout)
        }
        state.expireDeadlines(now: after)
    }

    /// Lets libdbus read or write; keeps reading while the socket has more and no whole message
    /// has come yet, because libdbus reads only 2 KiB at a time and a large message would
    /// otherwise cost one poll per 2 KiB. Once a message is whole it is dispatched first: a
    /// small call is answered without a second look at the socket (the next `poll` finds what
    /// came after it).
    private func handle(_ watch: OpaquePointer, revents: Int16, fd: Int32) {
        var flags: UInt32 = 0
        if revents & Int16(POLLIN) != 0, readsHandshake(from: fd) { flags |= DBUS_WATCH_READABLE.rawValue }
        if revents & Int16(POLLOUT) != 0 { flags |= DBUS_WATCH_WRITABLE.rawValue }
        if revents & Int16(POLLERR) != 0 { flags |= DBUS_WATCH_ERROR.rawValue }
        if revents & Int16(POLLHUP) != 0 { flags |= DBUS_WATCH_HANGUP.rawValue }
        // A refused handshake closed the connection, and libdbus let go of the watch with it.
        guard flags != 0, watches.contains(watch) else { return }
        dbus_watch_handle(watch, flags)
        guard flags & DBUS_WATCH_READABLE.rawValue != 0 else { return }
        for _ in 0..<4096 {
            if dbus_connection_get_dispatch_status(raw) == DBUS_DISPATCH_DATA_REMAINS { return }
            var probe = pollfd(fd: fd, events: Int16(POLLIN), revents: 0)
            guard poll(&probe, 1, 0) == 1, probe.revents & Int16(POLLIN) != 0,
                  watches.contains(watch), dbus_watch_get_enabled(watch) != 0 else { return }
            dbus_watch_handle(watch, DBUS_WATCH_READABLE.rawValue)
        }
    }

    /// Whether libdbus may read `fd`: once the answers to a pipelined handshake are read off
    /// it (taking what has come of them). A refusal closes the connection, with its reason.
    private func readsHandshake(from fd: Int32) -> Bool {
        guard let handshake else { return true }
        return conclude(handshake.take(from: fd))
    }

    /// Reads the answers to a pipelined handshake, waiting for them until `deadline`; false
    /// when the bus refused (the connection is then closed) or did not answer in time.
    private func settleHandshake(until deadline: UInt64) -> Bool {
        guard let handshake else { return true }
        var descriptor: Int32 = -1
        guard dbus_connection_get_socket(raw, &descriptor) != 0 else { return false }
        return conclude(handshake.settle(on: descriptor, until: deadline))
    }

    /// Whether the handshake is over; a refusal ends the connection, with its reason.
    private func conclude(_ progress: HandshakeAnswers.Progress) -> Bool {
        switch progress {
        case .done:
            handshake = nil
            return true
        case .waiting:
            return false
        case .refused(let reason):
            handshake = nil
            state.connectionEnded(reason: reason)
            if dbus_connection_get_is_connected(raw) != 0 { dbus_connection_close(raw) }
            return false
        }
    }

    private static func earlier(_ wait: Int32, _ deadline: UInt64, _ now: UInt64) -> Int32 {
        let milliseconds = deadline <= now ? 0 : Int32(clamping: (deadline - now + 999_999) / 1_000_000)
        return wait < 0 ? milliseconds : min(wait, milliseconds)
    }
}

/// Monotonic time in nanoseconds.
enum Clock {
    static var now: UInt64 {
        var spec = timespec()
        clock_gettime(CLOCK_MONOTONIC, &spec)
        return UInt64(spec.tv_sec) * 1_000_000_000 + UInt64(spec.tv_nsec)
    }
}

extension EventLoop {
    /// Whether ``send(_:)`` from this thread hands messages to the bus at once: on the loop
    /// thread with nothing queued before them, not once the loop has ended. What fits in the
    /// socket is written at once.
    var sendsAtOnce: Bool {
        loopThread.load(ordering: .relaxed) == UInt(pthread_self()) && commands.withLock({ $0.queue.isEmpty && !$0.ended }) && !state.ended
    }

    /// Sends `messages` in order, from the loop thread.
    func send(_ messages: [Message]) {
        guard !messages.isEmpty else { return }
        if sendsAtOnce {
            sendInOrder(messages)
            return
        }
        submit { loop in
            // After the end `raw` is released: what was not sent by then is dropped.
            guard !loop.state.ended else { return }
            loop.sendInOrder(messages)
        }
    }

    /// Sends `messages` now, or holds them with what is held already while the loop
    /// dispatches or runs what was submitted (see ``dispatchAll()``).
    private func sendInOrder(_ messages: [Message]) {
        // Nothing is held while `Hello` is awaited: what must wait for its answer waits in
        // ``ConnectionState``, and what it held leaves first once the answer comes.
        guard corking, !state.awaitsGreeting else { return transmit(messages) }
        corked += messages
        if corked.count >= Self.corkLimit { uncork() }
    }

    /// Hands `messages` to the bus in order, on the loop thread: several in one write when
    /// they may, and one kept as its bytes alone (``GatheredWrite``), else to libdbus one by one.
    private func transmit(_ messages: [Message]) {
        var next = 0
        while next < messages.count {
            let written = messages.count - next > 1 || messages[next].unreadWire != nil ? writeTogether(messages[next...]) : 0
            if written > 0 {
                next += written
            } else {
                state.transmit(messages[next])
                next += 1
            }
        }
    }

    /// Writes a message kept as its bytes (a method call, say) to the socket at once, on the
    /// loop thread, as ``writeTogether(_:numbered:)`` would; the serial it was given, or nil
    /// when it may not be written now (libdbus must send it).
    func writeAlone(_ message: Message) -> UInt32? {
        var serial: UInt32? = nil
        return writeTogether([message][...], numbered: { serial = $0 }) == 1 ? serial : nil
    }

    /// Writes the first of `messages` to the socket at once (see ``GatheredWrite``), when no
    /// byte of libdbus's can come between or before them: the handshake's answers are read,
    /// nothing waits for `Hello`, and libdbus has nothing queued (not even the rest of a
    /// message it began to write). Returns how many it wrote.
    private func writeTogether(_ messages: ArraySlice<Message>, numbered: (UInt32) -> Void = { _ in }) -> Int {
        guard handshake == nil, !state.awaitsGreeting, dbus_connection_get_is_authenticated(raw) != 0,
              dbus_connection_has_messages_to_send(raw) == 0 else { return 0 }
        var socket: Int32 = -1
        guard dbus_connection_get_socket(raw, &socket) != 0, socket >= 0 else { return 0 }
        let written = gathered.write(messages, to: socket) {
            let serial = state.nextSerial()
            numbered(serial)
            return serial
        }
        gatheredMessages.add(written, ordering: .relaxed)
        if written > 0 { gatheredWrites.add(1, ordering: .relaxed) }
        return written
    }
}
