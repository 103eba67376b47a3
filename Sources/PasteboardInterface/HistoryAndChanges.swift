import DBus

/// One entry of a `History` reply: a generation of a pasteboard's contents.
public struct PasteboardHistoryEntry: Sendable, Equatable {
    /// The change count of that generation.
    public var count: UInt64
    /// Unix time of the write, in milliseconds.
    public var time: Int64
    /// Its types, as `Types` listed them.
    public var types: [String]

    public init(count: UInt64, time: Int64, types: [String]) {
        self.count = count
        self.time = time
        self.types = types
    }

    /// The entries of a `History` reply (`a(txas)`), newest first.
    public static func decode(_ reply: [DBusValue]) -> [PasteboardHistoryEntry] {
        (reply.first?.arrayValue ?? []).compactMap { entry in
            guard let fields = entry.structureFields, fields.count == 3 else { return nil }
            return PasteboardHistoryEntry(count: fields[0].uint64Value ?? 0, time: fields[1].int64Value ?? 0, types: fields[2].stringArrayValue ?? [])
        }
    }
}

/// One `Changed` signal.
public struct PasteboardChangedSignal: Sendable, Equatable {
    /// The pasteboard that changed.
    public var name: String
    /// Its change count after the change.
    public var count: UInt64
    /// Its types after the change (none when cleared, removed or concealed).
    public var types: [String]

    /// A signal's arguments.
    public init(name: String, count: UInt64, types: [String]) {
        self.name = name
        self.count = count
        self.types = types
    }

    /// The arguments of `signal` (`s name, t count, as types`); nil for a signal that does not
    /// carry them.
    public init?(_ signal: Message) {
        let arguments = signal.arguments()
        guard arguments.count == 3, let name = arguments[0].stringValue, let count = arguments[1].uint64Value else { return nil }
        self.init(name: name, count: count, types: arguments[2].stringArrayValue ?? [])
    }
}
