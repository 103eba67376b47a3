import CDBus

/// Reading and writing ``DBusValue``s through libdbus's message iterators.
///
/// libdbus's variadic `append_args`/`get_args` are not callable from Swift, and the iterator API
/// is what lets `ay` travel as one `memcpy` each way.
enum Marshalling {
    // MARK: Reading

    /// Every argument of `message`, in order.
    static func readArguments(of message: OpaquePointer) -> [DBusValue] {
        var iter = DBusMessageIter()
        guard dbus_message_iter_init(message, &iter) != 0 else { return [] }
        var values: [DBusValue] = []
        repeat {
            values.append(read(&iter))
        } while dbus_message_iter_next(&iter) != 0
        return values
    }

    static func read(_ iter: inout DBusMessageIter) -> DBusValue {
        let type = dbus_message_iter_get_arg_type(&iter)
        switch type {
        case TypeCode.byte:
            var value: UInt8 = 0
            dbus_message_iter_get_basic(&iter, &value)
            return .byte(value)
        case TypeCode.boolean:
            var value: dbus_bool_t = 0
            dbus_message_iter_get_basic(&iter, &value)
            return .boolean(value != 0)
        case TypeCode.int16:
            var value: Int16 = 0
            dbus_message_iter_get_basic(&iter, &value)
            return .int16(value)
        case TypeCode.uint16:
            var value: UInt16 = 0
            dbus_message_iter_get_basic(&iter, &value)
            return .uint16(value)
        case TypeCode.int32:
            var value: Int32 = 0
            dbus_message_iter_get_basic(&iter, &value)
            return .int32(value)
        case TypeCode.uint32:
            var value: UInt32 = 0
            dbus_message_iter_get_basic(&iter, &value)
            return .uint32(value)
        case TypeCode.int64:
            var value: Int64 = 0
            dbus_message_iter_get_basic(&iter, &value)
            return .int64(value)
        case TypeCode.uint64:
            var value: UInt64 = 0
            dbus_message_iter_get_basic(&iter, &value)
            return .uint64(value)
        case TypeCode.double:
            var value: Double = 0
            dbus_message_iter_get_basic(&iter, &value)
            return .double(value)
        case TypeCode.string, TypeCode.objectPath, TypeCode.signature:
            var pointer: UnsafePointer<CChar>? = nil
            dbus_message_iter_get_basic(&iter, &pointer)
            let text = pointer.map { String(cString: $0) } ?? ""
            if type == TypeCode.string { return .string(text) }
            if type == TypeCode.objectPath { return .objectPath(text) }
            return .signature(text)
        case TypeCode.unixFD:
            // libdbus hands out a new duplicate on every read; the value owns it.
            var fd: Int32 = -1
            dbus_message_iter_get_basic(&iter, &fd)
            return .unixFD(UnixFileDescriptor(owning: fd))
        case TypeCode.array:
            return readArray(&iter)
        case TypeCode.variant:
            var sub = DBusMessageIter()
            dbus_message_iter_recurse(&iter, &sub)
            return .variant(read(&sub))
        case TypeCode.struct:
            var sub = DBusMessageIter()
            dbus_message_iter_recurse(&iter, &sub)
            var fields: [DBusValue] = []
            if dbus_message_iter_get_arg_type(&sub) != TypeCode.invalid {
                repeat { fields.append(read(&sub)) } while dbus_message_iter_next(&sub) != 0
            }
            return .structure(fields)
        case TypeCode.dictEntry:
            var sub = DBusMessageIter()
            dbus_message_iter_recurse(&iter, &sub)
            let key = read(&sub)
            dbus_message_iter_next(&sub)
            let value = read(&sub)
            return .dictEntry(key, value)
        default:
            // libdbus validates every incoming message, so no other code can appear.
            return .structure([])
        }
    }

    private static func readArray(_ iter: inout DBusMessageIter) -> DBusValue {
        let elementType = dbus_message_iter_get_element_type(&iter)
        var sub = DBusMessageIter()
        dbus_message_iter_recurse(&iter, &sub)
        if elementType == TypeCode.byte {
            var pointer: UnsafeMutableRawPointer? = nil
            var count: Int32 = 0
            dbus_message_iter_get_fixed_array(&sub, &pointer, &count)
            guard let pointer, count > 0 else { return .bytes([]) }
            return .bytes(Array(UnsafeRawBufferPointer(start: pointer, count: Int(count))))
        }
        let element = elementSignature(of: &iter, elementType: elementType)
        var elements: [DBusValue] = []
        while dbus_message_iter_get_arg_type(&sub) != TypeCode.invalid {
            elements.append(read(&sub))
            dbus_message_iter_next(&sub)
        }
        return .array(element: element, elements)
    }

    /// The signature of the array's elements.
    private static func elementSignature(of iter: inout DBusMessageIter, elementType: Int32) -> String {
        letterSignature(elementType) ?? String(signature(of: &iter).dropFirst())
    }

    /// The signature of a type of one letter (any but an array, struct or dict entry), which is
    /// that letter; nil for those containers, whose signature only libdbus can give.
    static func letterSignature(_ type: Int32) -> String? {
        guard type != TypeCode.array, type != TypeCode.struct, type != TypeCode.dictEntry,
              let scalar = Unicode.Scalar(UInt32(type)) else { return nil }
        return String(Character(scalar))
    }

    /// The signature of the value under `iter`, as libdbus gives it (allocating it as a C
    /// string, so asked for containers only).
    static func signature(of iter: inout DBusMessageIter) -> String {
        guard let raw = dbus_message_iter_get_signature(&iter) else { return "" }
        defer { dbus_free(raw) }
        return String(cString: raw)
    }

    // MARK: Writing

    /// Appends `values` to `message`. Fails on values D-Bus cannot carry (a string with NUL,
    /// an invalid object path or signature, an array over 64 MiB), and on more descriptors
    /// than ``Message/maximumDescriptors``.
    static func append(_ values: [DBusValue], to message: OpaquePointer) throws(DBusError) {
        var iter = DBusMessageIter()
        dbus_message_iter_init_append(message, &iter)
        var descriptors = 0
        for value in values {
            try append(value, to: &iter, descriptors: &descriptors)
        }
    }


    /// The largest array D-Bus carries; libdbus aborts the process on a larger one.
    static let maximumArrayLength = 64 * 1024 * 1024

    private static func append(_ value: DBusValue, to iter: inout DBusMessageIter, descriptors: inout Int) throws(DBusError) {
        var ok: dbus_bool_t = 1
        switch value {
        case .byte(var v): ok = dbus_message_iter_append_basic(&iter, TypeCode.byte, &v)
        case .boolean(let b):
            var v: dbus_bool_t = b ? 1 : 0
            ok = dbus_message_iter_append_basic(&iter, TypeCode.boolean, &v)
        case .int16(var v): ok = dbus_message_iter_append_basic(&iter, TypeCode.int16, &v)
        case .uint16(var v): ok = dbus_message_iter_append_basic(&iter, TypeCode.uint16, &v)
        case .int32(var v): ok = dbus_message_iter_append_basic(&iter, TypeCode.int32, &v)
        case .uint32(var v): ok = dbus_message_iter_append_basic(&iter, TypeCode.uint32, &v)
        case .int64(var v): ok = dbus_message_iter_append_basic(&iter, TypeCode.int64, &v)
        case .uint64(var v): ok = dbus_message_iter_append_basic(&iter, TypeCode.uint64, &v)
        case .double(var v): ok = dbus_message_iter_append_basic(&iter, TypeCode.double, &v)
        case .string(let s):
            guard !s.utf8.contains(0) else { throw .invalidArgs("a D-Bus string cannot contain NUL") }
            ok = appendString(s, type: TypeCode.string, to: &iter)
        case .objectPath(let s):
            guard ObjectPath.isValid(s) else { throw .invalidArgs("'\(s)' is not a valid object path") }
            ok = appendString(s, type: TypeCode.objectPath, to: &iter)
        case .signature(let s):
            guard Signature.isValid(s) else { throw .invalidArgs("'\(s)' is not a valid signature") }
            ok = appendString(s, type: TypeCode.signature, to: &iter)
        case .unixFD(let fd):
            descriptors += 1
            guard descriptors <= Message.maximumDescriptors else {
                throw DBusError(name: DBusError.limitsExceededName, message: "a D-Bus message carries at most \(Message.maximumDescriptors) file descriptors (the bus disconnects a sender of more)")
            }
            var raw = fd.rawValue
            ok = dbus_message_iter_append_basic(&iter, TypeCode.unixFD, &raw)
        case .bytes(let bytes):
            guard bytes.count <= maximumArrayLength else {
                throw .invalidArgs("a D-Bus array holds at most 64 MiB; pass larger data as a file descriptor")
            }
            var sub = DBusMessageIter()
            guard dbus_message_iter_open_container(&iter, TypeCode.array, "y", &sub) != 0 else { throw .noMemory("out of memory") }
            ok = bytes.withUnsafeBufferPointer { buffer in
                var base = UnsafeRawPointer(buffer.baseAddress ?? UnsafePointer(bitPattern: 1)!)
                return dbus_message_iter_append_fixed_array(&sub, TypeCode.byte, &base, Int32(buffer.count))
            }
            if dbus_message_iter_close_container(&iter, &sub) == 0 { ok = 0 }
        case .array(let element, let elements):
            guard Signature.isValidArrayElement(element) else {
                throw .invalidArgs("'\(element)' is not a single complete type")
            }
            var sub = DBusMessageIter()
            guard dbus_message_iter_open_container(&iter, TypeCode.array, element, &sub) != 0 else { throw .noMemory("out of memory") }
            for item in elements {
                guard item.hasSignature(element) else {
                    dbus_message_iter_abandon_container(&iter, &sub)
                    throw .invalidArgs("array of '\(element)' holds a '\(item.signature)'")
                }
                do { try append(item, to: &sub, descriptors: &descriptors) } catch {
                    dbus_message_iter_abandon_container(&iter, &sub)
                    throw error
                }
            }
            ok = dbus_message_iter_close_container(&iter, &sub)
        case .dictEntry(let key, let entryValue):
            var sub = DBusMessageIter()
            guard dbus_message_iter_open_container(&iter, TypeCode.dictEntry, nil, &sub) != 0 else { throw .noMemory("out of memory") }
            do {
                try append(key, to: &sub, descriptors: &descriptors)
                try append(entryValue, to: &sub, descriptors: &descriptors)
            } catch {
                dbus_message_iter_abandon_container(&iter, &sub)
                throw error
            }
            ok = dbus_message_iter_close_container(&iter, &sub)
        case .structure(let fields):
            guard !fields.isEmpty else { throw .invalidArgs("a D-Bus struct needs at least one field") }
            var sub = DBusMessageIter()
            guard dbus_message_iter_open_container(&iter, TypeCode.struct, nil, &sub) != 0 else { throw .noMemory("out of memory") }
            for field in fields {
                do { try append(field, to: &sub, descriptors: &descriptors) } catch {
                    dbus_message_iter_abandon_container(&iter, &sub)
                    throw error
                }
            }
            ok = dbus_message_iter_close_container(&iter, &sub)
        case .variant(let inner):
            var sub = DBusMessageIter()
            guard dbus_message_iter_open_container(&iter, TypeCode.variant, inner.signature, &sub) != 0 else { throw .noMemory("out of memory") }
            do { try append(inner, to: &sub, descriptors: &descriptors) } catch {
                dbus_message_iter_abandon_container(&iter, &sub)
                throw error
            }
            ok = dbus_message_iter_close_container(&iter, &sub)
        }
        guard ok != 0 else { throw .invalidArgs("libdbus refused a '\(value.signature)' value") }
    }

    private static func appendString(_ s: String, type: Int32, to iter: inout DBusMessageIter) -> dbus_bool_t {
        s.withCString { cString in
            var pointer: UnsafePointer<CChar>? = cString
            return dbus_message_iter_append_basic(&iter, type, &pointer)
        }
    }
}
