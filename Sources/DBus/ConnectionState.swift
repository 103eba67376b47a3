import CDBus

/// What a connection keeps between messages: calls awaiting replies, signal subscriptions and
/// exported objects. Lives on the event-loop thread and is touched nowhere else.
final class ConnectionState {
    typealias Reply = CheckedContinuation<Result<Message, DBusError>, Never>

    private struct PendingCall {
        let id: UInt64
        let reply: Reply
        let deadline: UInt64?
    }

    private unowned let loop: EventLoop
    private var pending: [UInt32: PendingCall] = [:]
    private var serialOfCall: [UInt64: UInt32] = [:]
    private var subscriptions: [UInt64: (rule: MatchRule, continuation: AsyncStream<Message>.Continuation)] = [:]
    private var objects: [String: any DBusObject] = [:]
    private var disconnectHandlers: [@Sendable () -> Void] = []
    private(set) var ended = false

    init(loop: EventLoop) {
        self.loop = loop
    }

    // MARK: Calls

    func startCall(_ message: Message, id: UInt64, deadline: UInt64?, reply: Reply) {
        guard !ended else {
            reply.resume(returning: .failure(.disconnected("the connection to the bus is closed")))
            return
        }
        var serial: UInt32 = 0
        guard dbus_connection_send(loop.raw, message.raw, &serial) != 0 else {
            reply.resume(returning: .failure(.noMemory("the message could not be queued")))
            return
        }
        pending[serial] = PendingCall(id: id, reply: reply, deadline: deadline)
        serialOfCall[id] = serial
    }

    func cancelCall(id: UInt64) {
        guard let serial = serialOfCall.removeValue(forKey: id),
              let call = pending.removeValue(forKey: serial) else { return }
        call.reply.resume(returning: .failure(DBusError(name: DBusError.cancelledName, message: "the call was cancelled")))
    }

    var nextDeadline: UInt64? {
        pending.values.lazy.compactMap(\.deadline).min()
    }

    func expireDeadlines(now: UInt64) {
        let expired = pending.filter { ($0.value.deadline ?? .max) <= now }
        for (serial, call) in expired {
            pending[serial] = nil
            serialOfCall[call.id] = nil
            call.reply.resume(returning: .failure(.noReply("no reply within the time allowed")))
        }
    }

    // MARK: Subscriptions and objects

    func subscribe(id: UInt64, rule: MatchRule, continuation: AsyncStream<Message>.Continuation) {
        guard !ended else { continuation.finish(); return }
        subscriptions[id] = (rule, continuation)
    }

    func unsubscribe(id: UInt64) {
        subscriptions.removeValue(forKey: id)?.continuation.finish()
    }

    func export(_ object: any DBusObject, at path: String) {
        objects[path] = object
    }

    func unexport(path: String) {
        objects[path] = nil
    }

    func onDisconnect(_ handler: @escaping @Sendable () -> Void) {
        if ended { handler() } else { disconnectHandlers.append(handler) }
    }

    /// Fails what is waiting and tells subscribers and observers that the connection is gone.
    func connectionEnded() {
        guard !ended else { return }
        ended = true
        for call in pending.values {
            call.reply.resume(returning: .failure(.disconnected("the connection to the bus was lost")))
        }
        pending.removeAll()
        serialOfCall.removeAll()
        for subscription in subscriptions.values { subscription.continuation.finish() }
        subscriptions.removeAll()
        objects.removeAll()
        for handler in disconnectHandlers { handler() }
        disconnectHandlers.removeAll()
    }

    // MARK: Incoming messages

    func receive(_ message: Message) -> DBusHandlerResult {
        switch message.type {
        case .methodReturn, .error:
            guard let call = pending.removeValue(forKey: message.replySerial) else { return DBUS_HANDLER_RESULT_NOT_YET_HANDLED }
            serialOfCall[call.id] = nil
            if let error = message.error {
                call.reply.resume(returning: .failure(error))
            } else {
                call.reply.resume(returning: .success(message))
            }
            return DBUS_HANDLER_RESULT_HANDLED
        case .signal:
            for subscription in subscriptions.values where subscription.rule.matches(message) {
                subscription.continuation.yield(message)
            }
            return DBUS_HANDLER_RESULT_NOT_YET_HANDLED
        case .methodCall:
            ObjectDispatcher.dispatch(message, objects: objects, loop: loop)
            return DBUS_HANDLER_RESULT_HANDLED
        case .invalid:
            return DBUS_HANDLER_RESULT_NOT_YET_HANDLED
        }
    }
}

extension DBusError {
    /// The name given to calls abandoned because their task was cancelled.
    public static let cancelledName = "org.freedesktop.DBus.Local.Cancelled"
}
