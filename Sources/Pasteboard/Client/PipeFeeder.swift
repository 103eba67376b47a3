import CDBus
import DBus
import Foundation

#if canImport(Glibc)
import Glibc
#endif

/// Streams bytes already in memory to the server through a pipe, written by a thread of its
/// own while the server reads the other end.
///
/// A memfd would first need a second copy of the data, in as much fresh memory as the data
/// itself (a 1 GiB `Data` would briefly take 2 GiB), and the server could start only once it
/// was complete. Through a pipe the client never holds the bytes twice, and the client's
/// writes and the server's copy run at once.
enum PipeFeeder {
    /// The read end of a pipe that `data` is being written into, for the caller to pass on and
    /// close; the writer closes its end when done, which ends the data for the server.
    ///
    /// The writer ends early, without harm, when nobody reads any more: the server refused the
    /// data (too large, a bad name), or the call never left and the caller closed the read
    /// end. That ending must be an `EPIPE`, never a SIGPIPE that kills the app: libdbus
    /// ignores SIGPIPE in a process once it opens a connection, unless the app told it not to
    /// (`dbus_connection_set_change_sigpipe`) or set its own handler since, so the writer's
    /// thread blocks the signal itself.
    ///
    /// `finished` runs on the writer's thread once it has closed its end.
    static func readEnd(streaming data: Data, finished: (@Sendable () -> Void)? = nil) throws -> Int32 {
        var ends: [Int32] = [-1, -1]
        guard pipe2(&ends, O_CLOEXEC) == 0 else { throw POSIXError(POSIXErrorCode(rawValue: errno) ?? .EMFILE) }
        let (readEnd, writeEnd) = (ends[0], ends[1])
        let thread = Thread {
            _ = cdbus_name_this_thread("pasteboard-feed")
            var signals = sigset_t()
            sigemptyset(&signals)
            sigaddset(&signals, SIGPIPE)
            pthread_sigmask(SIG_BLOCK, &signals, nil)
            write(data, to: writeEnd)
            close(writeEnd)
            finished?()
        }
        thread.start()
        return readEnd
    }

    /// Writes all of `data` to `fd`, stopping at the first failure (the reader gone).
    private static func write(_ data: Data, to fd: Int32) {
        _ = data.withUnsafeBytes { UnixFileDescriptor.writeAll(fd, $0) }
    }
}
