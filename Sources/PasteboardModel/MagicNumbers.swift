/// The magic numbers ``TypeSniffer`` recognizes in data that is not text.
///
/// Each entry is a check on the first bytes and the type it means; the first match wins, so
/// containers that share a magic (RIFF, ftyp, Ogg, ZIP) are told apart by their inner tag.
/// MIME names are the ones desktop applications use; shared-mime-info knows each one, as a
/// type or an alias.
enum MagicNumbers {
    private struct Signature: Sendable {
        let mimeType: @Sendable ([UInt8]) -> String?
    }

    /// A signature that is a fixed byte string at a fixed offset.
    private static func fixed(_ mimeType: String, _ magic: [UInt8], at offset: Int = 0) -> Signature {
        Signature { bytes in bytes.has(magic, at: offset) ? mimeType : nil }
    }

    private static func ascii(_ text: String) -> [UInt8] {
        Array(text.utf8)
    }

    private static let signatures: [Signature] = [
        fixed("image/png", [0x89, 0x50, 0x4E, 0x47, 0x0D, 0x0A, 0x1A, 0x0A]),
        fixed("image/jpeg", [0xFF, 0xD8, 0xFF]),
        fixed("image/gif", ascii("GIF87a")),
        fixed("image/gif", ascii("GIF89a")),
        fixed("image/tiff", [0x49, 0x49, 0x2A, 0x00]),
        fixed("image/tiff", [0x4D, 0x4D, 0x00, 0x2A]),
        Signature(mimeType: bitmap),
        fixed("image/vnd.microsoft.icon", [0x00, 0x00, 0x01, 0x00]),
        fixed("image/vnd.adobe.photoshop", ascii("8BPS")),
        fixed("application/pdf", ascii("%PDF-")),
        Signature(mimeType: zip),
        fixed("application/gzip", [0x1F, 0x8B]),
        fixed("application/x-bzip2", ascii("BZh")),
        fixed("application/x-xz", [0xFD, 0x37, 0x7A, 0x58, 0x5A, 0x00]),
        fixed("application/zstd", [0x28, 0xB5, 0x2F, 0xFD]),
        fixed("application/x-7z-compressed", [0x37, 0x7A, 0xBC, 0xAF, 0x27, 0x1C]),
        fixed("application/vnd.rar", ascii("Rar!\u{1A}\u{07}")),
        fixed("application/x-tar", ascii("ustar"), at: 257),
        fixed("application/vnd.sqlite3", ascii("SQLite format 3\u{0}")),
        Signature(mimeType: riff),
        Signature(mimeType: isoMedia),
        Signature(mimeType: ogg),
        fixed("audio/flac", ascii("fLaC")),
        fixed("audio/mpeg", ascii("ID3")),
        Signature(mimeType: mpegAudioFrame),
        fixed("audio/midi", ascii("MThd")),
        Signature(mimeType: matroska),
        fixed("font/woff", ascii("wOFF")),
        fixed("font/woff2", ascii("wOF2")),
        fixed("font/otf", ascii("OTTO")),
        fixed("font/ttf", [0x00, 0x01, 0x00, 0x00, 0x00]),
        fixed("application/wasm", [0x00, 0x61, 0x73, 0x6D]),
        Signature(mimeType: elf),
        fixed("application/x-ms-dos-executable", ascii("MZ")),
    ]

    /// The type whose magic number starts `bytes`, or `nil`.
    static func mimeType(of bytes: [UInt8]) -> String? {
        for signature in signatures {
            if let mimeType = signature.mimeType(bytes) { return mimeType }
        }
        return nil
    }

    // MARK: Containers and weak magics

    /// `BM` is only two letters, so the reserved header field (always zero) must agree.
    private static func bitmap(_ bytes: [UInt8]) -> String? {
        guard bytes.has(ascii("BM")), bytes.count >= 10, bytes[6..<10].allSatisfy({ $0 == 0 }) else {
            return nil
        }
        return "image/bmp"
    }

    /// RIFF holds WebP images, WAVE sound and AVI video, named at offset 8.
    private static func riff(_ bytes: [UInt8]) -> String? {
        guard bytes.has(ascii("RIFF")) else { return nil }
        if bytes.has(ascii("WEBP"), at: 8) { return "image/webp" }
        if bytes.has(ascii("WAVE"), at: 8) { return "audio/wav" }
        if bytes.has(ascii("AVI "), at: 8) { return "video/x-msvideo" }
        return nil
    }

    /// ISO base media files (MP4, QuickTime, HEIF, AVIF) say what they are in the major brand
    /// after `ftyp`.
    private static func isoMedia(_ bytes: [UInt8]) -> String? {
        guard bytes.has(ascii("ftyp"), at: 4), bytes.count >= 12 else { return nil }
        let brand = String(decoding: bytes[8..<12], as: UTF8.self)
        switch brand {
        case "qt  ": return "video/quicktime"
        case "M4A ", "M4B ", "M4P ": return "audio/mp4"
        case "heic", "heix", "hevc", "hevx": return "image/heic"
        case "mif1", "msf1": return "image/heif"
        case "avif", "avis": return "image/avif"
        case _ where brand.hasPrefix("3gp"): return "video/3gpp"
        default: return "video/mp4"
        }
    }

    /// Ogg names its codec in the first packet, at offset 28.
    private static func ogg(_ bytes: [UInt8]) -> String? {
        guard bytes.has(ascii("OggS")) else { return nil }
        if bytes.has(ascii("\u{1}vorbis"), at: 28) || bytes.has(ascii("OpusHead"), at: 28)
            || bytes.has(ascii("\u{7F}FLAC"), at: 28)
        {
            return "audio/ogg"
        }
        if bytes.has([0x80] + ascii("theora"), at: 28) { return "video/ogg" }
        return "application/ogg"
    }

    /// An MPEG audio frame without an ID3 tag: 11 sync bits, a valid version and layer III;
    /// ADTS (AAC) frames have layer bits 00.
    private static func mpegAudioFrame(_ bytes: [UInt8]) -> String? {
        guard bytes.count >= 2, bytes[0] == 0xFF, bytes[1] & 0xE0 == 0xE0 else { return nil }
        let version = (bytes[1] >> 3) & 0b11
        let layer = (bytes[1] >> 1) & 0b11
        if version != 0b01, layer == 0b01 { return "audio/mpeg" }
        if bytes[1] & 0xF6 == 0xF0 { return "audio/aac" }
        return nil
    }

    /// EBML (Matroska); WebM says so in its DocType near the start.
    private static func matroska(_ bytes: [UInt8]) -> String? {
        guard bytes.has([0x1A, 0x45, 0xDF, 0xA3]) else { return nil }
        let head = bytes.prefix(64)
        return head.containsSubsequence(ascii("webm")) ? "video/webm" : "video/x-matroska"
    }

    /// ELF files say in `e_type` whether they are objects, executables, libraries or cores.
    private static func elf(_ bytes: [UInt8]) -> String? {
        guard bytes.has([0x7F, 0x45, 0x4C, 0x46]) else { return nil }
        guard bytes.count >= 18 else { return "application/x-executable" }
        let isBigEndian = bytes[5] == 2
        let type = isBigEndian ? UInt16(bytes[16]) << 8 | UInt16(bytes[17]) : UInt16(bytes[17]) << 8 | UInt16(bytes[16])
        switch type {
        case 1: return "application/x-object"
        case 3: return "application/x-sharedlib"
        case 4: return "application/x-core"
        default: return "application/x-executable"
        }
    }

    /// ZIP; OpenDocument and EPUB files store their own MIME type uncompressed in a first
    /// entry named `mimetype`, which is read when present.
    private static func zip(_ bytes: [UInt8]) -> String? {
        guard bytes.has(ascii("PK\u{3}\u{4}")) || bytes.has(ascii("PK\u{5}\u{6}")) || bytes.has(ascii("PK\u{7}\u{8}"))
        else { return nil }
        guard bytes.has(ascii("PK\u{3}\u{4}")), bytes.count >= 30 else { return "application/zip" }
        let method = bytes.littleEndian16(at: 8)
        let size = Int(bytes.littleEndian32(at: 18))
        let nameLength = Int(bytes.littleEndian16(at: 26))
        let extraLength = Int(bytes.littleEndian16(at: 28))
        let start = 30 + nameLength + extraLength
        guard method == 0, nameLength == 8, bytes.has(ascii("mimetype"), at: 30),
            (1...TypeSyntax.maximumByteCount).contains(size), start + size <= bytes.count
        else { return "application/zip" }
        let content = String(decoding: bytes[start..<start + size], as: UTF8.self)
        guard let type = try? PasteboardType(validating: content), type.isMIME, type.parameters.isEmpty else {
            return "application/zip"
        }
        return type.rawValue
    }
}

extension [UInt8] {
    fileprivate func has(_ magic: [UInt8], at offset: Int = 0) -> Bool {
        count >= offset + magic.count && self[offset..<offset + magic.count].elementsEqual(magic)
    }

    fileprivate func littleEndian16(at offset: Int) -> UInt16 {
        UInt16(self[offset]) | UInt16(self[offset + 1]) << 8
    }

    fileprivate func littleEndian32(at offset: Int) -> UInt32 {
        (0..<4).reduce(0) { $0 | UInt32(self[offset + $1]) << (8 * $1) }
    }
}

extension ArraySlice<UInt8> {
    fileprivate func containsSubsequence(_ needle: [UInt8]) -> Bool {
        guard needle.count <= count else { return false }
        return indices.dropLast(needle.count - 1).contains { start in
            self[start..<start + needle.count].elementsEqual(needle)
        }
    }
}
