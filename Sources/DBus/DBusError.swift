/// A D-Bus error: a name such as `org.freedesktop.DBus.Error.ServiceUnknown` and a message.
///
/// Error replies from peers arrive as this type, and services reply with it. The name is what
/// programs match on; the message is for people.
public struct DBusError: Error, Sendable, Equatable, CustomStringConvertible {
    public let name: String
    public let message: String

    public init(name: String, message: String) {
        self.name = name
        self.message = message
    }

    public var description: String { "\(name): \(message)" }

    // MARK: Standard names

    public static func failed(_ message: String) -> DBusError {
        DBusError(name: "org.freedesktop.DBus.Error.Failed", message: message)
    }

    public static func invalidArgs(_ message: String) -> DBusError {
        DBusError(name: "org.freedesktop.DBus.Error.InvalidArgs", message: message)
    }

    public static func unknownMethod(_ message: String) -> DBusError {
        DBusError(name: "org.freedesktop.DBus.Error.UnknownMethod", message: message)
    }

    public static func unknownObject(_ message: String) -> DBusError {
        DBusError(name: "org.freedesktop.DBus.Error.UnknownObject", message: message)
    }

    public static func unknownInterface(_ message: String) -> DBusError {
        DBusError(name: "org.freedesktop.DBus.Error.UnknownInterface", message: message)
    }

    public static func unknownProperty(_ message: String) -> DBusError {
        DBusError(name: "org.freedesktop.DBus.Error.UnknownProperty", message: message)
    }

    public static func propertyReadOnly(_ message: String) -> DBusError {
        DBusError(name: "org.freedesktop.DBus.Error.PropertyReadOnly", message: message)
    }

    public static func noReply(_ message: String) -> DBusError {
        DBusError(name: noReplyName, message: message)
    }

    /// A call's own timeout passing here, which D-Bus names `NoReply` as it does the bus's
    /// answer for a peer that left without replying; ``isTimeout`` tells the two apart.
    static func timedOut() -> DBusError {
        DBusError(name: noReplyName, message: timeoutMessage)
    }

    static let timeoutMessage = "no reply within the time allowed"

    /// Whether this is a call's own timeout passing (``Connection/call(_:timeout:)``), rather
    /// than the bus answering for a peer that left without replying, also `NoReply`.
    public var isTimeout: Bool {
        name == Self.noReplyName && message == Self.timeoutMessage
    }

    public static func disconnected(_ message: String) -> DBusError {
        DBusError(name: "org.freedesktop.DBus.Error.Disconnected", message: message)
    }

    public static func noMemory(_ message: String) -> DBusError {
        DBusError(name: "org.freedesktop.DBus.Error.NoMemory", message: message)
    }

    public static let noReplyName = "org.freedesktop.DBus.Error.NoReply"
    public static let limitsExceededName = "org.freedesktop.DBus.Error.LimitsExceeded"
    public static let serviceUnknownName = "org.freedesktop.DBus.Error.ServiceUnknown"
    public static let nameHasNoOwnerName = "org.freedesktop.DBus.Error.NameHasNoOwner"
}
