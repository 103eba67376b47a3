/// Helpers that quote user input inside error messages.
///
/// Messages are read by people and often printed to terminals, so input is shown with
/// control characters escaped (never raw) and cut short when it is long.
enum MessageText {
    /// The text in double quotes, control characters written as `\u{…}`, at most `limit`
    /// characters followed by `…` when longer.
    static func quoted(_ text: String, limit: Int = 48) -> String {
        var out = "\""
        var count = 0
        for scalar in text.unicodeScalars {
            if count == limit {
                out += "…"
                break
            }
            switch scalar.value {
            case 0x00...0x1F, 0x7F...0x9F:
                out += "\\u{" + String(scalar.value, radix: 16, uppercase: true) + "}"
            case 0x22:
                out += "\\\""
            case 0x5C:
                out += "\\\\"
            default:
                out.unicodeScalars.append(scalar)
            }
            count += 1
        }
        return out + "\""
    }

    /// A code point in the `U+0009` notation.
    static func codePoint(_ value: UInt32) -> String {
        let hex = String(value, radix: 16, uppercase: true)
        return "U+" + String(repeating: "0", count: max(0, 4 - hex.count)) + hex
    }
}
