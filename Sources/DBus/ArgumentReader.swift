import CDBus

/// Reads a message's arguments one at a time, straight into Swift values.
///
/// ``Message/arguments()`` decodes a whole body into a tree of ``DBusValue``s: an allocation
/// for most values, a string for every container's signature. A service's most frequent calls
/// can skip that tree and read what they expect, in order, through libdbus's iterator:
///
/// ```swift
/// let (name, count) = try call.readArguments { reader throws(DBusError) in
///     (try reader.string(), try reader.uint64())
/// }
/// ```
///
/// Every read checks the type it finds, so a body of another shape than expected is an
/// `InvalidArgs` error, never a wrong value. A reader points into its message: it exists only
/// inside ``Message/readArguments(_:)``, which keeps the message alive while it is read, and
/// cannot be copied out of it.
public struct ArgumentReader: ~Copyable {
    private var iter: DBusMessageIter
    /// No value is left at this level (an empty body, an empty array, the end of a struct).
    private var atEnd: Bool
    /// A reader on one element of an array holds that one value only.
    private let holdsOneValue: Bool

    fileprivate init(_ iter: DBusMessageIter, atEnd: Bool, holdsOneValue: Bool = false) {
        self.iter = iter
        self.atEnd = atEnd
        self.holdsOneValue = holdsOneValue
    }

    /// The type code of the value under the reader (0 at the end).
    private mutating func currentType() -> Int32 {
        atEnd ? TypeCode.invalid : dbus_message_iter_get_arg_type(&iter)
    }

    /// Checks that the value under the reader has type `code`.
    private mutating func expect(_ code: Int32) throws(DBusError) {
        let found = currentType()
        guard found == code else {
            let wanted = Character(Unicode.Scalar(UInt8(code)))
            throw .invalidArgs(found == TypeCode.invalid
                ? "expected a '\(wanted)' value, found the end of the arguments"
                : "expected a '\(wanted)' value, found a '\(Character(Unicode.Scalar(UInt8(truncatingIfNeeded: found))))'")
        }
    }

    /// Moves to the next value at this level.
    private mutating func advance() {
        atEnd = holdsOneValue || dbus_message_iter_next(&iter) == 0
    }

    /// Whether every value at this level has been read.
    public var isAtEnd: Bool { atEnd }

    /// Passes over the value under the reader without reading it: an array or a string is
    /// passed over in one step, whatever it holds, as its length leads it.
    public mutating func skip() throws(DBusError) {
        guard !atEnd else { throw .invalidArgs("expected a value, found the end of the arguments") }
        advance()
    }

    // MARK: Basic values

    public mutating func string() throws(DBusError) -> String {
        try expect(TypeCode.string)
        var characters: UnsafePointer<CChar>? = nil
        dbus_message_iter_get_basic(&iter, &characters)
        advance()
        return characters.map { String(cString: $0) } ?? ""
    }

    public mutating func boolean() throws(DBusError) -> Bool {
        try basic(TypeCode.boolean, dbus_bool_t(0)) != 0
    }

    public mutating func uint32() throws(DBusError) -> UInt32 {
        try basic(TypeCode.uint32, UInt32(0))
    }

    public mutating func uint64() throws(DBusError) -> UInt64 {
        try basic(TypeCode.uint64, UInt64(0))
    }

    /// A fixed-size value of type `code`, copied out by libdbus into a `Value` of its size.
    private mutating func basic<Value: FixedWidthInteger>(_ code: Int32, _ zero: Value) throws(DBusError) -> Value {
        try expect(code)
        var value = zero
        dbus_message_iter_get_basic(&iter, &value)
        advance()
        return value
    }

    /// An `ay`, copied once out of the message.
    public mutating func bytes() throws(DBusError) -> [UInt8] {
        try bytes(atMost: .max)!
    }

    /// An `ay` of at most `limit` bytes, copied once out of the message; nil for a longer one,
    /// which is passed over without a copy.
    public mutating func bytes(atMost limit: Int) throws(DBusError) -> [UInt8]? {
        try expect(TypeCode.array)
        guard dbus_message_iter_get_element_type(&iter) == TypeCode.byte else {
            throw .invalidArgs("expected an 'ay' value, found another array")
        }
        var sub = DBusMessageIter()
        dbus_message_iter_recurse(&iter, &sub)
        var pointer: UnsafeMutableRawPointer? = nil
        var count: Int32 = 0
        dbus_message_iter_get_fixed_array(&sub, &pointer, &count)
        advance()
        guard Int(count) <= limit else { return nil }
        guard let pointer, count > 0 else { return [] }
        return Array(UnsafeRawBufferPointer(start: pointer, count: Int(count)))
    }

    /// Any value, decoded as ``Message/arguments()`` would.
    public mutating func value() throws(DBusError) -> DBusValue {
        guard !atEnd else { throw .invalidArgs("expected a value, found the end of the arguments") }
        let value = Marshalling.read(&iter)
        advance()
        return value
    }

    // MARK: Containers

    /// Reads an array: `element` is called once per element with a reader on it, which holds
    /// that one value. For an array of dict entries (`a{…}`) that reader is inside the entry:
    /// the key, then the value.
    public mutating func forEach(_ element: (inout ArgumentReader) throws(DBusError) -> Void) throws(DBusError) {
        try expect(TypeCode.array)
        let entries = dbus_message_iter_get_element_type(&iter) == TypeCode.dictEntry
        var sub = DBusMessageIter()
        dbus_message_iter_recurse(&iter, &sub)
        advance()
        while dbus_message_iter_get_arg_type(&sub) != TypeCode.invalid {
            if entries {
                var entry = DBusMessageIter()
                dbus_message_iter_recurse(&sub, &entry)
                var reader = ArgumentReader(entry, atEnd: false)
                try element(&reader)
            } else {
                var reader = ArgumentReader(sub, atEnd: false, holdsOneValue: true)
                try element(&reader)
            }
            dbus_message_iter_next(&sub)
        }
    }

    /// Reads a variant: `inner` is called with a reader on the value inside it, and the
    /// variant's signature (`t`, `b`, …).
    public mutating func variant<Result>(_ inner: (inout ArgumentReader, String) throws(DBusError) -> Result) throws(DBusError) -> Result {
        try expect(TypeCode.variant)
        var sub = DBusMessageIter()
        dbus_message_iter_recurse(&iter, &sub)
        advance()
        let type = dbus_message_iter_get_arg_type(&sub)
        let signature = Marshalling.letterSignature(type) ?? Marshalling.signature(of: &sub)
        var reader = ArgumentReader(sub, atEnd: type == TypeCode.invalid, holdsOneValue: true)
        return try inner(&reader, signature)
    }
}

extension Message {
    /// Reads the arguments in order through `read` (see ``ArgumentReader``).
    ///
    /// - Throws: `InvalidArgs` when a value is not of the type `read` asks for, or what `read`
    ///   throws.
    public func readArguments<Result>(_ read: (inout ArgumentReader) throws(DBusError) -> Result) throws(DBusError) -> Result {
        try withExtendedLifetime(self) { () throws(DBusError) -> Result in
            var iter = DBusMessageIter()
            let empty = dbus_message_iter_init(raw, &iter) == 0
            var reader = ArgumentReader(iter, atEnd: empty)
            return try read(&reader)
        }
    }
}
