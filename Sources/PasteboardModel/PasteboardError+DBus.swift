/// The D-Bus spelling of error codes.
///
/// The model knows nothing of D-Bus connections, but the error *names* are part of the
/// contract, and keeping the mapping next to the codes means server and client cannot
/// disagree about it.
extension PasteboardError.Code {
    /// The prefix shared by every pasteboard error name on the bus.
    public static let dbusErrorPrefix = "org.pasteboardd.Error."

    /// The D-Bus error name for this code, such as `org.pasteboardd.Error.InvalidType`.
    public var dbusErrorName: String {
        Self.dbusErrorPrefix + rawValue
    }

    /// Reads a code back from a D-Bus error name.
    ///
    /// ```swift
    /// PasteboardError.Code(dbusErrorName: "org.pasteboardd.Error.Stale")  // .stale
    /// PasteboardError.Code(dbusErrorName: "org.freedesktop.DBus.Error.Failed")  // nil
    /// ```
    ///
    /// - Parameter dbusErrorName: A full D-Bus error name.
    /// - Returns: The code, or `nil` when the name is not one of the pasteboard's errors.
    public init?(dbusErrorName: String) {
        guard dbusErrorName.hasPrefix(Self.dbusErrorPrefix) else { return nil }
        self.init(rawValue: String(dbusErrorName.dropFirst(Self.dbusErrorPrefix.count)))
    }
}

extension PasteboardError {
    /// The D-Bus error name of this error's code.
    public var dbusErrorName: String {
        code.dbusErrorName
    }

    /// Rebuilds an error received over D-Bus.
    ///
    /// - Parameters:
    ///   - dbusErrorName: The error name of the reply.
    ///   - message: The error message of the reply.
    /// - Returns: The error, or `nil` when the name is not one of the pasteboard's errors
    ///   (a bus or transport failure, which the caller reports in its own way).
    public init?(dbusErrorName: String, message: String) {
        guard let code = Code(dbusErrorName: dbusErrorName) else { return nil }
        self.init(code, message)
    }
}
