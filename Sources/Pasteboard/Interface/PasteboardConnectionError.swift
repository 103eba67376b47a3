/// The pasteboard server could not be reached: no bus, no server on it, or the connection was
/// lost. Contract errors (the server's answers) are `PasteboardError`s instead.
public struct PasteboardConnectionError: Error, Sendable, CustomStringConvertible {
    /// The bus address that was tried, or nil when none could be found.
    public let address: String?
    /// What went wrong, for people.
    public let reason: String
    /// The underlying D-Bus error name, such as `org.freedesktop.DBus.Error.ServiceUnknown`.
    public let dbusErrorName: String

    /// An error for the bus at `address`, with the reason for people and the D-Bus error name.
    public init(address: String?, reason: String, dbusErrorName: String) {
        self.address = address
        self.reason = reason
        self.dbusErrorName = dbusErrorName
    }

    /// The address tried and the reason, as one sentence for people.
    public var description: String {
        "cannot reach pasteboardd on the bus \(address ?? "(none: DBUS_SESSION_BUS_ADDRESS is not set)"): \(reason)"
    }
}
