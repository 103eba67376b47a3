import CDBus
import DBus
import Foundation

#if canImport(Glibc)
import Glibc
#endif

/// Answers an app's request for data we own: opens the type through the ``DesktopOffer`` and
/// copies it into the pipe the compositor handed over.
///
/// Nothing of this runs on the display thread, which must keep dispatching: the opening runs
/// in a task, the copy on a thread of its own (it blocks on the reader for as long as the
/// reader takes, and must not hold a thread of the cooperative pool that long). The data is
/// streamed in chunks, so a large payload never sits in memory whole.
enum OfferServing {
    /// How much is read and written at a time.
    static let chunkSize = 1 << 20
    /// How long a reader may take no data before the copy ends (as X11's `INCR` answers do).
    static let idleTimeoutMilliseconds: Int32 = 30_000

    /// Serves `type` of `offer` into `target`, which is closed when done or when anything
    /// fails (the requesting app then sees a short or empty read).
    static func serve(_ offer: DesktopOffer, type: String, into target: UnixFileDescriptor) {
        Task.detached {
            guard let data = try? await offer.open(type) else { return }
            Thread.detachNewThread {
                copy(from: data, to: target)
            }
        }
    }

    /// Copies `source` from where it stands to its end into `target`. A reader that leaves
    /// early (EPIPE) just ends the copy.
    static func copy(from source: UnixFileDescriptor, to target: UnixFileDescriptor) {
        // A write to a pipe whose reader has gone raises SIGPIPE in the writing thread, which
        // would end the process: blocked here, the write fails with EPIPE instead.
        var pipeSignal = sigset_t()
        sigemptyset(&pipeSignal)
        sigaddset(&pipeSignal, SIGPIPE)
        pthread_sigmask(SIG_BLOCK, &pipeSignal, nil)
        // The requesting app made the pipe and may have made it non-blocking.
        let flags = cdbus_fcntl(target.rawValue, F_GETFL)
        if flags >= 0, flags & O_NONBLOCK != 0 {
            _ = cdbus_fcntl_int(target.rawValue, F_SETFL, flags & ~O_NONBLOCK)
        }

        let buffer = UnsafeMutableRawPointer.allocate(byteCount: chunkSize, alignment: 16)
        defer { buffer.deallocate() }
        while true {
            let count = read(source.rawValue, buffer, chunkSize)
            if count < 0, errno == EINTR { continue }
            guard count > 0 else { return }
            var written = 0
            while written < count {
                // A reader that neither reads nor closes is given up on, so that it cannot
                // hold a thread for ever.
                var ready = pollfd(fd: target.rawValue, events: Int16(POLLOUT), revents: 0)
                let polled = poll(&ready, 1, idleTimeoutMilliseconds)
                if polled < 0, errno == EINTR { continue }
                guard polled > 0 else { return }
                let result = write(target.rawValue, buffer + written, count - written)
                if result < 0, errno == EINTR || errno == EAGAIN { continue }
                guard result > 0 else { return }
                written += result
            }
        }
    }
}
