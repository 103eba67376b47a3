/// A small reader for the XML of shared-mime-info packages: elements, attributes, text,
/// comments, CDATA, the predefined and numeric entities, and namespaces.
///
/// Foundation's `XMLParser` needs libxml2 as a shared library, which the static `pbctl` cannot
/// load, and a package is a few lines of plain XML; this reads exactly that much and refuses
/// the rest (a DTD, an unclosed element) with an error that says where.
///
/// ```swift
/// let root = try XMLReader.parse(#"<a xmlns="urn:x"><b k="v">text</b></a>"#)
/// root.namespace                  // "urn:x"
/// root.children[0].attributes     // ["k": "v"]
/// root.children[0].text           // "text"
/// ```
public enum XMLReader {
    /// An element with its namespace resolved.
    public struct Element: Sendable, Equatable {
        /// The local name (`sub-class-of`), without a prefix.
        public var name: String
        /// The namespace URI the element's prefix (or the default namespace) stands for; empty
        /// when none is in scope.
        public var namespace: String
        /// The attributes by their written name (`type`, `xml:lang`); namespace declarations
        /// are not attributes.
        public var attributes: [String: String]
        /// The child elements, in document order.
        public var children: [Element]
        /// The element's own text (not its children's), entities replaced.
        public var text: String

        /// The children with a local name in a namespace.
        public func children(named name: String, in namespace: String) -> [Element] {
            children.filter { $0.name == name && $0.namespace == namespace }
        }
    }

    /// A document that is not XML this reader understands.
    public struct Malformed: Error, Sendable, CustomStringConvertible {
        /// What was wrong, and at which line.
        public let description: String
    }

    /// The root element of a document.
    ///
    /// - Throws: ``Malformed`` naming the line of the first problem.
    public static func parse(_ text: String) throws(Malformed) -> Element {
        var reader = Cursor(bytes: Array(text.utf8))
        return try reader.document()
    }

    /// Replaces `&`, `<`, `>`, `"` and `'` by entities, for text and attribute values.
    public static func escaped(_ text: String) -> String {
        var result = ""
        result.reserveCapacity(text.utf8.count)
        for character in text {
            switch character {
            case "&": result += "&amp;"
            case "<": result += "&lt;"
            case ">": result += "&gt;"
            case "\"": result += "&quot;"
            case "'": result += "&apos;"
            default: result.append(character)
            }
        }
        return result
    }
}

// MARK: - The reader

extension XMLReader {
    private struct Cursor {
        let bytes: [UInt8]
        var position = 0

        mutating func document() throws(Malformed) -> Element {
            skipProlog()
            guard peek() == UInt8(ascii: "<") else { throw failure("expected the root element") }
            let root = try element(namespaces: ["xml": "http://www.w3.org/XML/1998/namespace"])
            skipMisc()
            guard position == bytes.count else { throw failure("text after the root element") }
            return root
        }

        // MARK: Elements

        mutating func element(namespaces inherited: [String: String]) throws(Malformed) -> Element {
            position += 1  // <
            let qualifiedName = try name()
            var written: [String: String] = [:]
            var namespaces = inherited
            while true {
                skipSpace()
                guard let byte = peek() else { throw failure("unclosed tag <\(qualifiedName)>") }
                if byte == UInt8(ascii: "/") || byte == UInt8(ascii: ">") { break }
                let attribute = try name()
                skipSpace()
                guard take(UInt8(ascii: "=")) else { throw failure("attribute \(attribute) has no value") }
                skipSpace()
                let value = try quoted()
                if attribute == "xmlns" {
                    namespaces[""] = value
                } else if attribute.hasPrefix("xmlns:") {
                    namespaces[String(attribute.dropFirst(6))] = value
                } else {
                    guard written[attribute] == nil else { throw failure("attribute \(attribute) given twice") }
                    written[attribute] = value
                }
            }
            let (prefix, local) = Self.split(qualifiedName)
            guard let namespace = prefix.isEmpty ? namespaces[""] ?? "" : namespaces[prefix] else {
                throw failure("the prefix \(prefix) of <\(qualifiedName)> is not declared")
            }
            var element = Element(name: local, namespace: namespace, attributes: written, children: [], text: "")
            if take(UInt8(ascii: "/")) {
                guard take(UInt8(ascii: ">")) else { throw failure("expected '>' after '/' in <\(qualifiedName)>") }
                return element
            }
            position += 1  // >
            try content(of: &element, closing: qualifiedName, namespaces: namespaces)
            return element
        }

        mutating func content(of element: inout Element, closing: String, namespaces: [String: String]) throws(Malformed) {
            while position < bytes.count {
                if starts(with: "</") {
                    position += 2
                    let closed = try name()
                    skipSpace()
                    guard closed == closing, take(UInt8(ascii: ">")) else {
                        throw failure("</\(closed)> does not close <\(closing)>")
                    }
                    return
                } else if starts(with: "<!--") {
                    try skip(past: "-->")
                } else if starts(with: "<![CDATA[") {
                    position += 9
                    let start = position
                    try skip(past: "]]>")
                    element.text += String(decoding: bytes[start..<(position - 3)], as: UTF8.self)
                } else if starts(with: "<?") {
                    try skip(past: "?>")
                } else if starts(with: "<!") {
                    throw failure("declarations (<!…>) are not allowed inside elements")
                } else if peek() == UInt8(ascii: "<") {
                    element.children.append(try self.element(namespaces: namespaces))
                } else {
                    element.text += try characters(until: UInt8(ascii: "<"))
                }
            }
            throw failure("<\(closing)> is never closed")
        }

        // MARK: Pieces

        mutating func name() throws(Malformed) -> String {
            let start = position
            while let byte = peek(), !Self.isSpace(byte), !"=/>\"'<".utf8.contains(byte) {
                position += 1
            }
            guard position > start else { throw failure("expected a name") }
            return String(decoding: bytes[start..<position], as: UTF8.self)
        }

        mutating func quoted() throws(Malformed) -> String {
            guard let quote = peek(), quote == UInt8(ascii: "\"") || quote == UInt8(ascii: "'") else {
                throw failure("attribute values must be quoted")
            }
            position += 1
            let value = try characters(until: quote)
            guard take(quote) else { throw failure("unterminated attribute value") }
            return value
        }

        /// Text up to `end` (not taken), with entities replaced.
        mutating func characters(until end: UInt8) throws(Malformed) -> String {
            var result: [UInt8] = []
            while let byte = peek(), byte != end {
                if byte == UInt8(ascii: "<") { throw failure("'<' inside a value") }
                if byte == UInt8(ascii: "&") {
                    result += try entity()
                } else {
                    result.append(byte)
                    position += 1
                }
            }
            return String(decoding: result, as: UTF8.self)
        }

        mutating func entity() throws(Malformed) -> [UInt8] {
            let start = position + 1
            guard let end = bytes[start...].firstIndex(of: UInt8(ascii: ";")), end - start <= 10 else {
                throw failure("'&' that starts no entity (write &amp;)")
            }
            let name = String(decoding: bytes[start..<end], as: UTF8.self)
            position = end + 1
            switch name {
            case "amp": return Array("&".utf8)
            case "lt": return Array("<".utf8)
            case "gt": return Array(">".utf8)
            case "quot": return Array("\"".utf8)
            case "apos": return Array("'".utf8)
            default:
                let digits = name.hasPrefix("#x") ? (name.dropFirst(2), 16) : name.hasPrefix("#") ? (name.dropFirst(), 10) : ("", 0)
                guard digits.1 != 0, let value = UInt32(digits.0, radix: digits.1), let scalar = Unicode.Scalar(value) else {
                    throw failure("unknown entity &\(name);")
                }
                return Array(String(Character(scalar)).utf8)
            }
        }

        mutating func skipProlog() {
            if bytes.starts(with: [0xEF, 0xBB, 0xBF]) { position = 3 }
            skipMisc()
        }

        /// White space, comments, processing instructions and a DOCTYPE without an internal
        /// subset, as may come before or after the root.
        mutating func skipMisc() {
            while true {
                skipSpace()
                if starts(with: "<?") || starts(with: "<!--") || starts(with: "<!DOCTYPE") {
                    let end = starts(with: "<?") ? "?>" : starts(with: "<!--") ? "-->" : ">"
                    guard (try? skip(past: end)) != nil else { position = bytes.count; return }
                } else {
                    return
                }
            }
        }

        mutating func skip(past end: String) throws(Malformed) {
            let marker = Array(end.utf8)
            while position < bytes.count {
                if bytes[position...].starts(with: marker) {
                    position += marker.count
                    return
                }
                position += 1
            }
            throw failure("expected \(end) before the end")
        }

        mutating func skipSpace() {
            while let byte = peek(), Self.isSpace(byte) { position += 1 }
        }

        func peek() -> UInt8? {
            position < bytes.count ? bytes[position] : nil
        }

        mutating func take(_ byte: UInt8) -> Bool {
            guard peek() == byte else { return false }
            position += 1
            return true
        }

        func starts(with text: String) -> Bool {
            bytes[position...].starts(with: text.utf8)
        }

        func failure(_ message: String) -> Malformed {
            let line = bytes[..<min(position, bytes.count)].reduce(1) { $0 + ($1 == UInt8(ascii: "\n") ? 1 : 0) }
            return Malformed(description: "line \(line): \(message)")
        }

        static func isSpace(_ byte: UInt8) -> Bool {
            byte == 0x20 || byte == 0x09 || byte == 0x0A || byte == 0x0D
        }

        static func split(_ qualified: String) -> (prefix: String, local: String) {
            guard let colon = qualified.firstIndex(of: ":") else { return ("", qualified) }
            return (String(qualified[..<colon]), String(qualified[qualified.index(after: colon)...]))
        }
    }
}
