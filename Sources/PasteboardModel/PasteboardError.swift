/// A failure of a pasteboard request, named by one of the contract's error codes.
///
/// Every failure a client can see carries one of the ``Code``s below. They map one-to-one to
/// the D-Bus error names `org.pasteboardd.Error.<Name>`, so the same value survives the trip
/// from server to client. The ``message`` is shown to people as it is, so it says what was
/// wrong and what to do instead.
///
/// ```swift
/// do {
///     _ = try PasteboardName(validating: "")
/// } catch let error where error.code == .invalidName {
///     print(error.message)  // "The pasteboard name is empty; …"
/// }
/// ```
///
/// New codes may be added; switch over ``Code`` with a `default` case.
public struct PasteboardError: Error, Sendable, Equatable, CustomStringConvertible {
    /// The kind of failure: what a program branches on.
    ///
    /// The raw value is the last component of the D-Bus error name.
    public enum Code: String, Sendable, CaseIterable {
        /// A pasteboard name is empty, longer than 255 bytes, or contains control characters.
        case invalidName = "InvalidName"
        /// A type is not 1–255 bytes of printable ASCII, or is a malformed MIME type.
        case invalidType = "InvalidType"
        /// Some other argument or option is malformed or out of range.
        case invalidArgument = "InvalidArgument"
        /// The pasteboard has no item at the index asked for.
        case noSuchItem = "NoSuchItem"
        /// The item offers nothing of the type asked for.
        case noSuchType = "NoSuchType"
        /// The pasteboard changed since the change count the reader expected.
        case stale = "Stale"
        /// A conditional write found a change count other than the one it required.
        case conflict = "Conflict"
        /// The data is larger than a limit allows, or than may travel inline.
        case tooLarge = "TooLarge"
        /// The write would exceed a limit on items, pasteboards or total bytes.
        case quotaExceeded = "QuotaExceeded"
        /// The data belongs to another process (`owner-only`).
        case accessDenied = "AccessDenied"
        /// The writer of promised data has left, failed, or did not answer in time.
        case providerFailed = "ProviderFailed"
    }

    /// What kind of failure this is.
    public let code: Code

    /// A sentence a person can act on: what was wrong and what to do instead.
    public let message: String

    /// Creates an error with a code and a message for people.
    ///
    /// - Parameters:
    ///   - code: The kind of failure.
    ///   - message: What was wrong and what to do instead, as one or two sentences.
    public init(_ code: Code, _ message: String) {
        self.code = code
        self.message = message
    }

    /// The code's name followed by the message, as in `InvalidType: The type is empty; …`.
    public var description: String {
        "\(code.rawValue): \(message)"
    }
}

// MARK: - One helper per code, so throwing sites read as sentences

extension PasteboardError {
    /// An ``Code/invalidName`` error with this message.
    public static func invalidName(_ message: String) -> PasteboardError { .init(.invalidName, message) }
    /// An ``Code/invalidType`` error with this message.
    public static func invalidType(_ message: String) -> PasteboardError { .init(.invalidType, message) }
    /// An ``Code/invalidArgument`` error with this message.
    public static func invalidArgument(_ message: String) -> PasteboardError { .init(.invalidArgument, message) }
    /// A ``Code/noSuchItem`` error with this message.
    public static func noSuchItem(_ message: String) -> PasteboardError { .init(.noSuchItem, message) }
    /// A ``Code/noSuchType`` error with this message.
    public static func noSuchType(_ message: String) -> PasteboardError { .init(.noSuchType, message) }
    /// A ``Code/stale`` error with this message.
    public static func stale(_ message: String) -> PasteboardError { .init(.stale, message) }
    /// A ``Code/conflict`` error with this message.
    public static func conflict(_ message: String) -> PasteboardError { .init(.conflict, message) }
    /// A ``Code/tooLarge`` error with this message.
    public static func tooLarge(_ message: String) -> PasteboardError { .init(.tooLarge, message) }
    /// A ``Code/quotaExceeded`` error with this message.
    public static func quotaExceeded(_ message: String) -> PasteboardError { .init(.quotaExceeded, message) }
    /// An ``Code/accessDenied`` error with this message.
    public static func accessDenied(_ message: String) -> PasteboardError { .init(.accessDenied, message) }
    /// A ``Code/providerFailed`` error with this message.
    public static func providerFailed(_ message: String) -> PasteboardError { .init(.providerFailed, message) }
}
