import CDBus
import Synchronization

#if canImport(Glibc)
import Glibc
#endif

/// A connection to a message bus, with its own event-loop thread.
///
/// ```swift
/// let bus = try Connection.connect()                       // the session bus
/// let reply = try await bus.call(destination: "org.freedesktop.DBus",
///                                path: "/org/freedesktop/DBus",
///                                interface: "org.freedesktop.DBus",
///                                method: "ListNames")
/// ```
///
/// Everything is thread-safe: calls, sends and subscriptions are handed to the connection's
/// event loop, which does all the I/O. Messages go out in the order they were sent.
public final class Connection: Sendable {
    private let loop: EventLoop

    /// How many messages left written by the loop itself (``GatheredWrite``), and in how many
    /// writes: for tests.
    var gatheredMessages: Int { loop.gatheredMessages.load(ordering: .relaxed) }
    var gatheredWrites: Int { loop.gatheredWrites.load(ordering: .relaxed) }
    /// The unique name the bus gave this connection (`:1.42`).
    public let uniqueName: String
    /// The address this connection was opened on.
    public let address: String
    /// Whether unix file descriptors can be passed over this connection.
    public let canPassFileDescriptors: Bool
    private let nextID = Atomic<UInt64>(1)
    private let connected = Atomic<Bool>(true)

    /// False once the connection is lost or closed; a closed connection never reopens.
    public var isConnected: Bool { connected.load(ordering: .acquiring) }

    /// Connects to the bus at `address`, or to the session bus when `address` is nil.
    ///
    /// - Throws: a ``DBusError`` naming the address when there is no bus to connect to.
    public static func connect(address: String? = nil) throws(DBusError) -> Connection {
        try connect(address: address, awaitingName: true)
    }

    /// Connects to the bus at `address`, or to the session bus when `address` is nil.
    ///
    /// - Parameter awaitingName: Whether to wait for the bus's answer to `Hello` (the unique
    ///   name) before returning. A short-lived client that never needs ``uniqueName`` passes
    ///   `false`: `Hello` is then sent and its answer left to arrive while the first call is on
    ///   its way, which saves one round trip to the bus (the bus answers messages in order, so
    ///   the call still comes after `Hello`). ``uniqueName`` is then empty. Messages carrying
    ///   descriptors, and any sent after one, are held until `Hello` is answered: a bus still
    ///   reading the authentication would drop their descriptors. On a `unix:` address the
    ///   authentication does not wait for the bus either (``PipelinedHandshake``): a bus that
    ///   refuses it fails the first call, with its reason, instead of this.
    /// - Parameter drivenByCaller: Whether the calling thread drives the connection instead of a
    ///   thread of its own: it must then call ``turn()`` whenever it has nothing else to do,
    ///   and no other thread may (see ``turn()``). A short-lived client whose one thread waits
    ///   for the bus anyway saves the thread's start and two thread hops per call.
    public static func connect(address: String?, awaitingName: Bool, drivenByCaller: Bool = false) throws(DBusError) -> Connection {
        guard let address = address ?? sessionBusAddress() else {
            // The path tried, as it is on this machine (or that none could be, without the variable).
            let runtime = getenv("XDG_RUNTIME_DIR").map { String(cString: $0) } ?? ""
            let tried = runtime.isEmpty ? "XDG_RUNTIME_DIR is not set either" : "\(runtime)/bus is not a bus socket"
            throw DBusError(
                name: "org.freedesktop.DBus.Error.NoServer",
                message: "no session bus: DBUS_SESSION_BUS_ADDRESS is not set and \(tried)")
        }
        return try Connection(address: address, awaitingName: awaitingName, drivenByCaller: drivenByCaller)
    }

    /// The session bus address from the environment, as libdbus and GDBus find it.
    public static func sessionBusAddress() -> String? {
        if let address = getenv("DBUS_SESSION_BUS_ADDRESS").map({ String(cString: $0) }), !address.isEmpty {
            return address
        }
        if let runtime = getenv("XDG_RUNTIME_DIR").map({ String(cString: $0) }), !runtime.isEmpty {
            let path = runtime + "/bus"
            var info = stat()
            if stat(path, &info) == 0, info.st_mode & S_IFMT == S_IFSOCK { return "unix:path=" + path }
        }
        return nil
    }

    private init(address: String, awaitingName: Bool, drivenByCaller: Bool) throws(DBusError) {
        _ = dbus_threads_init_default()
        var error = CDBus.DBusError()
        dbus_error_init(&error)
        defer { dbus_error_free(&error) }
        // Not waiting for Hello's answer, the handshake need not wait for the bus either.
        let pipelined = awaitingName ? nil : PipelinedHandshake.open(address: address)
        guard let raw = pipelined?.raw ?? dbus_connection_open_private(address, &error) else {
            throw Self.convert(error, address: address)
        }
        dbus_connection_set_exit_on_disconnect(raw, 0)
        // libdbus drops the connection on a message over its 32 MiB default; the protocol allows
        // 128 MiB, and a peer sending one must not cut us off the bus.
        dbus_connection_set_max_message_size(raw, 128 << 20)
        dbus_connection_set_max_received_size(raw, 256 << 20)
        // Hello is the one blocking call, made before the loop thread exists; or, not awaiting
        // the name, the authentication alone (whether descriptors may pass is known only then).
        var helloSerial: UInt32? = nil
        let registered = awaitingName
            ? dbus_bus_register(raw, &error) != 0
            : (pipelined != nil || Self.authenticate(raw, &error)) && Self.greet(raw, &error, helloSerial: &helloSerial)
        guard registered else {
            dbus_connection_close(raw)
            dbus_connection_unref(raw)
            throw Self.convert(error, address: address)
        }
        self.address = address
        uniqueName = dbus_bus_get_unique_name(raw).map { String(cString: $0) } ?? ""
        canPassFileDescriptors = dbus_connection_can_send_type(raw, TypeCode.unixFD) != 0
        do {
            loop = try EventLoop(connection: raw, handshake: pipelined?.answers)
        } catch {
            dbus_connection_close(raw)
            dbus_connection_unref(raw)
            throw error
        }
        let state = ConnectionState(loop: loop, helloSerial: helloSerial)
        if drivenByCaller {
            loop.adopt(state: state)
        } else {
            loop.start(state: state)
        }
        onDisconnect { [weak self] in self?.connected.store(false, ordering: .releasing) }
    }

    deinit {
        loop.stop()
    }

    /// Completes the authentication (the usual way, in turns with the bus).
    private static func authenticate(_ raw: OpaquePointer, _ error: inout CDBus.DBusError) -> Bool {
        // As long as dbus_bus_register would wait for Hello's answer: 25 s.
        let deadline = ContinuousClock.now + .seconds(25)
        while dbus_connection_get_is_authenticated(raw) == 0 {
            let left = deadline - ContinuousClock.now
            guard left > .zero else {
                dbus_set_error_const(&error, "org.freedesktop.DBus.Error.NoReply", "the bus did not finish authenticating the connection within 25 s")
                return false
            }
            let milliseconds = Int32(clamping: left.components.seconds * 1_000 + left.components.attoseconds / 1_000_000_000_000_000 + 1)
            guard dbus_connection_get_is_connected(raw) != 0, dbus_connection_read_write(raw, milliseconds) != 0 else {
                dbus_set_error_const(&error, "org.freedesktop.DBus.Error.AuthFailed", "the bus refused the connection (authentication failed)")
                return false
            }
        }
        return true
    }

    /// Queues `Hello` without waiting for its answer.
    private static func greet(_ raw: OpaquePointer, _ error: inout CDBus.DBusError, helloSerial: inout UInt32?) -> Bool {
        guard dbus_connection_get_is_connected(raw) != 0,
            let hello = dbus_message_new_method_call("org.freedesktop.DBus", "/org/freedesktop/DBus", "org.freedesktop.DBus", "Hello")
        else {
            dbus_set_error_const(&error, "org.freedesktop.DBus.Error.Disconnected", "the bus closed the connection")
            return false
        }
        defer { dbus_message_unref(hello) }
        var serial: UInt32 = 0
        guard dbus_connection_send(raw, hello, &serial) != 0 else {
            dbus_set_error_const(&error, "org.freedesktop.DBus.Error.NoMemory", "Hello could not be queued")
            return false
        }
        helloSerial = serial
        return true
    }

    private static func convert(_ error: CDBus.DBusError, address: String) -> DBusError {
        let name = error.name.map { String(cString: $0) } ?? "org.freedesktop.DBus.Error.Failed"
        let message = error.message.map { String(cString: $0) } ?? "could not connect"
        return DBusError(name: name, message: message)
    }

    // MARK: Sending

    /// Sends messages (signals, or calls whose reply nobody awaits) in order.
    public func send(_ messages: [Message]) {
        loop.send(messages)
    }

    /// Sends a method call and waits for its reply.
    ///
    /// - Parameter timeout: how long to wait; nil waits as long as the connection lives.
    /// - Throws: the error reply as a ``DBusError``; `NoReply` on timeout; `Disconnected` if the
    ///   connection is lost; `org.freedesktop.DBus.Local.Cancelled` if the task is cancelled.
    public func call(_ message: Message, timeout: Duration? = nil) async throws(DBusError) -> Message {
        let id = nextID.wrappingAdd(1, ordering: .relaxed).oldValue
        let deadline = timeout.map { Clock.now.addingReportingOverflow(UInt64(max(0, $0.nanoseconds))) }.map { $0.overflow ? UInt64.max : $0.partialValue }
        // A cancel may come at any moment, even between the call's start here and its start on
        // the loop: the flag is how the loop learns of one that came first, since such a cancel
        // finds no call there to cancel.
        let cancelled = CancellationFlag()
        let result = await withTaskCancellationHandler {
            await CallOutcome.awaited { reply in
                loop.submit { loop in
                    guard !cancelled.isSet else {
                        return reply.resume(returning: .failure(DBusError(name: DBusError.cancelledName, message: "the call was cancelled")))
                    }
                    loop.state.startCall(message, id: id, deadline: deadline, reply: reply)
                }
            }
        } onCancel: {
            cancelled.set()
            loop.submit { loop in loop.state.cancelCall(id: id) }
        }
        return try result.get()
    }

    /// Calls a method and returns the reply's arguments.
    public func call(
        destination: String?, path: String, interface: String?, method: String,
        arguments: [DBusValue] = [], timeout: Duration? = nil
    ) async throws(DBusError) -> [DBusValue] {
        let message = try Message.methodCall(destination: destination, path: path, interface: interface, method: method, arguments: arguments)
        return try await call(message, timeout: timeout).arguments()
    }

    /// Emits a signal.
    public func emit(path: String, interface: String, name: String, arguments: [DBusValue] = []) throws(DBusError) {
        send([try Message.signal(path: path, interface: interface, name: name, arguments: arguments)])
    }

    // MARK: Objects

    /// Exports `object` at `path`: calls to that path go to it from now on.
    public func export(_ object: any DBusObject, at path: String) throws(DBusError) {
        guard ObjectPath.isValid(path) else { throw .invalidArgs("'\(path)' is not a valid object path") }
        loop.submit { loop in loop.state.export(object, at: path) }
    }

    /// Stops exporting the object at `path`.
    public func unexport(path: String) {
        loop.submit { loop in loop.state.unexport(path: path) }
    }

    // MARK: Signals

    /// The signals matching `rule`, from the moment this returns.
    ///
    /// The stream ends when the connection is lost or when the consumer stops iterating.
    public func signals(matching rule: MatchRule) async throws(DBusError) -> AsyncStream<Message> {
        let id = nextID.wrappingAdd(1, ordering: .relaxed).oldValue
        let (stream, continuation) = AsyncStream<Message>.makeStream(bufferingPolicy: .unbounded)
        loop.submit { loop in loop.state.subscribe(id: id, rule: rule, continuation: continuation) }
        let matchString = rule.string
        continuation.onTermination = { [loop, weak self] _ in
            loop.submit { loop in loop.state.unsubscribe(id: id) }
            guard let self else { return }
            Task { try? await self.bus("RemoveMatch", [.string(matchString)]) }
        }
        do {
            try await bus("AddMatch", [.string(matchString)])
        } catch {
            continuation.finish()
            throw error
        }
        return stream
    }

    // MARK: Names

    /// The result of asking the bus for a well-known name.
    public enum NameRequestResult: UInt32, Sendable {
        case primaryOwner = 1
        case inQueue = 2
        case exists = 3
        case alreadyOwner = 4
    }

    /// Asks for a well-known name without queueing: it is either ours now or taken.
    public func requestName(_ name: String) async throws(DBusError) -> NameRequestResult {
        let doNotQueue: UInt32 = 4
        let reply = try await bus("RequestName", [.string(name), .uint32(doNotQueue)])
        return reply.first?.uint32Value.flatMap(NameRequestResult.init(rawValue:)) ?? .exists
    }

    /// The unique name owning `name`, or nil when nobody does.
    public func nameOwner(_ name: String, timeout: Duration? = nil) async throws(DBusError) -> String? {
        do {
            return try await bus("GetNameOwner", [.string(name)], timeout: timeout).first?.stringValue
        } catch where error.name == DBusError.nameHasNoOwnerName {
            return nil
        }
    }

    /// Follows who owns the well-known name `name`, so that a reply to a call made to it from
    /// now on is taken only from its owner (when the call left, or since) or, for an error,
    /// from the bus; and a signal whose rule names `name` as its sender only from its owner.
    ///
    /// The bus lets any client send a reply with any serial, and a signal to anyone; without
    /// this, a reply to a call to a well-known name is taken from anyone, as libdbus does.
    /// Calls to unique names are always checked. Nothing waits: an `AddMatch` for the name's
    /// `NameOwnerChanged` and a `GetNameOwner` leave now, ahead of any call made after this,
    /// and the bus answers them before it passes such a call on. Should the bus refuse the
    /// match, replies are taken as libdbus takes them.
    public func followOwner(of name: String) {
        let rule = MatchRule.ownerChanges(of: name).string
        guard let match = try? Self.busCall("AddMatch", [.string(rule)]),
              let ask = try? Self.busCall("GetNameOwner", [.string(name)]) else { return }
        loop.submit { loop in loop.state.follow(name, match: match, ask: ask) }
    }

    /// A call to a method of the bus itself.
    private static func busCall(_ method: String, _ arguments: [DBusValue]) throws(DBusError) -> Message {
        try Message.methodCall(
            destination: "org.freedesktop.DBus", path: "/org/freedesktop/DBus",
            interface: "org.freedesktop.DBus", method: method, arguments: arguments)
    }

    /// The bus's own id (`GetId`): the same for as long as this bus runs, another for the next
    /// one. A unique name means a connection only together with it, since a new bus hands out
    /// the same names again.
    public func busID() async throws(DBusError) -> String {
        guard let id = try await bus("GetId", []).first?.stringValue else { throw .failed("the bus returned no id") }
        return id
    }

    /// The process id of the connection `uniqueName`, by the bus's credentials.
    public func unixProcessID(of uniqueName: String) async throws(DBusError) -> UInt32 {
        guard let pid = try await bus("GetConnectionUnixProcessID", [.string(uniqueName)], timeout: .seconds(5)).first?.uint32Value else {
            throw .failed("the bus returned no process id for \(uniqueName)")
        }
        return pid
    }

    /// What dbus-daemon holds for the connection `uniqueName`: the bytes of messages queued to
    /// it and not yet read by it (`outgoing`), and of messages from it not yet delivered to all
    /// their recipients (`incoming`, what the bus counts against its `max_incoming_bytes`), by
    /// `org.freedesktop.DBus.Debug.Stats.GetConnectionStats`. Throws when the bus has no such
    /// statistics (another implementation, or a build without them) or does not allow them.
    public func heldBytes(of uniqueName: String, timeout: Duration = .seconds(2)) async throws(DBusError) -> (outgoing: UInt64, incoming: UInt64) {
        let call = try Message.methodCall(
            destination: "org.freedesktop.DBus", path: "/org/freedesktop/DBus",
            interface: "org.freedesktop.DBus.Debug.Stats", method: "GetConnectionStats", arguments: [.string(uniqueName)])
        let stats = try await self.call(call, timeout: timeout).arguments().first?.dictionaryEntries ?? []
        func number(_ key: String) -> UInt64? {
            stats.first { $0.key.stringValue == key }?.value.variantValue.flatMap { $0.uint32Value.map(UInt64.init) ?? $0.uint64Value }
        }
        guard let outgoing = number("OutgoingBytes"), let incoming = number("IncomingBytes") else {
            throw .failed("the bus's statistics of \(uniqueName) have no OutgoingBytes or IncomingBytes")
        }
        return (outgoing, incoming)
    }

    @discardableResult
    private func bus(_ method: String, _ arguments: [DBusValue], timeout: Duration? = nil) async throws(DBusError) -> [DBusValue] {
        try await call(Self.busCall(method, arguments), timeout: timeout).arguments()
    }

    // MARK: Lifetime

    /// Runs `handler` once when the connection is lost or closed (at once if it already is).
    public func onDisconnect(_ handler: @escaping @Sendable () -> Void) {
        loop.submit { loop in loop.state.onDisconnect(handler) }
    }

    /// Waits until the connection is lost or closed.
    public func waitUntilDisconnected() async {
        await withCheckedContinuation { (done: CheckedContinuation<Void, Never>) in
            onDisconnect { done.resume() }
        }
    }

    /// Sends what is queued, then closes the connection. Calls still waiting fail with `Disconnected`.
    public func close() {
        loop.stop()
    }

    // MARK: Driven by the caller

    /// Does one round of the work of a connection made with `drivenByCaller`: sends what was
    /// submitted, dispatches what was received (replies resume their callers, signals reach
    /// their streams), and, only when there was nothing to do, waits in `poll` until the bus
    /// sends something, another thread submits work or calls ``wake()``, or a deadline comes.
    ///
    /// Call it only from the thread that made the connection, never from inside a handler.
    /// Keep calling it until it returns false, after ``close()`` too: only then is the
    /// connection closed and let go of (a thread of the connection's own does that by itself).
    ///
    /// - Returns: false once the connection has ended (closed or lost); there is nothing more
    ///   to drive then.
    public func turn() -> Bool {
        loop.turn()
    }

    /// Makes a ``turn()`` waiting on another thread return (a connection made with
    /// `drivenByCaller`), so that its thread can run work handed to it by other means.
    public func wake() {
        loop.wake()
    }
}

extension Duration {
    /// Saturates instead of trapping for durations beyond about 292 years.
    var nanoseconds: Int64 {
        let (seconds, attoseconds) = components
        let (whole, overflow) = seconds.multipliedReportingOverflow(by: 1_000_000_000)
        guard !overflow else { return seconds < 0 ? .min : .max }
        return whole.addingReportingOverflow(attoseconds / 1_000_000_000).overflow ? .max : whole + attoseconds / 1_000_000_000
    }
}

