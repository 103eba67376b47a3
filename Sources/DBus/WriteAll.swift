import CDBus

#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#endif

extension UnixFileDescriptor {
    /// Writes every byte of `bytes` to `fd`: one `write` may take only part of them (a pipe or
    /// socket that fills up, a signal arriving), so this goes on from where each left off.
    /// Returns 0 once all are written, else the `errno` that stopped it (`EIO` for a write
    /// that took nothing, which would otherwise loop forever). The loop the project's writers
    /// of whole buffers share (the model's, below this module, keeps one of its own).
    ///
    /// A socket is written with `send(MSG_NOSIGNAL)` when `socket` is true: a peer that left
    /// then gives `EPIPE` instead of a `SIGPIPE` to a process that never chose to ignore it
    /// (a library's client).
    public static func writeAll(_ fd: Int32, _ bytes: UnsafeRawBufferPointer, socket: Bool = false) -> Int32 {
        var offset = 0
        while offset < bytes.count {
            let pending = bytes.baseAddress! + offset, count = bytes.count - offset
            let written = socket ? send(fd, pending, count, Int32(MSG_NOSIGNAL)) : write(fd, pending, count)
            if written < 0 {
                if errno == EINTR { continue }
                return errno
            }
            guard written > 0 else { return EIO }
            offset += written
        }
        return 0
    }

    /// The same, for bytes in an array.
    public static func writeAll(_ fd: Int32, _ bytes: ArraySlice<UInt8>, socket: Bool = false) -> Int32 {
        bytes.withUnsafeBytes { writeAll(fd, $0, socket: socket) }
    }
}
