import Foundation

/// A failure to turn a value into data or data into a value, raised by this library's own
/// representations (your closures throw what they like).
///
/// ```swift
/// do {
///     _ = try await pasteboard.loadTransferable(type: URL.self)
/// } catch let error as TransferError where error.code == .undecodable {
///     print(error.message)
/// }
/// ```
public struct TransferError: Error, Sendable, Equatable, CustomStringConvertible {
    /// The kind of failure. New codes may be added; switch with a `default` case.
    public enum Code: String, Sendable, CaseIterable {
        /// The data is not valid for its type (a `text/uri-list` with no URL, say).
        case undecodable = "Undecodable"
        /// The value does not offer the representation asked for: an exporting condition is
        /// false, or the representation only imports.
        case notExportable = "NotExportable"
        /// The type has no representation that can read the data offered.
        case notImportable = "NotImportable"
    }

    /// What kind of failure this is.
    public let code: Code
    /// A sentence a person can act on.
    public let message: String

    /// Creates an error with a code and a message for people.
    public init(_ code: Code, _ message: String) {
        self.code = code
        self.message = message
    }

    /// The code's name followed by the message.
    public var description: String {
        "\(code.rawValue): \(message)"
    }

    static func undecodable(_ message: String) -> TransferError { .init(.undecodable, message) }
    static func notExportable(_ message: String) -> TransferError { .init(.notExportable, message) }
    static func notImportable(_ message: String) -> TransferError { .init(.notImportable, message) }
}

extension TransferError: LocalizedError {
    /// The message for people.
    public var errorDescription: String? {
        message
    }
}
