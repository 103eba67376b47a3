#if canImport(Glibc)
import Glibc
#endif

/// Writes ``DBusValue``s in the D-Bus wire format, little-endian, into a byte buffer whose
/// start is aligned to 8 (so that offsets in it align as they will in the message).
///
/// It refuses (returns false) what it does not write itself: descriptors, which travel beside
/// the bytes, and values the wire format cannot hold. Strings are not checked for valid object
/// paths or signatures here: libdbus validates the whole message when it reads it back in
/// (``WireMarshalling``).
struct WireWriter {
    private(set) var bytes: [UInt8] = []
    /// The most bytes this writer holds: past it, ``put(_:)`` refuses before copying a large
    /// string or byte array, and stops an array's elements, rather than copy what will not be
    /// used.
    let limit: Int

    init(limit: Int = .max) {
        self.limit = limit
        bytes.reserveCapacity(min(limit, 256))
    }

    /// Pads with zero bytes to a multiple of `alignment`.
    mutating func align(_ alignment: Int) {
        let padding = (alignment - bytes.count & (alignment - 1)) & (alignment - 1)
        if padding > 0 { bytes.append(contentsOf: repeatElement(0, count: padding)) }
    }

    mutating func put<Integer: FixedWidthInteger>(_ value: Integer) {
        align(MemoryLayout<Integer>.size)
        withUnsafeBytes(of: value.littleEndian) { bytes.append(contentsOf: $0) }
    }

    /// Whether `count` more bytes (and a little padding) stay within ``limit``.
    private func hasRoom(for count: Int) -> Bool {
        count <= limit - bytes.count - 8
    }

    /// A string or object path: its length, its bytes, a NUL.
    mutating func putString(_ text: String) -> Bool {
        guard hasRoom(for: text.utf8.count + 5) else { return false }
        put(UInt32(text.utf8.count))
        return putCharacters(text)
    }

    /// A signature: its length in one byte, its bytes, a NUL.
    mutating func putSignature(_ text: String) -> Bool {
        guard text.utf8.count <= 255, hasRoom(for: text.utf8.count + 2) else { return false }
        bytes.append(UInt8(text.utf8.count))
        return putCharacters(text)
    }

    /// The text's bytes and a NUL; false when the text holds a NUL of its own (D-Bus strings
    /// cannot). Checked on the copy: `String.UTF8View.contains` is a byte-at-a-time loop.
    private mutating func putCharacters(_ text: String) -> Bool {
        let start = bytes.count
        bytes.append(contentsOf: text.utf8)
        let clean = bytes.withUnsafeBufferPointer { buffer in
            memchr(buffer.baseAddress! + start, 0, buffer.count - start) == nil
        }
        bytes.append(0)
        return clean
    }

    /// Overwrites the 32-bit number at `offset` (an array's length, a header's body length).
    mutating func patch(_ value: UInt32, at offset: Int) {
        bytes.withUnsafeMutableBytes { $0.storeBytes(of: value.littleEndian, toByteOffset: offset, as: UInt32.self) }
    }

    mutating func append(contentsOf other: [UInt8]) {
        bytes.append(contentsOf: other)
    }

    /// Writes `value`; false for a descriptor, an empty struct, an element of another type than
    /// its array's, an array over the 64 MiB D-Bus allows, or more than ``limit``.
    mutating func put(_ value: DBusValue) -> Bool {
        switch value {
        case .byte(let v): bytes.append(v)
        case .boolean(let v): put(UInt32(v ? 1 : 0))
        case .int16(let v): put(v)
        case .uint16(let v): put(v)
        case .int32(let v): put(v)
        case .uint32(let v): put(v)
        case .int64(let v): put(v)
        case .uint64(let v): put(v)
        case .double(let v): put(v.bitPattern)
        case .string(let v), .objectPath(let v): return putString(v)
        case .signature(let v): return putSignature(v)
        case .unixFD: return false
        case .bytes(let v):
            guard v.count <= Marshalling.maximumArrayLength, hasRoom(for: v.count + 4) else { return false }
            put(UInt32(v.count))
            bytes.append(contentsOf: v)
        case .array(let element, let elements):
            // An element of more than one type (`sx`) needs no check here: its extra types are
            // in the signature but no bytes were written for them, so libdbus finds the body
            // too short and refuses the message.
            put(UInt32(0))
            let lengthOffset = bytes.count - 4
            align(Self.alignment(ofSignature: element))
            let start = bytes.count
            for item in elements {
                guard item.hasSignature(element), hasRoom(for: 0), put(item) else { return false }
            }
            let length = bytes.count - start
            guard length <= Marshalling.maximumArrayLength else { return false }
            patch(UInt32(length), at: lengthOffset)
        case .dictEntry(let key, let entryValue):
            align(8)
            return put(key) && put(entryValue)
        case .structure(let fields):
            guard !fields.isEmpty else { return false }
            align(8)
            for field in fields {
                guard put(field) else { return false }
            }
        case .variant(let inner):
            guard putSignature(inner.signature) else { return false }
            return put(inner)
        }
        return true
    }

    /// The alignment of the type a signature starts with (the wire format's table).
    static func alignment(ofSignature signature: String) -> Int {
        switch signature.utf8.first {
        case UInt8(ascii: "n"), UInt8(ascii: "q"): 2
        case UInt8(ascii: "b"), UInt8(ascii: "i"), UInt8(ascii: "u"), UInt8(ascii: "h"),
             UInt8(ascii: "s"), UInt8(ascii: "o"), UInt8(ascii: "a"): 4
        case UInt8(ascii: "x"), UInt8(ascii: "t"), UInt8(ascii: "d"), UInt8(ascii: "("), UInt8(ascii: "{"): 8
        default: 1  // y, g, v
        }
    }
}
