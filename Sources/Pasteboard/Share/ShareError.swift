import Foundation

/// Why a ``ShareLink`` could not share, with a message that says what to do.
///
/// ```swift
/// do {
///     try await link.share()
/// } catch let error as ShareError where error.code == .portalMissing {
///     print(error.message)   // names the packages to install
/// }
/// ```
///
/// Sharing never changes a pasteboard, so a failed share has changed nothing stored.
public struct ShareError: Error, Sendable, Equatable, CustomStringConvertible {
    /// The kind of failure. New codes may be added; switch with a `default` case.
    public enum Code: String, Sendable, CaseIterable {
        /// The item offers nothing to share: every representation's `exportingCondition`
        /// refused it, or it only imports, or is visible to its own process only.
        case notShareable = "NotShareable"
        /// No desktop portal answers on the session bus, or the portal lacks the interface
        /// the destination needs (it has no backend providing it).
        case portalMissing = "PortalMissing"
        /// The portal answered with a failure, or the item could not be handed to it.
        case failed = "Failed"
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
}

extension ShareError: LocalizedError {
    /// The message for people.
    public var errorDescription: String? {
        message
    }
}
