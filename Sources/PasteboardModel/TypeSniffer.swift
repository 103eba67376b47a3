/// Guesses the MIME type of data from its first bytes, for writers that give none.
///
/// `pbctl copy` without `-t` writes valid UTF-8 as `text/plain;charset=utf-8`, anything else
/// as what its magic number says (`image/png`, …), and the rest as
/// `application/octet-stream`. Text is tested first, as the contract says, so a file of
/// plain ASCII is text even if it starts like a format whose magic is ASCII. Valid UTF-8 may
/// hold NUL bytes, which no text file does but many formats' headers do: valid UTF-8 with a NUL
/// in its first bytes is what its magic number says when one is recognized (a WebAssembly
/// module, a TIFF, an SQLite database whose header happens to be ASCII), else text.
///
/// ```swift
/// TypeSniffer.sniff(Array("héllo".utf8))                        // "text/plain;charset=utf-8"
/// TypeSniffer.sniff([0x89, 0x50, 0x4E, 0x47, 0x0D, 0x0A, 0x1A, 0x0A])  // "image/png"
/// ```
public enum TypeSniffer {
    /// How many leading bytes are enough to sniff; longer input is cut to this length.
    public static let sniffLength = 4096

    /// The type sniffed from the first bytes of some data.
    ///
    /// The prefix may end in the middle of a UTF-8 sequence (it was cut from longer data),
    /// and is still text. Only the first ``sniffLength`` bytes are examined.
    ///
    /// - Parameter prefix: The first bytes of the data, ideally ``sniffLength`` of them.
    /// - Returns: A MIME type, `application/octet-stream` when nothing is recognized.
    public static func sniff(_ prefix: some Collection<UInt8>) -> String {
        sniff(prefix, isComplete: false)
    }

    /// The type sniffed from the first bytes of some data, knowing whether they are all of it.
    ///
    /// - Parameters:
    ///   - prefix: The first bytes of the data.
    ///   - isComplete: Whether `prefix` is all of the data; if so, a UTF-8 sequence cut at
    ///     the end makes it binary rather than text.
    public static func sniff(_ prefix: some Collection<UInt8>, isComplete: Bool) -> String {
        let bytes = Array(prefix.prefix(sniffLength))
        let isCut = !isComplete || prefix.count > sniffLength
        return sniff(bytes, isText: isUTF8Text(bytes, allowingCutEnd: isCut))
    }

    /// The type of data held whole: text only if every byte of it is (not just the first
    /// ``sniffLength``); else what its first bytes say.
    public static func sniff(whole data: [UInt8]) -> String {
        sniff(data, isText: isUTF8Text(data, allowingCutEnd: false))
    }

    /// The type of data whose text-ness was established elsewhere (over all of it, say a
    /// file read in parts: ``UTF8TextScanner``): text when `isText`, unless its first bytes,
    /// `prefix`, hold a NUL and a magic number; else what they say.
    public static func sniff(_ prefix: some Collection<UInt8>, isText: Bool) -> String {
        let head = Array(prefix.prefix(sniffLength))
        if isText, !head.contains(0) { return "text/plain;charset=utf-8" }
        return MagicNumbers.mimeType(of: head) ?? (isText ? "text/plain;charset=utf-8" : "application/octet-stream")
    }

    /// Whether the bytes are UTF-8 text: valid UTF-8 (no overlong forms, surrogates or code
    /// points past U+10FFFF), NUL bytes included (see ``sniff(_:isText:)`` for what they change).
    ///
    /// - Parameters:
    ///   - bytes: The bytes to test.
    ///   - allowingCutEnd: Accept a sequence that is valid so far but cut off at the end.
    public static func isUTF8Text(_ bytes: some Collection<UInt8>, allowingCutEnd: Bool) -> Bool {
        if let answer = bytes.withContiguousStorageIfAvailable({ isUTF8Text(UnsafeRawBufferPointer($0), allowingCutEnd: allowingCutEnd) }) {
            return answer
        }
        return Array(bytes).withUnsafeBytes { isUTF8Text($0, allowingCutEnd: allowingCutEnd) }
    }

    /// The same, over bytes in memory: ASCII is skipped eight bytes at a time.
    public static func isUTF8Text(_ bytes: UnsafeRawBufferPointer, allowingCutEnd: Bool) -> Bool {
        scanUTF8(bytes, allowingCutEnd: allowingCutEnd)
    }

    private static func scanUTF8(_ bytes: UnsafeRawBufferPointer, allowingCutEnd: Bool) -> Bool {
        var index = 0
        let count = bytes.count
        while index < count {
            // Eight ASCII bytes: no byte has its top bit set.
            if index + 8 <= count {
                let word = bytes.loadUnaligned(fromByteOffset: index, as: UInt64.self)
                if word & 0x8080_8080_8080_8080 == 0 {
                    index += 8
                    continue
                }
            }
            let lead = bytes[index]
            let length: Int
            var secondRange: ClosedRange<UInt8> = 0x80...0xBF
            switch lead {
            case 0x00...0x7F:
                index += 1
                continue
            case 0xC2...0xDF:
                length = 2
            case 0xE0:
                length = 3
                secondRange = 0xA0...0xBF
            case 0xE1...0xEC, 0xEE...0xEF:
                length = 3
            case 0xED:
                length = 3
                secondRange = 0x80...0x9F
            case 0xF0:
                length = 4
                secondRange = 0x90...0xBF
            case 0xF1...0xF3:
                length = 4
            case 0xF4:
                length = 4
                secondRange = 0x80...0x8F
            default:
                return false
            }
            for offset in 1..<length {
                let position = index + offset
                if position == count {
                    return allowingCutEnd
                }
                let range = offset == 1 ? secondRange : 0x80...0xBF
                if !range.contains(bytes[position]) {
                    return false
                }
            }
            index += length
        }
        return true
    }
}
