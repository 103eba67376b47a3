import DBus
import PasteboardModel

/// Decoding of the interface's arguments into checked model values.
///
/// The signature has already been checked against ``InterfaceMethod/inSignature``, so the
/// shapes are right; what remains is the content: names, types, options.
enum Arguments {
    static func name(_ value: DBusValue) throws(PasteboardError) -> PasteboardName {
        try PasteboardName(validating: value.stringValue ?? "")
    }

    static func type(_ value: DBusValue) throws(PasteboardError) -> PasteboardType {
        try PasteboardType(validating: value.stringValue ?? "")
    }

    static func types(_ value: DBusValue) throws(PasteboardError) -> [PasteboardType] {
        var result: [PasteboardType] = []
        for element in value.stringArrayValue ?? [] {
            result.append(try PasteboardType(validating: element))
        }
        return result
    }

    /// The `a{sv}` write options.
    ///
    /// - Throws: `InvalidArgument` for an unknown key, a repeated key, or a value of the wrong type.
    static func writeOptions(_ value: DBusValue) throws(PasteboardError) -> WriteOptions {
        var options = WriteOptions()
        var seen = Set<String>()
        for (key, wrapped) in value.dictionaryEntries ?? [] {
            let value = wrapped.variantValue ?? wrapped
            try set(key.stringValue ?? "", OptionValue(value), in: &options, seen: &seen)
        }
        return options
    }

    /// The `a{sv}` write options, read from the message (see ``InlineWrite``).
    static func writeOptions(_ reader: inout ArgumentReader) throws(PasteboardError) -> WriteOptions {
        var options = WriteOptions()
        var seen = Set<String>()
        do throws(DBusError) {
            try reader.forEach { entry throws(DBusError) in
                let key = try entry.string()
                let value = try entry.variant { inner, signature throws(DBusError) -> OptionValue in
                    switch signature {
                    case "t": .count(try inner.uint64())
                    case "b": .flag(try inner.boolean())
                    default: .other(signature)
                    }
                }
                try DBusError.carrying { () throws(PasteboardError) in try set(key, value, in: &options, seen: &seen) }
            }
        } catch {
            throw PasteboardError(error)
        }
        return options
    }

    /// An option's value, as far as the options go: a number, a flag, or another type.
    enum OptionValue {
        case count(UInt64)
        case flag(Bool)
        /// A value of another type, by its signature.
        case other(String)

        init(_ value: DBusValue) {
            if let count = value.uint64Value { self = .count(count) } else if let flag = value.boolValue { self = .flag(flag) } else { self = .other(value.signature) }
        }
    }

    /// Sets the option `key` to `value`.
    ///
    /// - Throws: `InvalidArgument` for an unknown key, a repeated key, or a value of the wrong type.
    private static func set(_ key: String, _ value: OptionValue, in options: inout WriteOptions, seen: inout Set<String>) throws(PasteboardError) {
        guard seen.insert(key).inserted else { throw .invalidArgument("the option '\(key)' is given twice") }
        switch key {
        case "if-change-count": options.ifChangeCount = try count(key, value)
        case "expires-in-ms":
            let milliseconds = try count(key, value)
            guard milliseconds > 0 else { throw .invalidArgument("expires-in-ms must be above 0") }
            options.expiresInMilliseconds = milliseconds
        case "append": options.append = try flag(key, value)
        case "concealed": options.concealed = try flag(key, value)
        case "transient": options.transient = try flag(key, value)
        case "owner-only": options.ownerOnly = try flag(key, value)
        default:
            throw .invalidArgument("unknown option '\(key)'; the options are if-change-count (t), expires-in-ms (t), concealed (b), transient (b), owner-only (b) and append (b)")
        }
    }

    private static func count(_ key: String, _ value: OptionValue) throws(PasteboardError) -> UInt64 {
        guard case .count(let count) = value else { throw wrongType(key, "t (uint64)", value) }
        return count
    }

    private static func flag(_ key: String, _ value: OptionValue) throws(PasteboardError) -> Bool {
        guard case .flag(let flag) = value else { throw wrongType(key, "b (boolean)", value) }
        return flag
    }

    private static func wrongType(_ key: String, _ expected: String, _ value: OptionValue) -> PasteboardError {
        let signature = switch value {
        case .count: "t"
        case .flag: "b"
        case .other(let signature): signature
        }
        return .invalidArgument("the option '\(key)' takes a \(expected), not a '\(signature)'")
    }
}
