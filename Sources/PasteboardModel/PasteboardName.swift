#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// The name of a pasteboard: the key under which its contents are kept.
///
/// A valid name is 1 to 255 bytes of UTF-8 with no control characters (U+0000–U+001F,
/// U+007F–U+009F) and no Unicode noncharacters (U+FDD0–U+FDEF, U+nFFFE, U+nFFFF). The bound
/// keeps names usable as keys in storage and in messages; the ban on control characters keeps
/// them printable in `pbctl list` and in logs; the ban on noncharacters keeps every D-Bus
/// client able to read them (sd-bus refuses a message holding one).
///
/// ```swift
/// try PasteboardName(validating: "general")        // ok
/// try PasteboardName(validating: "Notes – drafts") // ok: any printable Unicode
/// try PasteboardName(validating: "")               // throws InvalidName
/// try PasteboardName(validating: "a\tb")           // throws InvalidName
/// ```
///
/// Two names are equal when their UTF-8 bytes are equal. Swift's `String` equality would
/// treat canonically equivalent spellings (`"é"` and `"e\u{301}"`) as one, but the bus and the
/// store see bytes, so the model does too.
public struct PasteboardName: Hashable, Sendable, CustomStringConvertible {
    /// The name exactly as given.
    public let rawValue: String

    /// The longest name allowed, in UTF-8 bytes.
    public static let maximumByteCount = 255

    /// Validates a name.
    ///
    /// - Parameter name: The name as the caller spelled it.
    /// - Throws: ``PasteboardError/Code/invalidName`` with a message saying what was wrong
    ///   and the rule, when the name is empty, longer than 255 bytes, or has a control
    ///   character.
    public init(validating name: String) throws(PasteboardError) {
        try Self.validate(name)
        rawValue = name
    }

    /// A name known to be valid (the standard names).
    private init(standard name: String) {
        rawValue = name
    }

    public var description: String {
        rawValue
    }

    public static func == (lhs: Self, rhs: Self) -> Bool {
        // Every lookup of a pasteboard compares names: their bytes at once where they lie
        // contiguous (native strings always do), else one at a time.
        let compared = lhs.rawValue.utf8.withContiguousStorageIfAvailable { left in
            rhs.rawValue.utf8.withContiguousStorageIfAvailable { right in
                left.count == right.count && (left.isEmpty || memcmp(left.baseAddress!, right.baseAddress!, left.count) == 0)
            }
        }
        return (compared ?? nil) ?? lhs.rawValue.utf8.elementsEqual(rhs.rawValue.utf8)
    }

    public func hash(into hasher: inout Hasher) {
        // The bytes, as `==` compares them; in one piece where they lie contiguous.
        let hashed: Void? = rawValue.utf8.withContiguousStorageIfAvailable { bytes in
            hasher.combine(bytes: UnsafeRawBufferPointer(bytes))
        }
        if hashed == nil {
            Array(rawValue.utf8).withUnsafeBytes { hasher.combine(bytes: $0) }
        }
    }

    private static let rule =
        "a pasteboard name is 1 to 255 bytes of UTF-8 without control characters, such as \"general\""

    private static func validate(_ name: String) throws(PasteboardError) {
        let byteCount = name.utf8.count
        if byteCount == 0 {
            throw .invalidName("The pasteboard name is empty; \(rule).")
        }
        if byteCount > maximumByteCount {
            throw .invalidName(
                "The pasteboard name \(MessageText.quoted(name)) is \(byteCount) bytes long; \(rule).")
        }
        // Byte by byte (every name of every call passes here): C0 controls and DEL are single
        // bytes, C1 controls (U+0080–U+009F) are 0xC2 followed by 0x80–0x9F.
        var previous: UInt8 = 0
        var mayHoldNoncharacters = false
        for (offset, byte) in name.utf8.enumerated() {
            let isC0 = byte < 0x20 || byte == 0x7F
            let isC1 = previous == 0xC2 && (0x80...0x9F).contains(byte)
            if isC0 || isC1 {
                throw .invalidName(
                    "The pasteboard name \(MessageText.quoted(name)) contains the control character "
                        + "\(MessageText.codePoint(UInt32(byte))) at byte \(isC0 ? offset : offset - 1); \(rule).")
            }
            // Noncharacters are U+FDD0–U+FDEF and the last two of each plane: their UTF-8 starts
            // with 0xEF or a four-byte lead.
            mayHoldNoncharacters = mayHoldNoncharacters || byte >= 0xEF
            previous = byte
        }
        if mayHoldNoncharacters, let scalar = name.unicodeScalars.first(where: isNoncharacter) {
            throw .invalidName(
                "The pasteboard name \(MessageText.quoted(name)) contains the Unicode noncharacter \(MessageText.codePoint(scalar.value)), "
                    + "which D-Bus clients built on systemd's sd-bus cannot read: listed, it would fail ListPasteboards for all of them; \(rule).")
        }
    }

    /// Whether `scalar` is one of Unicode's 66 noncharacters (U+FDD0–U+FDEF, U+nFFFE, U+nFFFF):
    /// the D-Bus specification allows them since 0.21, but sd-bus, which follows the older rule,
    /// refuses a whole message that holds one.
    private static func isNoncharacter(_ scalar: Unicode.Scalar) -> Bool {
        (0xFDD0...0xFDEF).contains(scalar.value) || scalar.value & 0xFFFE == 0xFFFE
    }
}

// MARK: - Standard names

extension PasteboardName {
    /// The default pasteboard, for copy and paste.
    public static let general = PasteboardName(standard: "general")
    /// The text of the last search, shared between applications (NSPasteboard `.find`).
    public static let find = PasteboardName(standard: "find")
    /// The data of a drag in progress (NSPasteboard `.drag`).
    public static let drag = PasteboardName(standard: "drag")
    /// Copied font attributes (NSPasteboard `.font`).
    public static let font = PasteboardName(standard: "font")
    /// Copied paragraph attributes (NSPasteboard `.ruler`).
    public static let ruler = PasteboardName(standard: "ruler")

    /// The standard names, `general` first.
    public static let standardNames: [PasteboardName] = [.general, .find, .drag, .font, .ruler]

    /// Whether this is one of ``standardNames``.
    public var isStandard: Bool {
        Self.standardNames.contains(self)
    }
}

// MARK: - Codable

extension PasteboardName: Codable {
    /// Decodes a name from a single string, validating it as ``init(validating:)`` does.
    public init(from decoder: any Decoder) throws {
        let container = try decoder.singleValueContainer()
        try self.init(validating: container.decode(String.self))
    }

    /// Encodes the name as a single string.
    public func encode(to encoder: any Encoder) throws {
        var container = encoder.singleValueContainer()
        try container.encode(rawValue)
    }
}
