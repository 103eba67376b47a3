import CDBus
#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#endif

/// A file descriptor this process owns, closed when the last reference goes away.
///
/// D-Bus passes descriptors by duplicating them: libdbus dups every descriptor appended to a
/// message (the sender keeps its own), and every descriptor read from a message is a new one
/// the reader must close. Wrapping each in one owning object makes leaks and double closes
/// impossible, whichever thread ends up holding it.
public final class UnixFileDescriptor: Sendable, CustomStringConvertible {
    /// The descriptor number, valid while this object lives.
    public let rawValue: Int32

    /// Takes ownership of `rawValue`: it is closed when this object is released.
    public init(owning rawValue: Int32) {
        self.rawValue = rawValue
    }

    deinit {
        if rawValue >= 0 { close(rawValue) }
    }

    /// A new descriptor for the same open file (same offset), owned by the caller.
    public func duplicate() throws(SystemCallError) -> UnixFileDescriptor {
        let copy = fcntl(rawValue, F_DUPFD_CLOEXEC, 0)
        guard copy >= 0 else { throw SystemCallError("dup") }
        return UnixFileDescriptor(owning: copy)
    }

    public var description: String { "fd \(rawValue)" }
}

/// A failed system call, with the errno it left.
public struct SystemCallError: Error, Sendable, CustomStringConvertible, Equatable {
    public let call: String
    public let errno: Int32

    public init(_ call: String, errno: Int32 = Glibc.errno) {
        self.call = call
        self.errno = errno
    }

    public var description: String {
        "\(call): \(String(cString: strerror(errno)))"
    }
}

extension UnixFileDescriptor {
    /// A new anonymous in-memory file (memfd), the cheapest thing to pass data through by
    /// descriptor: the receiver reads it at memory speed and no path ever exists.
    public static func memoryFile(name: String) throws(SystemCallError) -> UnixFileDescriptor {
        let fd = memfd_create(name, cdbus_MFD_CLOEXEC | cdbus_MFD_ALLOW_SEALING)
        guard fd >= 0 else { throw SystemCallError("memfd_create") }
        return UnixFileDescriptor(owning: fd)
    }
}
