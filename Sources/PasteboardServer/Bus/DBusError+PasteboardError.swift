import DBus
import PasteboardModel

/// Each error as the other: a pasteboard error as its reply on the bus, and back (for the
/// closures of an ``ArgumentReader``, which throw only `DBusError`s).
extension DBusError {
    /// The error reply for `error`: its contract name (`org.pasteboardd.Error.…`) and message.
    init(_ error: PasteboardError) {
        self.init(name: error.code.dbusErrorName, message: error.message)
    }
}

extension PasteboardError {
    /// The pasteboard error a reader's error stands for: one carried through it
    /// (``DBusError/carrying(_:)``), or a body of the wrong shape.
    init(_ error: DBusError) {
        self = PasteboardError(dbusErrorName: error.name, message: error.message) ?? .invalidArgument(error.message)
    }
}

extension DBusError {
    /// Runs `body` inside an ``ArgumentReader`` closure, which may throw only `DBusError`s: a
    /// pasteboard error travels as its error reply, and ``PasteboardError/init(_:)`` takes it
    /// back out.
    static func carrying<Result>(_ body: () throws(PasteboardError) -> Result) throws(DBusError) -> Result {
        do throws(PasteboardError) {
            return try body()
        } catch {
            throw DBusError(error)
        }
    }
}
