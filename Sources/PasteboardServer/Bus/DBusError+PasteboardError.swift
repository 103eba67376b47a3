import DBus
import PasteboardModel

extension DBusError {
    /// The error reply for `error`: its contract name (`org.pasteboardd.Error.…`) and message.
    init(_ error: PasteboardError) {
        self.init(name: error.code.dbusErrorName, message: error.message)
    }
}
