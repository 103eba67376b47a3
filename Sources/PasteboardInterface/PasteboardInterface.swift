import DBus
import PasteboardModel

#if canImport(Glibc)
import Glibc
#endif

/// The values of `org.pasteboardd.Pasteboard1` that every client encodes and decodes the same
/// way: its names, the write options, the `Items` descriptions, the contract's errors.
///
/// Shared by the `Pasteboard` library and `pbctl`. It needs neither Foundation nor anything
/// of either, so `pbctl` can stay a small static program and still speak exactly as the library
/// does.
public enum PasteboardInterface {
    /// The server's well-known bus name.
    public static let busName = "org.pasteboardd.Pasteboard1"
    /// The path of the server's object.
    public static let objectPath = "/org/pasteboardd/Pasteboard1"
    /// The interface of the server's methods and signals.
    public static let name = "org.pasteboardd.Pasteboard1"

    /// A call of the interface's method `method`.
    public static func call(_ method: String, _ arguments: [DBusValue] = []) throws(DBusError) -> Message {
        try Message.methodCall(destination: busName, path: objectPath, interface: name, method: method, arguments: arguments)
    }

    /// The contract's error for `error`, or nil when the server did not answer (it is not on
    /// the bus, or the connection failed): the caller says that in its own words.
    public static func contractError(_ error: DBusError) -> PasteboardError? {
        PasteboardError(dbusErrorName: error.name, message: error.message)
    }

    /// Whether `error` means that no server owns the name on this bus.
    public static func meansNoServer(_ error: DBusError) -> Bool {
        error.name == DBusError.serviceUnknownName || error.name == DBusError.nameHasNoOwnerName
    }

    /// Why a call that was not answered failed, in words for people: that no server runs on
    /// this bus, or the bus's own message.
    ///
    /// - Parameter address: The bus the call went to. When it is not the session bus the
    ///   command that starts a server names it, so that following the hint starts one where it
    ///   was looked for.
    public static func unansweredReason(_ error: DBusError, onBus address: String) -> String {
        guard meansNoServer(error) else { return error.message }
        let start = address == Connection.sessionBusAddress() ? "pasteboardd &" : "pasteboardd --address \(shellQuoted(address)) &"
        return "pasteboardd is not running there; start it with `\(start)`"
    }

    /// `text` in single quotes for a POSIX shell, each `'` in it written `'\''`.
    public static func shellQuoted(_ text: String) -> String {
        "'" + text.split(separator: "'", omittingEmptySubsequences: false).joined(separator: "'\\''") + "'"
    }

    /// The descriptor of a `ReadFd` reply, as a new one the caller owns and must close; nil
    /// when the reply carries none.
    public static func receivedDescriptor(_ reply: [DBusValue]) throws(PasteboardError) -> Int32? {
        guard reply.count == 2, let descriptor = reply[1].fileDescriptorValue else { return nil }
        let fd = fcntl(descriptor.rawValue, F_DUPFD_CLOEXEC, 0)
        guard fd >= 0 else { throw PasteboardError.invalidArgument("out of file descriptors: \(String(cString: strerror(errno)))") }
        return fd
    }

    /// A copy of `fd` to send: marshalling takes the descriptor it is given, the caller keeps
    /// its own.
    public static func descriptor(sending fd: Int32) throws(PasteboardError) -> UnixFileDescriptor {
        let copy = fcntl(fd, F_DUPFD_CLOEXEC, 0)
        guard copy >= 0 else {
            throw PasteboardError.invalidArgument("descriptor \(fd) cannot be passed: \(String(cString: strerror(errno)))")
        }
        return UnixFileDescriptor(owning: copy)
    }
}
