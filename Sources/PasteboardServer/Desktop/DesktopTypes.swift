import DBus
import PasteboardModel

#if canImport(Glibc)
import Glibc
#endif

/// How the types of a pasteboard item are named to the desktop, and back.
///
/// X11 apps ask for text by the targets `UTF8_STRING`, `TEXT` and `STRING` and Wayland apps
/// often by plain `text/plain`, whatever MIME type the text was stored under: UTF-8 text is
/// offered under all of those names too, and each is answered with the stored text.
enum DesktopTypes {
    static let textAliases = ["UTF8_STRING", "TEXT", "STRING"]

    /// The names `types` (an item's, in order) are offered under: each type, then the text
    /// aliases if the item has text, then the password manager hint if it is concealed.
    static func offered(_ types: [PasteboardType], concealed: Bool) -> [String] {
        var offered = types.map(\.rawValue)
        if types.contains(.utf8PlainText) || types.contains(.plainText) {
            for alias in [PasteboardType.utf8PlainText.rawValue, PasteboardType.plainText.rawValue] + textAliases where !offered.contains(alias) {
                offered.append(alias)
            }
        }
        if concealed { offered.append(DesktopBridge.secretHint) }
        return offered
    }

    /// The stored type among `types` that answers a request for `name`.
    static func stored(_ name: String, in types: [PasteboardType]) -> PasteboardType? {
        if textAliases.contains(name) || name == PasteboardType.plainText.rawValue || name == PasteboardType.utf8PlainText.rawValue {
            // Text without a charset is taken as UTF-8, as the desktop does.
            let text = [PasteboardType.utf8PlainText, .plainText]
            if let exact = try? PasteboardType(validating: name), types.contains(exact) { return exact }
            return text.first(where: types.contains)
        }
        guard let type = try? PasteboardType(validating: name) else { return nil }
        return types.first { $0 == type }
    }

    /// ICCCM's `STRING` is Latin-1 (ISO 8859-1), not UTF-8: what an app answers for it is
    /// turned into UTF-8 on the way in.
    static let latin1Target = "STRING"

    /// What an app's answer `payload` for the X11 text target `target` is as UTF-8, when it
    /// must be changed. `STRING` is Latin-1. `UTF8_STRING` is UTF-8 and `TEXT` in an encoding
    /// the app chooses, but apps such as `xsel` answer every text target with their bytes as
    /// they are: UTF-8 nowadays, Latin-1 in an older locale or from an older app. An answer for
    /// either that is not valid UTF-8 is therefore taken for Latin-1 (whose every byte string
    /// is text), rather than stored as UTF-8 text it is not; valid UTF-8 is kept as it is, a
    /// NUL in it too. It is checked where it lies (a file's mapped), and read into memory only
    /// to be converted. Nil: keep the payload.
    static func utf8(_ target: String, of payload: Payload) throws(PasteboardError) -> [UInt8]? {
        switch target {
        case latin1Target:
            return utf8(fromLatin1: try DescriptorSource.bytes(of: payload))
        case "TEXT", "UTF8_STRING":
            let isUTF8 = try DescriptorSource.withBytes(of: payload) { TypeSniffer.isUTF8Text($0, allowingCutEnd: false) }
            return isUTF8 ? nil : utf8(fromLatin1: try DescriptorSource.bytes(of: payload))
        default:
            return nil
        }
    }

    /// Latin-1 bytes as UTF-8: each byte is the code point of its value.
    static func utf8(fromLatin1 bytes: [UInt8]) -> [UInt8] {
        var text: [UInt8] = []
        text.reserveCapacity(bytes.count + bytes.count / 8)
        for byte in bytes {
            if byte < 0x80 {
                text.append(byte)
            } else {
                text.append(0xC0 | byte >> 6)
                text.append(0x80 | byte & 0x3F)
            }
        }
        return text
    }

    /// UTF-8 text as Latin-1, for an app that asks for `STRING`: characters beyond U+00FF
    /// become `?`, as Xlib's own conversion does.
    static func latin1(fromUTF8 bytes: [UInt8]) -> [UInt8] {
        String(decoding: bytes, as: UTF8.self).unicodeScalars.map { $0.value < 0x100 ? UInt8($0.value) : UInt8(ascii: "?") }
    }

    /// The data of the password manager hint: what KeePassXC and KDE write.
    static func secretHintData() throws -> UnixFileDescriptor {
        let memory = try UnixFileDescriptor.memoryFile(name: "hint")
        try PayloadWriter.writeAll(memory.rawValue, Array("secret".utf8)[...])
        _ = lseek(memory.rawValue, 0, SEEK_SET)
        return memory
    }
}
