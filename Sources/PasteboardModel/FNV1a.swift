/// FNV-1a, 64 bits: a small, fast hash of bytes that is the same in every run (Swift's
/// `Hasher` is seeded per process), for what is written down or compared across runs (the
/// commit log's checksums, the names of long type declarations' files) and for hashing that
/// must not make type metadata in a short-lived process (the cache of type spellings).
public struct FNV1a: Sendable {
    @usableFromInline var state: UInt64 = 0xcbf2_9ce4_8422_2325

    /// The hash of everything added so far.
    public var value: UInt64 { state }

    public init() {}

    @inlinable
    public mutating func add<Bytes: Sequence<UInt8>>(_ bytes: Bytes) {
        for byte in bytes { state = (state ^ UInt64(byte)) &* 0x100_0000_01b3 }
    }

    /// The hash of `bytes`.
    @inlinable
    public static func hash<Bytes: Sequence<UInt8>>(_ bytes: Bytes) -> UInt64 {
        var hash = FNV1a()
        hash.add(bytes)
        return hash.value
    }
}
