import CDBus

/// Which signals a subscription receives, as a D-Bus match rule.
///
/// ```swift
/// let rule = MatchRule(path: "/org/pasteboardd/Pasteboard1",
///                      interface: "org.pasteboardd.Pasteboard1", member: "Changed")
/// rule.string  // "type='signal',path='/org/pasteboardd/Pasteboard1',interface=…"
/// ```
public struct MatchRule: Sendable, Hashable {
    public var sender: String?
    public var path: String?
    public var interface: String?
    public var member: String?
    /// Matches only signals whose first argument is this string.
    public var arg0: String?

    public init(sender: String? = nil, path: String? = nil, interface: String? = nil, member: String? = nil, arg0: String? = nil) {
        self.sender = sender
        self.path = path
        self.interface = interface
        self.member = member
        self.arg0 = arg0
    }

    /// The bus's `NameOwnerChanged` signals for the well-known name `name`: each time it gets
    /// an owner, changes hands or is let go.
    public static func ownerChanges(of name: String) -> MatchRule {
        MatchRule(sender: "org.freedesktop.DBus", path: "/org/freedesktop/DBus", interface: "org.freedesktop.DBus", member: "NameOwnerChanged", arg0: name)
    }

    /// The rule as the bus's `AddMatch` takes it.
    ///
    /// Appended piece by piece rather than `joined(separator:)`, whose first use costs a
    /// short-lived process like pbctl a search of every protocol conformance it holds.
    public var string: String {
        var rule = "type='signal'"
        if let sender { rule += ",sender='" + Self.escape(sender) + "'" }
        if let path { rule += ",path='" + Self.escape(path) + "'" }
        if let interface { rule += ",interface='" + Self.escape(interface) + "'" }
        if let member { rule += ",member='" + Self.escape(member) + "'" }
        if let arg0 { rule += ",arg0='" + Self.escape(arg0) + "'" }
        return rule
    }

    /// Whether a received signal fits this rule. A well-known `sender` cannot be checked
    /// locally (signals carry the unique name); the bus has already applied it.
    ///
    /// Every signal received is tested against every subscription, so the header fields are
    /// compared in place (libdbus's `dbus_message_has_*`) and only the first argument is read,
    /// rather than turned into Swift strings or the whole body decoded.
    func matches(_ message: Message) -> Bool {
        guard message.type == .signal else { return false }
        if let sender, sender.hasPrefix(":"), dbus_message_has_sender(message.raw, sender) == 0 { return false }
        if let path, dbus_message_has_path(message.raw, path) == 0 { return false }
        if let interface, dbus_message_has_interface(message.raw, interface) == 0 { return false }
        if let member, dbus_message_has_member(message.raw, member) == 0 { return false }
        if let arg0, !message.firstArgumentIs(arg0) { return false }
        return true
    }

    /// Match-rule values are quoted with `'`; a quote inside is written `'\''`.
    ///
    /// A loop rather than `replacing(_:with:)`: that generic algorithm's first use costs a
    /// short-lived process like pbctl a tenth of a millisecond of type metadata.
    private static func escape(_ value: String) -> String {
        guard value.utf8.contains(UInt8(ascii: "'")) else { return value }
        // By scalar: a quote followed by a combining mark is one Character that is not "'",
        // but the bus reads the quote's byte all the same.
        var escaped = String.UnicodeScalarView()
        for scalar in value.unicodeScalars {
            if scalar == "'" { escaped.append(contentsOf: "'\\''".unicodeScalars) } else { escaped.append(scalar) }
        }
        return String(escaped)
    }
}
