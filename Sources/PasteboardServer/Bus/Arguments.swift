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
            let key = key.stringValue ?? ""
            guard seen.insert(key).inserted else { throw .invalidArgument("the option '\(key)' is given twice") }
            let value = wrapped.variantValue ?? wrapped
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
        return options
    }

    private static func count(_ key: String, _ value: DBusValue) throws(PasteboardError) -> UInt64 {
        guard let count = value.uint64Value else { throw wrongType(key, "t (uint64)", value) }
        return count
    }

    private static func flag(_ key: String, _ value: DBusValue) throws(PasteboardError) -> Bool {
        guard let flag = value.boolValue else { throw wrongType(key, "b (boolean)", value) }
        return flag
    }

    private static func wrongType(_ key: String, _ expected: String, _ value: DBusValue) -> PasteboardError {
        .invalidArgument("the option '\(key)' takes a \(expected), not a '\(value.signature)'")
    }
}
