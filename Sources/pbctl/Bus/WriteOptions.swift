import DBus

/// The write options `pbctl copy` can set (the contract's `a{sv}`); only those set are sent.
struct WriteOptions: Sendable {
    /// A secret: never on disk, never in history, no types in `Changed`.
    var concealed = false
    /// Not in history and not on disk.
    var transient = false
    /// Clear the contents after this many milliseconds.
    var expiresInMilliseconds: UInt64?

    var encoded: DBusValue {
        var entries: [(DBusValue, DBusValue)] = []
        if let expiresInMilliseconds { entries.append((.string("expires-in-ms"), .variant(.uint64(expiresInMilliseconds)))) }
        if concealed { entries.append((.string("concealed"), .variant(.boolean(true)))) }
        if transient { entries.append((.string("transient"), .variant(.boolean(true)))) }
        return .dictionary(key: "s", value: "v", entries)
    }
}
