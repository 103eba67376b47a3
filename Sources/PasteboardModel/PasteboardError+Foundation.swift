import Foundation

/// So that `error.localizedDescription`, which tools print without knowing the error's type,
/// shows the message rather than Foundation's generic "The operation could not be completed".
extension PasteboardError: LocalizedError {
    /// The message for people.
    public var errorDescription: String? {
        message
    }
}
