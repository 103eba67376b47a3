/// The spelling rules of types: which bytes are allowed, where spaces may go, and how a MIME
/// type with parameters is taken apart.
///
/// Kept apart from ``PasteboardType`` so the rules read in one place, in the order they are
/// applied: bytes, then spaces, then MIME structure.
enum TypeSyntax {
    /// One `name=value` parameter as written after a `;`.
    struct Parameter {
        /// The name as written.
        var name: String
        /// The value as written, with its quotes if it had them.
        var spelledValue: String
        /// The value with quotes and backslash escapes removed.
        var value: String
    }

    /// A MIME type taken apart.
    struct MIME {
        /// `type/subtype` as written.
        var head: String
        var parameters: [Parameter]
    }

    static let maximumByteCount = 255

    private static let ruleExample =
        "a MIME type such as \"text/plain;charset=utf-8\" or an identifier such as \"public.png\""

    // MARK: Bytes and spaces

    /// Checks length and bytes, and drops the spaces allowed around `;`.
    ///
    /// - Returns: The compact spelling, and whether spaces were dropped.
    static func compact(_ text: String) throws(PasteboardError) -> (text: String, hadSpaces: Bool) {
        let bytes = Array(text.utf8)
        if bytes.isEmpty {
            throw .invalidType("The type is empty; give \(ruleExample).")
        }
        if bytes.count > maximumByteCount {
            throw .invalidType(
                "The type \(MessageText.quoted(text)) is \(bytes.count) bytes long; "
                    + "a type is at most \(maximumByteCount) bytes of printable ASCII.")
        }
        for (offset, byte) in bytes.enumerated() {
            switch byte {
            case 0x20...0x7E:
                continue
            case 0x09:
                throw .invalidType(
                    "The type \(MessageText.quoted(text)) contains a tab at byte \(offset); a type has no "
                        + "white space except spaces around the ';' between MIME parameters.")
            case 0x80...:
                throw .invalidType(
                    "The type \(MessageText.quoted(text)) contains a non-ASCII character at byte \(offset); "
                        + "a type is printable ASCII, as in \(ruleExample).")
            default:
                throw .invalidType(
                    "The type \(MessageText.quoted(text)) contains the control character "
                        + "\(MessageText.codePoint(UInt32(byte))) at byte \(offset); a type is printable ASCII.")
            }
        }
        guard bytes.contains(0x20) else { return (text, false) }

        var kept: [UInt8] = []
        kept.reserveCapacity(bytes.count)
        var inQuotes = false
        var escaped = false
        var index = 0
        while index < bytes.count {
            let byte = bytes[index]
            if inQuotes {
                if byte == 0x20 {
                    throw .invalidType(
                        "The type \(MessageText.quoted(text)) has a space inside a quoted parameter value at "
                            + "byte \(index); spaces are allowed only around the ';' between MIME parameters.")
                }
                if escaped {
                    escaped = false
                } else if byte == UInt8(ascii: "\\") {
                    escaped = true
                } else if byte == UInt8(ascii: "\"") {
                    inQuotes = false
                }
                kept.append(byte)
                index += 1
                continue
            }
            if byte == 0x20 {
                var end = index
                while end < bytes.count, bytes[end] == 0x20 { end += 1 }
                let afterSeparator = index > 0 && bytes[index - 1] == UInt8(ascii: ";")
                let beforeSeparator = end < bytes.count && bytes[end] == UInt8(ascii: ";")
                guard afterSeparator || beforeSeparator else {
                    throw .invalidType(
                        "The type \(MessageText.quoted(text)) has a space at byte \(index); spaces are allowed "
                            + "only around the ';' between MIME parameters, as in \"text/plain ; charset=utf-8\".")
                }
                index = end
                continue
            }
            if byte == UInt8(ascii: "\"") { inQuotes = true }
            kept.append(byte)
            index += 1
        }
        return (String(decoding: kept, as: UTF8.self), true)
    }

    // MARK: MIME structure

    /// Bytes allowed in a MIME type, subtype, parameter name or unquoted value (RFC 9110 `tchar`).
    static func isTokenByte(_ byte: UInt8) -> Bool {
        switch byte {
        case UInt8(ascii: "a")...UInt8(ascii: "z"), UInt8(ascii: "A")...UInt8(ascii: "Z"),
            UInt8(ascii: "0")...UInt8(ascii: "9"):
            return true
        default:
            return Array("!#$%&'*+-.^_`|~".utf8).contains(byte)
        }
    }

    static func isToken(_ text: Substring) -> Bool {
        !text.isEmpty && text.utf8.allSatisfy(isTokenByte)
    }

    static func isToken(_ text: String) -> Bool {
        isToken(text[...])
    }

    /// Parses a compact spelling (spaces already dropped) that contains a `/` as a MIME type.
    ///
    /// Empty parameters (`text/plain;`) are skipped, as RFC 9110 allows.
    ///
    /// - Parameter original: The caller's spelling, for messages.
    /// - Throws: ``PasteboardError/Code/invalidType`` saying which part is malformed.
    static func parseMIME(_ text: String, original: String) throws(PasteboardError) -> MIME {
        let segments = splitOutsideQuotes(text)
        let head = segments[0]
        let halves = head.split(separator: "/", maxSplits: 1, omittingEmptySubsequences: false)
        guard halves.count == 2, isToken(halves[0]), isToken(halves[1]) else {
            throw .invalidType(
                "The type \(MessageText.quoted(original)) is not a valid MIME type: a MIME type is "
                    + "type/subtype, each made of letters, digits and !#$%&'*+-.^_`|~, as in \"image/png\". "
                    + "A type without '/' is taken as an identifier, such as \"public.png\".")
        }
        var parameters: [Parameter] = []
        for segment in segments.dropFirst() where !segment.isEmpty {
            guard let equals = segment.firstIndex(of: "=") else {
                throw .invalidType(
                    "The parameter \(MessageText.quoted(String(segment))) of \(MessageText.quoted(original)) "
                        + "has no value; write parameters as name=value, as in \"text/plain;charset=utf-8\".")
            }
            let name = segment[..<equals]
            let spelledValue = segment[segment.index(after: equals)...]
            guard isToken(name) else {
                throw .invalidType(
                    "The parameter \(MessageText.quoted(String(segment))) of \(MessageText.quoted(original)) "
                        + "has an invalid name; a parameter name is made of letters, digits and !#$%&'*+-.^_`|~.")
            }
            guard let value = unquote(spelledValue) else {
                throw .invalidType(
                    "The parameter \(MessageText.quoted(String(segment))) of \(MessageText.quoted(original)) "
                        + "has an invalid value; a value is a token such as utf-8 or a quoted string such "
                        + "as \"a;b\".")
            }
            parameters.append(Parameter(name: String(name), spelledValue: String(spelledValue), value: value))
        }
        return MIME(head: head, parameters: parameters)
    }

    /// Splits at each `;` that is not inside a quoted string.
    private static func splitOutsideQuotes(_ text: String) -> [String] {
        var segments: [String] = []
        var current: [UInt8] = []
        var inQuotes = false
        var escaped = false
        for byte in text.utf8 {
            if inQuotes {
                if escaped {
                    escaped = false
                } else if byte == UInt8(ascii: "\\") {
                    escaped = true
                } else if byte == UInt8(ascii: "\"") {
                    inQuotes = false
                }
            } else if byte == UInt8(ascii: "\"") {
                inQuotes = true
            } else if byte == UInt8(ascii: ";") {
                segments.append(String(decoding: current, as: UTF8.self))
                current = []
                continue
            }
            current.append(byte)
        }
        segments.append(String(decoding: current, as: UTF8.self))
        return segments
    }

    /// The value of a parameter: a token as it is, or a quoted string without its quotes and
    /// escapes; `nil` when it is neither.
    private static func unquote(_ spelled: Substring) -> String? {
        if isToken(spelled) { return String(spelled) }
        let bytes = Array(spelled.utf8)
        guard bytes.count >= 2, bytes.first == UInt8(ascii: "\""), bytes.last == UInt8(ascii: "\"") else {
            return nil
        }
        var value: [UInt8] = []
        var index = 1
        while index < bytes.count - 1 {
            let byte = bytes[index]
            if byte == UInt8(ascii: "\\") {
                index += 1
                guard index < bytes.count - 1 else { return nil }
                value.append(bytes[index])
            } else if byte == UInt8(ascii: "\"") {
                return nil
            } else {
                value.append(byte)
            }
            index += 1
        }
        return String(decoding: value, as: UTF8.self)
    }

    /// A parameter value in canonical form: a token as it is, anything else quoted.
    static func canonicalValue(_ value: String) -> String {
        if isToken(value) { return value }
        var quoted = "\""
        for character in value {
            if character == "\"" || character == "\\" { quoted.append("\\") }
            quoted.append(character)
        }
        return quoted + "\""
    }
}
