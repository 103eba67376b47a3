/// Tells whether data that comes in parts (reads of a file or a stream) is UTF-8 text, as
/// ``TypeSniffer/isUTF8Text(_:allowingCutEnd:)`` tells it of data held whole, without holding
/// more than the last, unfinished sequence of a part (at most three bytes) between parts.
///
/// ```swift
/// var scanner = UTF8TextScanner()
/// scanner.feed(firstPart)    // may end inside a sequence
/// scanner.feed(secondPart)
/// scanner.isWholeText        // true when all of it is UTF-8 text
/// ```
public struct UTF8TextScanner: Sendable {
    /// The start of a sequence the last part ended inside of.
    private var unfinished: [UInt8] = []
    /// False from the first byte that is not text on.
    private var isTextSoFar = true

    public init() {}

    /// Whether everything fed is UTF-8 text, to its last sequence.
    public var isWholeText: Bool { isTextSoFar && unfinished.isEmpty }

    /// Whether everything fed may still be the start of text: false from the first byte that
    /// is not, whatever follows.
    public var mayBeText: Bool { isTextSoFar }

    /// Takes the next part of the data.
    public mutating func feed(_ bytes: UnsafeRawBufferPointer) {
        guard isTextSoFar, !bytes.isEmpty else { return }
        var start = 0
        if let lead = unfinished.first {
            start = min(Self.sequenceLength(lead) - unfinished.count, bytes.count)
            unfinished += bytes[0..<start]
            let finished = unfinished.count == Self.sequenceLength(lead)
            isTextSoFar = TypeSniffer.isUTF8Text(unfinished, allowingCutEnd: !finished)
            guard isTextSoFar, finished else { return }
            unfinished = []
        }
        let rest = UnsafeRawBufferPointer(rebasing: bytes[start...])
        let end = rest.count - Self.unfinishedLength(rest)
        isTextSoFar = TypeSniffer.isUTF8Text(UnsafeRawBufferPointer(rebasing: rest[..<end]), allowingCutEnd: false)
            && TypeSniffer.isUTF8Text(rest[end...], allowingCutEnd: true)
        unfinished = isTextSoFar ? Array(rest[end...]) : []
    }

    /// The length of the sequence `lead` starts (1 for a byte that starts none).
    private static func sequenceLength(_ lead: UInt8) -> Int {
        switch lead {
        case 0xC0...0xDF: 2
        case 0xE0...0xEF: 3
        case 0xF0...0xF7: 4
        default: 1
        }
    }

    /// How many bytes at the end of `bytes` are a sequence begun and not finished.
    private static func unfinishedLength(_ bytes: UnsafeRawBufferPointer) -> Int {
        var continuations = 0
        while continuations < 3, continuations < bytes.count, bytes[bytes.count - 1 - continuations] & 0xC0 == 0x80 {
            continuations += 1
        }
        guard continuations < bytes.count else { return 0 }
        let lead = bytes[bytes.count - 1 - continuations]
        return sequenceLength(lead) > continuations + 1 ? continuations + 1 : 0
    }
}
