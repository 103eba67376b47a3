import CDBus

/// What a connection keeps between messages: calls awaiting replies, signal subscriptions and
/// exported objects. Lives on the event-loop thread and is touched nowhere else.
final class ConnectionState {
    /// Where the answer to a caller's call goes (see ``CallOutcome``).
    typealias Reply = CallOutcome.Continuation

    private struct PendingCall {
        let id: UInt64
        let completion: Completion
        let deadline: UInt64?
        var replier = Replier.anyone

        static let bus = "org.freedesktop.DBus"
    }

    /// Who the answer to a call is for.
    private enum Completion {
        /// A caller, waiting for it.
        case caller(Reply)
        /// This connection, following the owner of a well-known name (``follow(_:match:ask:)``):
        /// the answer to the `AddMatch` for its owner changes, or to `GetNameOwner`.
        case following(String, FollowingStep)
    }

    private enum FollowingStep { case ownerChanges, owner }

    /// Who may answer a call (see ``answers(_:sentAs:with:)``).
    private enum Replier {
        /// A well-known name whose owner is not known here.
        case anyone
        /// A unique name (`:1.42`), or the bus itself.
        case connection(String)
        /// A followed well-known name (``follow(_:match:ask:)``): who owned it when the call
        /// left, and how many of its owner changes had been seen then.
        case owner(of: String, then: String?, changesSeen: Int)
    }

    /// Who may answer a call to `destination`.
    private func replier(for destination: String?) -> Replier {
        guard let destination else { return .anyone }
        if destination.hasPrefix(":") || destination == PendingCall.bus { return .connection(destination) }
        guard let name = followed[destination] else { return .anyone }
        return .owner(of: destination, then: name.owner, changesSeen: name.changes)
    }

    private unowned let loop: EventLoop
    private var pending = SerialTable<PendingCall>()
    /// No pending call has a deadline before this (`.max`: none has one). Lowered as calls
    /// start, raised only by ``expireDeadlines(now:)`` once it is due: the loop asks for the
    /// next deadline at every round, which must not mean a walk through every pending call.
    private var earliestDeadline: UInt64 = .max
    /// `followedFirst`: the rule's sender was followed when the subscription was made (see
    /// ``comesFromRuleSender(_:_:)``).
    private var subscriptions: [UInt64: (rule: MatchRule, followedFirst: Bool, continuation: AsyncStream<Message>.Continuation)] = [:]
    private var objects: [String: any DBusObject] = [:]
    private var disconnectHandlers: [@Sendable () -> Void] = []
    private(set) var ended = false
    /// Why the connection ended, when known better than that it was lost or closed.
    private var endReason: String?
    /// Set while a `Hello` sent without waiting is unanswered: its serial, and the messages
    /// held until the answer (see ``holds(_:)``).
    private var greeting: (serial: UInt32, held: [(message: Message, call: PendingCall?)])?
    /// What is known of a followed name's owner.
    private struct FollowedName {
        /// Nil while unknown, or while nobody owns it.
        var owner: String?
        /// The owner changes seen since following began.
        var changes = 0
        /// The owners the latest changes made, with their change's number: a call may be
        /// answered by an owner that came after it left, and went again before the answer.
        var recentOwners: [(change: Int, owner: String)] = []
        /// The serial of the `GetNameOwner` asking for the owner, while it is unanswered.
        var asking: UInt32?
        /// Whether the bus said who owned the name (or that nobody did)…
        var asked = false
        /// …and that it tells this connection every owner change from then on.
        var watched = false

        /// Whether the owner is known for certain: then a call answered by someone who did not
        /// own the name when it left, nor since, was not answered by its callee.
        var certain: Bool { asked && watched }
    }

    /// The well-known names whose owner is followed (``follow(_:match:ask:)``).
    private var followed = NameTable<FollowedName>()

    /// - Parameter helloSerial: the serial of a `Hello` sent without waiting for its answer.
    init(loop: EventLoop, helloSerial: UInt32? = nil) {
        self.loop = loop
        greeting = helloSerial.map { ($0, []) }
    }

    // MARK: Calls

    func startCall(_ message: Message, id: UInt64, deadline: UInt64?, reply: Reply) {
        guard !ended else {
            reply.resume(returning: .failure(.disconnected(endReason ?? "the connection to the bus is closed")))
            return
        }
        var call = PendingCall(id: id, completion: .caller(reply), deadline: deadline)
        call.replier = replier(for: message.destination)
        if holds(message) {
            greeting?.held.append((message, call))
        } else {
            start(call, message)
        }
    }

    private func start(_ call: PendingCall, _ message: Message) {
        loop.uncork()
        // A call kept as its bytes is written at once when the loop may, numbered as it
        // leaves: each sending gets a serial of its own.
        if message.unreadWire != nil, let serial = loop.writeAlone(message) {
            return awaitReply(to: call, sentAs: serial)
        }
        // A message sent before keeps its serial, and libdbus would send it again under it: a
        // second call of the same message still awaited would take the first one's answer.
        let earlier = dbus_message_get_serial(message.raw)
        guard earlier == 0 || pending[earlier] == nil else {
            finish(call, .failure(.failed("this message is already awaiting its reply; make another for a second call")))
            return
        }
        var serial: UInt32 = 0
        number(message)
        guard dbus_connection_send(loop.raw, message.raw, &serial) != 0 else {
            finish(call, .failure(.noMemory("the message could not be queued")))
            return
        }
        awaitReply(to: call, sentAs: serial)
    }

    /// Takes the reply to the call sent as `serial` for `call` from now on.
    private func awaitReply(to call: PendingCall, sentAs serial: UInt32) {
        pending[serial] = call
        if case .following(let name, .owner) = call.completion { followed[name]?.asking = serial }
        if let deadline = call.deadline { earliestDeadline = min(earliestDeadline, deadline) }
    }

    /// Hands a message that awaits no reply to libdbus, or holds it while ``greeting`` says so.
    func transmit(_ message: Message) {
        if holds(message) {
            greeting?.held.append((message, nil))
        } else {
            number(message)
            dbus_connection_send(loop.raw, message.raw, nil)
        }
    }

    // MARK: Serials

    /// The serial given last. `Hello`, sent before the loop starts, is libdbus's 1; every
    /// message after it is numbered here, whether libdbus writes it or the loop does
    /// (``GatheredWrite``), so that serials rise in the order messages leave.
    private var lastSerial: UInt32 = 1

    /// The next serial (never 0).
    func nextSerial() -> UInt32 {
        lastSerial = lastSerial == .max ? 1 : lastSerial + 1
        return lastSerial
    }

    /// Gives `message` the next serial, unless it has one already (sent before).
    private func number(_ message: Message) {
        if dbus_message_get_serial(message.raw) == 0 { dbus_message_set_serial(message.raw, nextSerial()) }
    }

    // MARK: Hello not awaited

    /// Whether `message` must wait for the answer to a `Hello` sent without waiting: it carries
    /// descriptors, or something before it already waits (messages leave in order).
    ///
    /// dbus-daemon reads the authentication with a plain `recv`, which has no room for
    /// descriptors: any that come in the same read as `BEGIN` are dropped, and the daemon then
    /// disconnects the client for a message whose descriptors are missing. Once `Hello` is
    /// answered the daemon reads messages, descriptors and all.
    private func holds(_ message: Message) -> Bool {
        guard let greeting else { return false }
        return !greeting.held.isEmpty || message.carriesDescriptors
    }

    /// The bus answered `Hello`: what was held leaves, in order. If the answer is an error (the
    /// bus refuses the connection, and is about to close it), held calls fail with that error
    /// and held messages are dropped.
    private func greeted(_ answer: Message) {
        guard let held = greeting?.held else { return }
        greeting = nil
        if let error = answer.error {
            for case (_, let call?) in held { finish(call, .failure(error)) }
            return
        }
        for (message, call) in held {
            if let call {
                start(call, message)
            } else {
                number(message)
                dbus_connection_send(loop.raw, message.raw, nil)
            }
        }
    }

    /// Whether messages wait for the answer to `Hello` (see ``holds(_:)``).
    var holdsMessages: Bool { greeting?.held.isEmpty == false }

    /// Whether a `Hello` sent without waiting is still unanswered: what is sent meanwhile goes
    /// through ``transmit(_:)``, which decides what waits.
    var awaitsGreeting: Bool { greeting != nil }

    func cancelCall(id: UInt64) {
        if let index = greeting?.held.firstIndex(where: { $0.call?.id == id }) {
            let call = greeting!.held.remove(at: index).call!
            return finish(call, .failure(DBusError(name: DBusError.cancelledName, message: "the call was cancelled")))
        }
        // A search, as cancelling is rare: no second table to keep (nor its generic metadata
        // to make at the start of every short-lived process).
        guard let serial = pending.entries.first(where: { $0.value.id == id })?.serial,
              let call = pending.removeValue(for: serial) else { return }
        finish(call, .failure(DBusError(name: DBusError.cancelledName, message: "the call was cancelled")))
    }

    /// When the loop must wake up for a deadline at the latest; nil for never. Early at worst
    /// (the call it was for may have been answered): the loop then finds nothing due.
    var nextDeadline: UInt64? {
        var next = earliestDeadline
        if let held = greeting?.held {
            for entry in held { if let deadline = entry.call?.deadline { next = min(next, deadline) } }
        }
        return next == .max ? nil : next
    }

    func expireDeadlines(now: UInt64) {
        // Runs after every `poll`: the pending calls are walked only once a deadline is due.
        if earliestDeadline <= now {
            var next = UInt64.max
            for (serial, call) in pending.entries {
                guard let deadline = call.deadline else { continue }
                if deadline <= now {
                    pending[serial] = nil
                    finish(call, .failure(.timedOut()))
                } else {
                    next = min(next, deadline)
                }
            }
            earliestDeadline = next
        }
        while let index = greeting?.held.firstIndex(where: { ($0.call?.deadline ?? .max) <= now }) {
            finish(greeting!.held.remove(at: index).call!, .failure(.noReply("the bus did not answer Hello within the time allowed")))
        }
    }

    // MARK: Subscriptions and objects

    func subscribe(id: UInt64, rule: MatchRule, continuation: AsyncStream<Message>.Continuation) {
        guard !ended else { continuation.finish(); return }
        subscriptions[id] = (rule, rule.sender.map { followed[$0] != nil } ?? false, continuation)
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
    ///
    /// - Parameter reason: why, when known better than that the connection was lost.
    func connectionEnded(reason: String? = nil) {
        guard !ended else { return }
        ended = true
        endReason = reason
        let waiting = pending.entries.map { $0.value } + (greeting?.held ?? []).compactMap(\.call)
        pending.removeAll()
        greeting = nil
        for call in waiting { finish(call, .failure(.disconnected(reason ?? "the connection to the bus was lost"))) }
        for subscription in subscriptions.values { subscription.continuation.finish() }
        subscriptions.removeAll()
        objects.removeAll()
        for handler in disconnectHandlers { handler() }
        disconnectHandlers.removeAll()
    }

    // MARK: Who may answer

    /// Whether `reply` may answer `call`, sent with `serial`. The bus lets any client send a
    /// reply with any serial to anyone, and stamps the true sender on it: a reply from another
    /// client than the one called (say, one that watched the call go by and raced the callee's
    /// answer) is not the answer, and is passed over. A call to a unique name is answered by
    /// that name; one to a followed well-known name by its owner when the call left or since
    /// (it may have changed hands in between); one to any other well-known name by anyone, as
    /// its owner is not known here. The bus itself answers with an error for a callee that
    /// cannot (it left, it never was), so its errors are taken too.
    private func answers(_ call: PendingCall, sentAs serial: UInt32, with reply: Message) -> Bool {
        if case .anyone = call.replier { return true }
        let sender = reply.sender
        if sender == PendingCall.bus, reply.type == .error { return true }
        switch call.replier {
        case .anyone:
            return true
        case .connection(let name):
            return sender == name
        case .owner(let wellKnown, let then, let changesSeen):
            guard let name = followed[wellKnown] else { return true }
            // The bus answers a `GetNameOwner` before it passes on a call sent after it, so the
            // callee's answer to such a call comes after the bus's.
            if let asking = name.asking, serial > asking { return false }
            let ownedSince = name.recentOwners.contains { $0.change > changesSeen }
            // Nobody owned it, then or since: if that is certain, nobody answered for it.
            if then == nil, name.owner == nil, !ownedSince { return !name.certain }
            guard let sender else { return false }
            return sender == then || sender == name.owner
                || name.recentOwners.contains { $0.change > changesSeen && $0.owner == sender }
        }
    }

    /// Whether `signal` comes from the sender `rule` names. The bus applies a rule's sender to
    /// the signals it passes on for the rule, but a signal sent to this connection by name
    /// reaches it whatever its rules say: one claiming to be from a followed well-known name is
    /// taken only from its owner. (A unique name is checked by ``MatchRule/matches(_:)``.)
    ///
    /// While the owner is being asked for, the bus has passed on nothing for a rule added after
    /// the question (`followedFirst`: it handles the `AddMatch` after the `GetNameOwner`), so
    /// such a rule takes nothing yet; one added before may have genuine signals coming.
    private func comesFromRuleSender(_ rule: MatchRule, _ signal: Message, followedFirst: Bool) -> Bool {
        guard let wellKnown = rule.sender, let name = followed[wellKnown] else { return true }
        guard name.asking == nil else { return !followedFirst }
        guard let owner = name.owner else { return !name.certain }
        return dbus_message_has_sender(signal.raw, owner) != 0
    }

    /// Starts following the owner of the well-known name `name`: sends `match` (an `AddMatch`
    /// for its `NameOwnerChanged`) and `ask` (its `GetNameOwner`), and keeps the owner from
    /// their answers and the signals. Nothing waits: a call sent from now on is answered
    /// only by the owner the bus names, which it does before passing the call on.
    func follow(_ name: String, match: Message, ask: Message) {
        guard followed[name] == nil, !ended else { return }
        followed[name] = FollowedName()
        send(match, answering: .following(name, .ownerChanges))
        send(ask, answering: .following(name, .owner))
    }

    /// Sends a call of this connection's own, whose answer goes to `completion`.
    private func send(_ message: Message, answering completion: Completion) {
        let call = PendingCall(id: 0, completion: completion, deadline: nil, replier: .connection(PendingCall.bus))
        if holds(message) { greeting?.held.append((message, call)) } else { start(call, message) }
    }

    /// Hands the answer to a call to whoever waits for it.
    ///
    /// - Parameter serial: the call's serial, when the answer came from the bus.
    private func finish(_ call: PendingCall, _ result: CallOutcome, serial: UInt32? = nil) {
        switch call.completion {
        case .caller(let reply):
            reply.resume(returning: result)
        case .following(let name, .ownerChanges):
            // Owner changes not told here, a known owner would go stale: take any reply again.
            if case .failure = result { followed[name] = nil } else { followed[name]?.watched = true }
        case .following(let name, .owner):
            // The answer to this following's question, not to an earlier one's.
            guard let serial, let asking = followed[name]?.asking, asking == serial else { return }
            followed[name]!.asking = nil
            switch result {
            case .success(let answer):
                // As recent as anything the bus sent before it: what it says stands.
                let owner = answer.arguments().first?.stringValue
                followed[name]!.owner = owner
                followed[name]!.asked = true
                answered(name, by: owner, after: serial)
            case .failure(let error) where error.name == DBusError.nameHasNoOwnerName:
                followed[name]!.owner = nil
                followed[name]!.asked = true
                answered(name, by: nil, after: serial)
            case .failure:
                break
            }
        }
    }

    /// The bus named `owner` as the owner of `name` before passing on the calls sent after its
    /// question (`serial`): those calls left to that owner, and owners before it do not count
    /// as having come since.
    private func answered(_ name: String, by owner: String?, after serial: UInt32) {
        let changes = followed[name]?.changes ?? 0
        for (callSerial, call) in pending.entries where callSerial > serial {
            guard case .owner(name, nil, _) = call.replier else { continue }
            pending.update(callSerial) { $0.replier = .owner(of: name, then: owner, changesSeen: changes) }
        }
    }

    /// Keeps the owner of a followed name as the bus's `NameOwnerChanged` tells it, in the
    /// order messages arrive: before any reply of the new owner, which the bus sends later.
    private func noteOwnerChange(_ signal: Message) {
        guard dbus_message_is_signal(signal.raw, PendingCall.bus, "NameOwnerChanged") != 0, signal.sender == PendingCall.bus else { return }
        let arguments = signal.arguments()
        guard arguments.count == 3, let name = arguments[0].stringValue, var entry = followed[name],
              let owner = arguments[2].stringValue else { return }
        entry.changes += 1
        entry.owner = owner.isEmpty ? nil : owner
        if !owner.isEmpty {
            entry.recentOwners.append((entry.changes, owner))
            if entry.recentOwners.count > 8 { entry.recentOwners.removeFirst() }
        }
        followed[name] = entry
    }

    // MARK: Incoming messages

    func receive(_ message: Message) -> DBusHandlerResult {
        switch message.type {
        case .methodReturn, .error:
            if let greeting, message.replySerial == greeting.serial {
                greeted(message)
                return DBUS_HANDLER_RESULT_HANDLED
            }
            let serial = message.replySerial
            guard let call = pending[serial], answers(call, sentAs: serial, with: message) else { return DBUS_HANDLER_RESULT_NOT_YET_HANDLED }
            pending[serial] = nil
            finish(call, message.error.map { .failure($0) } ?? .success(message), serial: serial)
            return DBUS_HANDLER_RESULT_HANDLED
        case .signal:
            if !followed.isEmpty { noteOwnerChange(message) }
            for subscription in subscriptions.values
            where subscription.rule.matches(message) && comesFromRuleSender(subscription.rule, message, followedFirst: subscription.followedFirst) {
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
