/// Appends little-endian integers and length-prefixed bytes (the commit log's records).
struct ByteWriter {
    private(set) var bytes: [UInt8] = []

    init(reservingCapacity capacity: Int = 256) {
        bytes.reserveCapacity(capacity)
    }

    mutating func byte(_ value: UInt8) { bytes.append(value) }

    mutating func uint64(_ value: UInt64) {
        withUnsafeBytes(of: value.littleEndian) { bytes.append(contentsOf: $0) }
    }

    mutating func bytes(_ value: [UInt8]) {
        uint64(UInt64(value.count))
        bytes.append(contentsOf: value)
    }

    mutating func string(_ value: String) {
        var value = value
        value.withUTF8 { utf8 in
            uint64(UInt64(utf8.count))
            bytes.append(contentsOf: utf8)
        }
    }
}

/// Reads what a ``ByteWriter`` wrote; every read is nil past the end.
struct ByteReader {
    private let source: [UInt8]
    private var offset = 0

    init(_ bytes: [UInt8]) {
        source = bytes
    }

    var isAtEnd: Bool { offset == source.count }

    mutating func byte() -> UInt8? {
        guard offset < source.count else { return nil }
        defer { offset += 1 }
        return source[offset]
    }

    mutating func uint64() -> UInt64? {
        guard source.count - offset >= 8 else { return nil }
        var value: UInt64 = 0
        for shift in 0..<8 {
            value |= UInt64(source[offset + shift]) << (8 * shift)
        }
        offset += 8
        return value
    }

    /// A count or index: no more than the record's size could describe (a bound that keeps a
    /// damaged count from driving a huge loop).
    mutating func count() -> Int? {
        guard let value = uint64(), value <= UInt64(source.count) else { return nil }
        return Int(value)
    }

    mutating func data() -> [UInt8]? {
        guard let length = uint64(), length <= UInt64(source.count - offset) else { return nil }
        defer { offset += Int(length) }
        return Array(source[offset..<offset + Int(length)])
    }

    mutating func string() -> String? {
        data().map { String(decoding: $0, as: UTF8.self) }
    }
}
