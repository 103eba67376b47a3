import Foundation
import PasteboardModel
import Testing

@Suite("TypeSniffer")
struct TypeSnifferTests {
    struct Sample: Sendable, CustomTestStringConvertible {
        let name: String
        let bytes: [UInt8]
        let mimeType: String
        var testDescription: String { name }

        init(_ name: String, _ bytes: [UInt8], _ mimeType: String) {
            self.name = name
            self.bytes = bytes
            self.mimeType = mimeType
        }
    }

    static func ascii(_ text: String) -> [UInt8] {
        Array(text.utf8)
    }

    /// Bytes that are never UTF-8 text, so the magic decides.
    static let binary: [UInt8] = [0x00, 0xFF, 0x10, 0x80]

    /// A ZIP local file header whose first entry, stored, is named `mimetype`.
    static func zipWithMIMEEntry(_ content: String, method: UInt8 = 0) -> [UInt8] {
        let body = ascii(content)
        var header: [UInt8] = ascii("PK") + [3, 4, 20, 0, 0, 0, method, 0]
        header += [0, 0, 0, 0] + [0, 0, 0, 0]  // time, date, crc
        header += [UInt8(body.count), 0, 0, 0, UInt8(body.count), 0, 0, 0]  // sizes
        header += [8, 0, 0, 0] + ascii("mimetype")
        return header + body + ascii("PK") + [3, 4]
    }

    static func elf(type: UInt8, bigEndian: Bool = false) -> [UInt8] {
        var bytes: [UInt8] = [0x7F] + ascii("ELF") + [2, bigEndian ? 2 : 1, 1, 0] + Array(repeating: 0, count: 8)
        bytes += bigEndian ? [0, type] : [type, 0]
        return bytes + [0x3E, 0]
    }

    static let magics: [Sample] = [
        Sample("png", [0x89, 0x50, 0x4E, 0x47, 0x0D, 0x0A, 0x1A, 0x0A, 0, 0, 0, 13] + ascii("IHDR"), "image/png"),
        Sample("jpeg", [0xFF, 0xD8, 0xFF, 0xE0, 0x00, 0x10] + ascii("JFIF") + [0], "image/jpeg"),
        Sample("gif87a", ascii("GIF87a") + [1, 0, 1, 0, 0x80], "image/gif"),
        Sample("gif89a", ascii("GIF89a") + [1, 0, 1, 0, 0x80], "image/gif"),
        Sample("webp", ascii("RIFF") + [0x24, 0, 0, 0] + ascii("WEBPVP8 ") + binary, "image/webp"),
        Sample("bmp", ascii("BM") + [0x3A, 0, 0, 0, 0, 0, 0, 0, 0x36, 0, 0, 0], "image/bmp"),
        Sample("tiff little-endian", [0x49, 0x49, 0x2A, 0x00, 8, 0, 0, 0], "image/tiff"),
        Sample("tiff big-endian", [0x4D, 0x4D, 0x00, 0x2A, 0, 0, 0, 8], "image/tiff"),
        Sample("ico", [0, 0, 1, 0, 1, 0, 16, 16], "image/vnd.microsoft.icon"),
        Sample("psd", ascii("8BPS") + [0, 1, 0, 0], "image/vnd.adobe.photoshop"),
        Sample("pdf", ascii("%PDF-1.7\n%") + [0xE2, 0xE3, 0xCF, 0xD3], "application/pdf"),
        Sample("zip", ascii("PK") + [3, 4, 20, 0, 0, 0, 8, 0], "application/zip"),
        Sample("empty zip", ascii("PK") + [5, 6] + Array(repeating: 0, count: 18), "application/zip"),
        Sample("epub", zipWithMIMEEntry("application/epub+zip"), "application/epub+zip"),
        Sample("odt", zipWithMIMEEntry("application/vnd.oasis.opendocument.text"), "application/vnd.oasis.opendocument.text"),
        Sample("zip, compressed first entry", zipWithMIMEEntry("application/epub+zip", method: 8), "application/zip"),
        Sample("zip, bogus mimetype entry", zipWithMIMEEntry("not a type"), "application/zip"),
        Sample("gzip", [0x1F, 0x8B, 0x08, 0x00], "application/gzip"),
        Sample("bzip2", ascii("BZh91AY&SY") + [0xFF, 0x00], "application/x-bzip2"),
        Sample("xz", [0xFD, 0x37, 0x7A, 0x58, 0x5A, 0x00, 0x00, 0x04], "application/x-xz"),
        Sample("zstd", [0x28, 0xB5, 0x2F, 0xFD, 0x04, 0x00], "application/zstd"),
        Sample("7z", [0x37, 0x7A, 0xBC, 0xAF, 0x27, 0x1C, 0x00, 0x04], "application/x-7z-compressed"),
        Sample("rar", ascii("Rar!") + [0x1A, 0x07, 0x01, 0x00], "application/vnd.rar"),
        Sample("tar", Array(repeating: 0, count: 257) + ascii("ustar") + [0] + ascii("00"), "application/x-tar"),
        Sample("sqlite", ascii("SQLite format 3") + [0, 0x10, 0x00], "application/vnd.sqlite3"),
        Sample("mp4", [0, 0, 0, 0x20] + ascii("ftypisom") + [0, 0, 2, 0], "video/mp4"),
        Sample("quicktime", [0, 0, 0, 0x14] + ascii("ftypqt  ") + [0, 0, 2, 0], "video/quicktime"),
        Sample("m4a", [0, 0, 0, 0x20] + ascii("ftypM4A ") + [0, 0, 2, 0], "audio/mp4"),
        Sample("heic", [0, 0, 0, 0x18] + ascii("ftypheic") + [0, 0, 0, 0], "image/heic"),
        Sample("avif", [0, 0, 0, 0x1C] + ascii("ftypavif") + [0, 0, 0, 0], "image/avif"),
        Sample("ogg vorbis", ascii("OggS") + [0, 2] + Array(repeating: 0, count: 22) + [1] + ascii("vorbis"), "audio/ogg"),
        Sample("ogg opus", ascii("OggS") + [0, 2] + Array(repeating: 0, count: 22) + ascii("OpusHead"), "audio/ogg"),
        Sample("ogg theora", ascii("OggS") + [0, 2] + Array(repeating: 0, count: 22) + [0x80] + ascii("theora"), "video/ogg"),
        Sample("ogg other", ascii("OggS") + [0, 2] + Array(repeating: 0, count: 22), "application/ogg"),
        Sample("flac", ascii("fLaC") + [0, 0, 0, 0x22, 0x10, 0x00, 0x10, 0x00, 0xFF], "audio/flac"),
        Sample("mp3 with ID3", ascii("ID3") + [4, 0, 0, 0, 0, 0, 0xFF], "audio/mpeg"),
        Sample("mp3 frame", [0xFF, 0xFB, 0x90, 0x64, 0x00], "audio/mpeg"),
        Sample("aac adts", [0xFF, 0xF1, 0x50, 0x80, 0x00], "audio/aac"),
        Sample("wav", ascii("RIFF") + [0x24, 0, 0, 0] + ascii("WAVEfmt ") + [0x10, 0, 0, 0], "audio/wav"),
        Sample("avi", ascii("RIFF") + [0x24, 0, 0, 0] + ascii("AVI LIST") + [0x10, 0, 0, 0], "video/x-msvideo"),
        Sample("midi", ascii("MThd") + [0, 0, 0, 6, 0, 1], "audio/midi"),
        Sample("webm", [0x1A, 0x45, 0xDF, 0xA3, 0x9F, 0x42, 0x86, 0x81, 0x01, 0x42, 0x82, 0x84] + ascii("webm"), "video/webm"),
        Sample("matroska", [0x1A, 0x45, 0xDF, 0xA3, 0xA3, 0x42, 0x82, 0x88] + ascii("matroska"), "video/x-matroska"),
        Sample("woff", ascii("wOFF") + [0, 1, 0, 0], "font/woff"),
        Sample("woff2", ascii("wOF2") + [0, 1, 0, 0], "font/woff2"),
        Sample("otf", ascii("OTTO") + [0, 0x0A, 0, 0x80], "font/otf"),
        Sample("ttf", [0, 1, 0, 0, 0, 0x0F, 0, 0x80], "font/ttf"),
        Sample("wasm", [0x00] + ascii("asm") + [1, 0, 0, 0], "application/wasm"),
        Sample("elf executable", elf(type: 2), "application/x-executable"),
        Sample("elf shared library", elf(type: 3), "application/x-sharedlib"),
        Sample("elf object, big-endian", elf(type: 1, bigEndian: true), "application/x-object"),
        Sample("elf core", elf(type: 4), "application/x-core"),
        Sample("dos executable", ascii("MZ") + [0x90, 0x00, 0x03, 0x00], "application/x-ms-dos-executable"),
    ]

    @Test("magic numbers", arguments: magics)
    func magic(sample: Sample) {
        // Valid UTF-8 is text unless a NUL in it marks the magic number of a binary format.
        #expect(!TypeSniffer.isUTF8Text(sample.bytes, allowingCutEnd: true) || sample.bytes.contains(0), "the sample must not be text")
        #expect(TypeSniffer.sniff(sample.bytes) == sample.mimeType)
        #expect(TypeSniffer.sniff(sample.bytes, isText: true) == sample.mimeType || !sample.bytes.contains(0))
    }

    @Test("every sniffed type is a valid MIME type", arguments: magics)
    func sniffedTypesAreValid(sample: Sample) throws {
        let type = try PasteboardType(validating: TypeSniffer.sniff(sample.bytes))
        #expect(type.isMIME)
        #expect(type.parameters.isEmpty)
    }

    static let texts: [Sample] = [
        Sample("empty", [], "text/plain;charset=utf-8"),
        Sample("ascii", ascii("hello, world\n"), "text/plain;charset=utf-8"),
        Sample("accents", ascii("héllo wörld"), "text/plain;charset=utf-8"),
        Sample("cjk and emoji", ascii("日本語 📋"), "text/plain;charset=utf-8"),
        Sample("svg is text", ascii("<svg xmlns=\"http://www.w3.org/2000/svg\"/>"), "text/plain;charset=utf-8"),
        Sample("ascii-only pdf is text", ascii("%PDF-1.4\n"), "text/plain;charset=utf-8"),
        Sample("control characters other than NUL", ascii("\u{1B}[1mbold\u{1B}[0m\t\r\n"), "text/plain;charset=utf-8"),
        Sample("cut three-byte sequence", Array(ascii("日本").dropLast()), "text/plain;charset=utf-8"),
        Sample("cut four-byte sequence", Array(ascii("a📋").dropLast(2)), "text/plain;charset=utf-8"),
        // Valid UTF-8, which `pbctl copy` writes as text whatever it holds (the contract's rule).
        Sample("NUL", ascii("abc") + [0] + ascii("def"), "text/plain;charset=utf-8"),
        Sample("NUL first", [0, 0, 0] + ascii("abc"), "text/plain;charset=utf-8"),
        Sample("lone continuation byte", [0x61, 0x80, 0x62], "application/octet-stream"),
        Sample("overlong encoding", [0xC0, 0xAF], "application/octet-stream"),
        Sample("overlong three-byte", [0xE0, 0x80, 0xAF], "application/octet-stream"),
        Sample("surrogate", [0xED, 0xA0, 0x80], "application/octet-stream"),
        Sample("past U+10FFFF", [0xF4, 0x90, 0x80, 0x80], "application/octet-stream"),
        Sample("F5 lead byte", [0xF5, 0x80, 0x80, 0x80], "application/octet-stream"),
        Sample("cut sequence followed by more", [0xE6, 0x97, 0x61], "application/octet-stream"),
        Sample("latin-1", [0x63, 0x61, 0x66, 0xE9, 0x21], "application/octet-stream"),
        Sample("BM without a bitmap header", ascii("BM") + [0xFF, 1, 2, 3, 4, 5, 6, 7], "application/octet-stream"),
        Sample("RIFF of an unknown kind", ascii("RIFF") + [0x24, 0, 0, 0] + ascii("XXXX") + [0xFF], "application/octet-stream"),
    ]

    @Test("text and unrecognized data", arguments: texts)
    func text(sample: Sample) {
        #expect(TypeSniffer.sniff(sample.bytes) == sample.mimeType)
    }

    @Test("a cut sequence is binary when the prefix is all of the data")
    func completeData() {
        let cut = Array(Self.ascii("日本").dropLast())
        #expect(TypeSniffer.sniff(cut, isComplete: false) == "text/plain;charset=utf-8")
        #expect(TypeSniffer.sniff(cut, isComplete: true) == "application/octet-stream")
        #expect(TypeSniffer.sniff(Self.ascii("日本"), isComplete: true) == "text/plain;charset=utf-8")
    }

    @Test("only the first sniffLength bytes are examined")
    func sniffLength() {
        #expect(TypeSniffer.sniffLength == 4096)
        let text = Array(repeating: UInt8(ascii: "a"), count: TypeSniffer.sniffLength)
        #expect(TypeSniffer.sniff(text + [0x00, 0xFF]) == "text/plain;charset=utf-8")
        #expect(TypeSniffer.sniff(text.dropLast() + [0xFF]) == "application/octet-stream")
        // A two-byte character straddling the limit is cut, even when the caller says the
        // data is complete, because the data goes on past what is examined.
        let straddling = Array(text.dropLast()) + Self.ascii("é")
        #expect(TypeSniffer.sniff(straddling, isComplete: true) == "text/plain;charset=utf-8")
    }

    @Test("any collection of bytes can be sniffed")
    func collections() {
        let png: [UInt8] = [0x89, 0x50, 0x4E, 0x47, 0x0D, 0x0A, 0x1A, 0x0A]
        #expect(TypeSniffer.sniff(Data(png)) == "image/png")
        #expect(TypeSniffer.sniff(Data([0x00] + png).dropFirst()) == "image/png")
        #expect(TypeSniffer.sniff(png[...]) == "image/png")
        #expect(TypeSniffer.sniff("plain".utf8) == "text/plain;charset=utf-8")
    }

    /// The check that reads eight ASCII bytes at a time says what a byte-at-a-time reading of
    /// the UTF-8 rules says, wherever in a word a NUL, a multi-byte sequence or a bad byte
    /// falls, and at every length (a large file is checked this way, a mebibyte at a time).
    @Test("UTF-8 text is told word by word as byte by byte")
    func wordAtATimeAgreesWithTheRules() {
        func isValid(_ bytes: [UInt8]) -> Bool {
            String(validating: bytes, as: UTF8.self) != nil
        }
        // Valid, or valid but for an unfinished last sequence: one that some continuation
        // bytes would complete.
        func reference(_ bytes: [UInt8], allowingCutEnd: Bool) -> Bool {
            if isValid(bytes) { return true }
            guard allowingCutEnd else { return false }
            let continuations: [[UInt8]] = [0x80, 0x8F, 0x90, 0x9F, 0xA0, 0xBF].flatMap { first in
                [[first], [first, 0x80], [first, 0x80, 0x80]]
            }
            return (1...3).contains { cut in
                cut <= bytes.count && isValid(Array(bytes.dropLast(cut)))
                    && continuations.contains { isValid(Array(bytes.suffix(cut)) + $0) }
            }
        }
        let pieces: [[UInt8]] = [Array("a".utf8), Array("é".utf8), Array("€".utf8), Array("😀".utf8), [0], [0xFF], [0x80], [0xC3], [0xE2, 0x82], [0xED, 0xA0, 0x80], [0xF4, 0x90, 0x80, 0x80]]
        var generator = SystemRandomNumberGenerator()
        for _ in 0..<4_000 {
            var bytes: [UInt8] = Array(repeating: 0x61, count: Int.random(in: 0...17, using: &generator))
            for _ in 0..<Int.random(in: 0...3, using: &generator) {
                bytes.insert(contentsOf: pieces.randomElement(using: &generator)!, at: Int.random(in: 0...bytes.count, using: &generator))
            }
            for cut in [false, true] {
                let word = bytes.withUnsafeBytes { TypeSniffer.isUTF8Text($0, allowingCutEnd: cut) }
                #expect(word == reference(bytes, allowingCutEnd: cut), "\(bytes) allowingCutEnd: \(cut)")
                // And through a collection with no contiguous storage.
                #expect(TypeSniffer.isUTF8Text(bytes.lazy.map { $0 }, allowingCutEnd: cut) == word)
            }
        }
    }

    /// Fed in parts cut anywhere (inside a sequence too), the scanner says what the check of
    /// the whole says.
    @Test("UTF-8 text is told in parts as whole")
    func partsAgreeWithTheWhole() {
        let pieces: [[UInt8]] = [Array("ab".utf8), Array("é".utf8), Array("€".utf8), Array("😀".utf8), [0], [0xFF], [0x80], [0xC3], [0xE0, 0x80], [0xED, 0xA0, 0x80], [0xF4, 0x90, 0x80, 0x80], [0xF0, 0x9F]]
        var generator = SystemRandomNumberGenerator()
        for _ in 0..<4_000 {
            var bytes: [UInt8] = []
            for _ in 0..<Int.random(in: 0...6, using: &generator) { bytes += pieces.randomElement(using: &generator)! }
            var scanner = UTF8TextScanner()
            var start = 0
            while start < bytes.count {
                let end = min(bytes.count, start + Int.random(in: 0...5, using: &generator))
                bytes[start..<end].withUnsafeBytes { scanner.feed($0) }
                start = end
            }
            #expect(scanner.isWholeText == TypeSniffer.isUTF8Text(bytes, allowingCutEnd: false), "\(bytes)")
        }
    }
}
