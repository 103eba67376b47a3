/// Why a type could not be declared, undeclared or found: a sentence that says what to do.
///
/// `pbctl types` turns ``kind`` into its exit status; the Swift bindings throw it as it is.
public struct TypeDeclarationError: Error, Sendable, Equatable, CustomStringConvertible {
    /// What went wrong, for a program to branch on.
    public enum Kind: Sendable, Equatable {
        /// A part of the declaration is malformed (an identifier, a MIME type, an extension).
        case invalid
        /// The declaration contradicts one already made (the identifier or the MIME type is
        /// taken by another type, or a parent would make a cycle).
        case conflict
        /// No declaration of that identifier exists where it was looked for.
        case notDeclared
        /// `update-mime-database` is missing or refused the package (nothing was changed).
        case unavailable
        /// A file could not be written or removed (a system folder without root, a full disk).
        case io
    }

    /// What went wrong.
    public let kind: Kind
    /// What was wrong and what to do instead.
    public let message: String

    public init(_ kind: Kind, _ message: String) {
        self.kind = kind
        self.message = message
    }

    public var description: String { message }

    static func invalid(_ message: String) -> Self { .init(.invalid, message) }
    static func conflict(_ message: String) -> Self { .init(.conflict, message) }
}
