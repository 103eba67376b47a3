import CDBus

/// An object a ``Connection`` exports at a path.
///
/// The connection answers `org.freedesktop.DBus.Introspectable` from ``introspectionXML`` and
/// `org.freedesktop.DBus.Properties` from ``properties(of:)``; libdbus answers
/// `org.freedesktop.DBus.Peer` itself (the connection answers those of its calls that name no
/// interface).
/// Every other call goes to ``handle(_:)``.
public protocol DBusObject: AnyObject, Sendable {
    /// The complete introspection document for this object, returned by `Introspect`.
    var introspectionXML: String { get }

    /// Handles a call to one of the object's own interfaces.
    ///
    /// Called on the connection's event-loop thread, so it must not block: decode, check and
    /// hand the work elsewhere, then answer through ``MethodCall/reply(_:followedBy:)`` or
    /// ``MethodCall/fail(_:)`` from any thread.
    func handle(_ call: MethodCall)

    /// Every property of `interface`, in a stable order, for `Get` and `GetAll`. The
    /// specification lets a caller give the empty name for any interface: an object whose
    /// properties are all on one interface answers it with those.
    ///
    /// - Throws: `UnknownInterface` for an interface the object does not have.
    func properties(of interface: String) async throws(DBusError) -> [(name: String, value: DBusValue)]
}

/// A method call received by an exported object, and the means to answer it.
///
/// The header's sender, member and signature are read from the message once, as the call
/// arrives; its path and interface when asked for (most objects only compare them: see
/// ``hasInterface(_:)``); the body only when asked for, as ``arguments`` or through
/// ``readArguments(_:)``. A class: a call is handed around (into answers, closures, queues)
/// more often than it is made, and each copy then costs one reference, not one per field.
public final class MethodCall: Sendable {
    public let message: Message
    public let sender: String
    public let member: String
    public let signature: String
    let loop: EventLoop

    init(message: Message, member: String, loop: EventLoop) {
        self.message = message
        sender = message.sender ?? ""
        self.member = member
        signature = message.signature
        self.loop = loop
        // libdbus turns a body of the other byte order into this machine's in place, the first
        // time an iterator is set on it: done here, on the bus thread, so that decoding it
        // later, on any thread, only reads it.
        var iter = DBusMessageIter()
        _ = dbus_message_iter_init(message.raw, &iter)
    }

    /// The object path the call was made on.
    public var path: String { message.path ?? "/" }

    /// The interface named by the call; nil when the caller named none.
    public var interface: String? { message.interface }

    /// Whether the call names `interface`; false for a call that names none.
    public func hasInterface(_ interface: String) -> Bool {
        dbus_message_has_interface(message.raw, interface) != 0
    }

    /// Whether the call names an interface at all.
    public var namesInterface: Bool { dbus_message_get_interface(message.raw) != nil }

    /// The body, decoded anew at each use: read it once. Every unix fd in it becomes a new
    /// descriptor the result owns.
    public var arguments: [DBusValue] { message.arguments() }

    /// Reads the body in order, straight into Swift values (see ``ArgumentReader``).
    public func readArguments<Result>(_ read: (inout ArgumentReader) throws(DBusError) -> Result) throws(DBusError) -> Result {
        try message.readArguments(read)
    }

    /// Sends the method return, then the messages `followUps` makes (signals the call caused).
    /// On the loop thread the reply is handed over before they are made: answering the loop's
    /// one call, it leaves at once, as the caller waits for it and not for them; among calls
    /// that came together, it is held with them and leaves in the same write
    /// (``GatheredWrite``). From another thread they are handed over together, in one wake-up.
    public func reply(_ values: [DBusValue], then followUps: () -> [Message]) {
        if loop.sendsAtOnce {
            loop.send(returnMessages(values))
            loop.send(followUps())
        } else {
            loop.send(returnMessages(values) + followUps())
        }
    }

    /// Sends the method return, then `followUps` (signals the call caused) in that order.
    public func reply(_ values: [DBusValue] = [], followedBy followUps: [Message] = []) {
        loop.send(returnMessages(values) + followUps)
    }

    /// The method return carrying `values` (an error reply if they cannot be encoded); none
    /// when the caller asked for no reply.
    private func returnMessages(_ values: [DBusValue]) -> [Message] {
        guard message.expectsReply else { return [] }
        do {
            return [try message.makeReturn(values)]
        } catch {
            return message.makeError(.failed("the reply could not be encoded: \(error.message)")).map { [$0] } ?? []
        }
    }

    /// Sends an error reply.
    public func fail(_ error: DBusError) {
        guard message.expectsReply, let reply = message.makeError(error) else { return }
        loop.send([reply])
    }
}
