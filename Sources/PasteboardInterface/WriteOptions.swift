import DBus

/// The write options of the contract (`a{sv}`); only those set are sent.
public struct PasteboardWriteOptions: Sendable, Equatable {
    /// Write only if the change count equals this (0: only if never written); else `Conflict`.
    public var ifChangeCount: UInt64?
    /// Add the items to the current contents instead of replacing them.
    public var append: Bool
    /// Clear the contents after this many milliseconds.
    public var expiresInMilliseconds: UInt64?
    /// A secret: never on disk, never in history, no types in `Changed`.
    public var concealed: Bool
    /// Not in history and not on disk.
    public var transient: Bool
    /// Only connections of this process may read the data.
    public var ownerOnly: Bool

    /// Options with only those given set; the defaults send nothing.
    public init(
        ifChangeCount: UInt64? = nil, append: Bool = false, expiresInMilliseconds: UInt64? = nil,
        concealed: Bool = false, transient: Bool = false, ownerOnly: Bool = false
    ) {
        self.ifChangeCount = ifChangeCount
        self.append = append
        self.expiresInMilliseconds = expiresInMilliseconds
        self.concealed = concealed
        self.transient = transient
        self.ownerOnly = ownerOnly
    }

    /// The `a{sv}` argument.
    public var encoded: DBusValue {
        var entries: [(DBusValue, DBusValue)] = []
        if let ifChangeCount { entries.append((.string("if-change-count"), .variant(.uint64(ifChangeCount)))) }
        if append { entries.append((.string("append"), .variant(.boolean(true)))) }
        if let expiresInMilliseconds { entries.append((.string("expires-in-ms"), .variant(.uint64(expiresInMilliseconds)))) }
        if concealed { entries.append((.string("concealed"), .variant(.boolean(true)))) }
        if transient { entries.append((.string("transient"), .variant(.boolean(true)))) }
        if ownerOnly { entries.append((.string("owner-only"), .variant(.boolean(true)))) }
        return .dictionary(key: "s", value: "v", entries)
    }
}
