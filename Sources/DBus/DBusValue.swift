/// One D-Bus value of any type, as it travels in a message body.
///
/// Values are decoded from and encoded to messages by walking the wire format, so a value
/// always knows its own ``signature``. Containers carry the signature of their elements so
/// that empty arrays still marshal with the right type.
///
/// ```swift
/// let options: DBusValue = .dictionary(key: "s", value: "v", [
///     (.string("append"), .variant(.boolean(true))),
/// ])
/// options.signature  // "a{sv}"
/// ```
public indirect enum DBusValue: Sendable {
    case byte(UInt8)
    case boolean(Bool)
    case int16(Int16)
    case uint16(UInt16)
    case int32(Int32)
    case uint32(UInt32)
    case int64(Int64)
    case uint64(UInt64)
    case double(Double)
    case string(String)
    case objectPath(String)
    case signature(String)
    case unixFD(UnixFileDescriptor)
    /// An `ay`, kept as bytes rather than as an array of `.byte` values (one copy, no boxing).
    case bytes([UInt8])
    /// An array whose elements all have the signature `element`.
    case array(element: String, [DBusValue])
    /// One `{key value}` entry of a dictionary (an array of dict entries).
    case dictEntry(DBusValue, DBusValue)
    case structure([DBusValue])
    case variant(DBusValue)

    /// A dictionary `a{KV}` from its key and value signatures and its entries, in order.
    public static func dictionary(key: String, value: String, _ entries: [(DBusValue, DBusValue)]) -> DBusValue {
        .array(element: "{\(key)\(value)}", entries.map { .dictEntry($0.0, $0.1) })
    }

    /// An `as` from strings.
    public static func strings(_ values: [String]) -> DBusValue {
        .array(element: "s", values.map { .string($0) })
    }

    /// The value's D-Bus type signature.
    public var signature: String {
        switch self {
        case .byte: "y"
        case .boolean: "b"
        case .int16: "n"
        case .uint16: "q"
        case .int32: "i"
        case .uint32: "u"
        case .int64: "x"
        case .uint64: "t"
        case .double: "d"
        case .string: "s"
        case .objectPath: "o"
        case .signature: "g"
        case .unixFD: "h"
        case .bytes: "ay"
        case .array(let element, _): "a" + element
        case .dictEntry(let key, let value): "{" + key.signature + value.signature + "}"
        case .structure(let fields): "(" + fields.map(\.signature).joined() + ")"
        case .variant: "v"
        }
    }

    /// Whether ``signature`` is `expected`, found without building the signature: marshalling
    /// asks this of every element of every array.
    public func hasSignature(_ expected: String) -> Bool {
        var rest = Substring(expected).utf8
        return consumeSignature(&rest) && rest.isEmpty
    }

    /// Takes the value's signature off the front of `rest`; false when it is not there.
    private func consumeSignature(_ rest: inout Substring.UTF8View) -> Bool {
        func take(_ code: Unicode.Scalar) -> Bool {
            guard rest.first == UInt8(ascii: code) else { return false }
            rest = rest.dropFirst()
            return true
        }
        switch self {
        case .byte: return take("y")
        case .boolean: return take("b")
        case .int16: return take("n")
        case .uint16: return take("q")
        case .int32: return take("i")
        case .uint32: return take("u")
        case .int64: return take("x")
        case .uint64: return take("t")
        case .double: return take("d")
        case .string: return take("s")
        case .objectPath: return take("o")
        case .signature: return take("g")
        case .unixFD: return take("h")
        case .bytes: return take("a") && take("y")
        case .array(let element, _):
            guard take("a"), rest.starts(with: element.utf8) else { return false }
            rest = rest.dropFirst(element.utf8.count)
            return true
        case .dictEntry(let key, let value):
            return take("{") && key.consumeSignature(&rest) && value.consumeSignature(&rest) && take("}")
        case .structure(let fields):
            return take("(") && fields.allSatisfy { $0.consumeSignature(&rest) } && take(")")
        case .variant: return take("v")
        }
    }
}

// MARK: - Typed access

extension DBusValue {
    public var stringValue: String? {
        if case .string(let value) = self { return value }
        return nil
    }

    public var boolValue: Bool? {
        if case .boolean(let value) = self { return value }
        return nil
    }

    public var uint32Value: UInt32? {
        if case .uint32(let value) = self { return value }
        return nil
    }

    public var uint64Value: UInt64? {
        if case .uint64(let value) = self { return value }
        return nil
    }

    public var int64Value: Int64? {
        if case .int64(let value) = self { return value }
        return nil
    }

    public var bytesValue: [UInt8]? {
        switch self {
        case .bytes(let value): return value
        case .array("y", let elements):
            return elements.compactMap { if case .byte(let b) = $0 { b } else { nil } }
        default: return nil
        }
    }

    public var fileDescriptorValue: UnixFileDescriptor? {
        if case .unixFD(let value) = self { return value }
        return nil
    }

    /// The elements of an array, or nil for any other value.
    public var arrayValue: [DBusValue]? {
        switch self {
        case .array(_, let elements): return elements
        case .bytes(let bytes): return bytes.map { .byte($0) }
        default: return nil
        }
    }

    /// The entries of a dictionary, in wire order, or nil for any other value.
    public var dictionaryEntries: [(key: DBusValue, value: DBusValue)]? {
        guard case .array(_, let elements) = self else { return nil }
        var entries: [(key: DBusValue, value: DBusValue)] = []
        entries.reserveCapacity(elements.count)
        for element in elements {
            guard case .dictEntry(let key, let value) = element else { return nil }
            entries.append((key, value))
        }
        return entries
    }

    /// The strings of an `as`, or nil for any other value.
    public var stringArrayValue: [String]? {
        guard case .array("s", let elements) = self else { return nil }
        return elements.compactMap(\.stringValue)
    }

    /// The fields of a struct, or nil for any other value.
    public var structureFields: [DBusValue]? {
        if case .structure(let fields) = self { return fields }
        return nil
    }

    /// The content of a variant, or nil for any other value.
    public var variantValue: DBusValue? {
        if case .variant(let inner) = self { return inner }
        return nil
    }
}

// MARK: - Equality

extension DBusValue: Equatable {
    /// Values are equal when their types and contents are; descriptors compare by identity.
    public static func == (lhs: DBusValue, rhs: DBusValue) -> Bool {
        switch (lhs, rhs) {
        case (.byte(let a), .byte(let b)): a == b
        case (.boolean(let a), .boolean(let b)): a == b
        case (.int16(let a), .int16(let b)): a == b
        case (.uint16(let a), .uint16(let b)): a == b
        case (.int32(let a), .int32(let b)): a == b
        case (.uint32(let a), .uint32(let b)): a == b
        case (.int64(let a), .int64(let b)): a == b
        case (.uint64(let a), .uint64(let b)): a == b
        case (.double(let a), .double(let b)): a == b || (a.isNaN && b.isNaN)
        case (.string(let a), .string(let b)): a == b
        case (.objectPath(let a), .objectPath(let b)): a == b
        case (.signature(let a), .signature(let b)): a == b
        case (.unixFD(let a), .unixFD(let b)): a === b
        case (.bytes(let a), .bytes(let b)): a == b
        case (.array(let ea, let a), .array(let eb, let b)): ea == eb && a == b
        case (.dictEntry(let ka, let va), .dictEntry(let kb, let vb)): ka == kb && va == vb
        case (.structure(let a), .structure(let b)): a == b
        case (.variant(let a), .variant(let b)): a == b
        default: false
        }
    }
}
