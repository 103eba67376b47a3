/// An object a ``Connection`` exports at a path.
///
/// The connection answers `org.freedesktop.DBus.Introspectable` from ``introspectionXML`` and
/// `org.freedesktop.DBus.Properties` from ``properties(of:)``; libdbus answers
/// `org.freedesktop.DBus.Peer` itself. Every other call goes to ``handle(_:)``.
public protocol DBusObject: AnyObject, Sendable {
    /// The complete introspection document for this object, returned by `Introspect`.
    var introspectionXML: String { get }

    /// Handles a call to one of the object's own interfaces.
    ///
    /// Called on the connection's event-loop thread, so it must not block: decode, check and
    /// hand the work elsewhere, then answer through ``MethodCall/reply(_:followedBy:)`` or
    /// ``MethodCall/fail(_:)`` from any thread.
    func handle(_ call: MethodCall)

    /// Every property of `interface`, in a stable order, for `Get` and `GetAll`.
    ///
    /// - Throws: `UnknownInterface` for an interface the object does not have.
    func properties(of interface: String) async throws(DBusError) -> [(name: String, value: DBusValue)]
}

/// A method call received by an exported object, and the means to answer it.
public struct MethodCall: Sendable {
    public let message: Message
    /// The decoded body; unix fds in it are owned by these values.
    public let arguments: [DBusValue]
    let loop: EventLoop

    public var sender: String { message.sender ?? "" }
    public var path: String { message.path ?? "" }
    public var interface: String? { message.interface }
    public var member: String { message.member ?? "" }
    public var signature: String { message.signature }

    /// Sends the method return, then the messages `followUps` makes (signals the call caused).
    /// On the loop thread the reply leaves before they are made; elsewhere they are made first
    /// and handed to the loop together, in one wake-up.
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
