import CDBus
import DBus
import Foundation
import Synchronization

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
    /// How much is read and written at a time (a pipe holds 64 KiB unless its reader widened it).
    static let chunkSize = 256 << 10
    /// How long a reader may take no data before the copy ends (as X11's `INCR` answers do).
    static let idleTimeoutMilliseconds: Int32 = 30_000
    /// The most requests of one connection served at once. Each holds a thread and a buffer
    /// until its reader has read everything or gone silent for ``idleTimeoutMilliseconds``:
    /// without a bound, an app asking again and again without reading would take threads and
    /// memory without end. A request past the bound gets an empty answer at once (its pipe is
    /// closed).
    static let maxConcurrentCopies = 64

    /// The requests one connection is serving, counted against ``maxConcurrentCopies``.
    final class Places: Sendable {
        private let taken = Atomic<Int>(0)
        /// How long each of their readers may take no data (``idleTimeoutMilliseconds``
        /// unless the connection was given another).
        let idleTimeoutMilliseconds: Int32

        init(idleTimeoutMilliseconds: Int32 = OfferServing.idleTimeoutMilliseconds) {
            // 0 would end a copy whose reader is not already waiting; below, never end one.
            precondition(idleTimeoutMilliseconds > 0, "an idle timeout is a positive number of milliseconds")
            self.idleTimeoutMilliseconds = idleTimeoutMilliseconds
        }

        /// Takes a place; false, taking none, when all are taken.
        func take() -> Bool {
            guard taken.add(1, ordering: .relaxed).newValue <= OfferServing.maxConcurrentCopies else {
                taken.subtract(1, ordering: .relaxed)
                return false
            }
            return true
        }

        func give() {
            taken.subtract(1, ordering: .relaxed)
        }
    }

    /// Serves `type` of `offer` into `target`, which is closed when done or when anything
    /// fails (the requesting app then sees a short or empty read), in one of `places`.
    static func serve(_ offer: DesktopOffer, type: String, into target: UnixFileDescriptor, places: Places) {
        guard places.take() else { return }
        Task.detached {
            guard let data = try? await offer.open(type) else {
                places.give()
                return
            }
            Thread.detachNewThread {
                copy(from: data, to: target, idleTimeoutMilliseconds: places.idleTimeoutMilliseconds)
                places.give()
            }
        }
    }

    /// Copies `source` from where it stands to its end into `target`. A reader that leaves
    /// early (EPIPE) just ends the copy, and so does one that reads nothing for
    /// `idleTimeoutMilliseconds`, or a source (a pipe) that gives nothing for as long.
    ///
    /// The pipe is made non-blocking: `poll` says a pipe is writable when a page of it is free,
    /// and a blocking write of more would then wait for the reader, past any timeout.
    static func copy(from source: UnixFileDescriptor, to target: UnixFileDescriptor, idleTimeoutMilliseconds: Int32 = idleTimeoutMilliseconds) {
        // A write to a pipe whose reader has gone raises SIGPIPE in the writing thread, which
        // would end the process: blocked here, the write fails with EPIPE instead.
        var pipeSignal = sigset_t()
        sigemptyset(&pipeSignal)
        sigaddset(&pipeSignal, SIGPIPE)
        pthread_sigmask(SIG_BLOCK, &pipeSignal, nil)
        let flags = cdbus_fcntl(target.rawValue, F_GETFL)
        if flags >= 0, flags & O_NONBLOCK == 0 {
            _ = cdbus_fcntl_int(target.rawValue, F_SETFL, flags | O_NONBLOCK)
        }

        let buffer = UnsafeMutableRawPointer.allocate(byteCount: chunkSize, alignment: 16)
        defer { buffer.deallocate() }
        while true {
            var readable = pollfd(fd: source.rawValue, events: Int16(POLLIN), revents: 0)
            var ready: Int32
            repeat { ready = poll(&readable, 1, idleTimeoutMilliseconds) } while ready < 0 && errno == EINTR
            guard ready > 0 else { return }
            let count = read(source.rawValue, buffer, chunkSize)
            if count < 0, errno == EINTR { continue }
            guard count > 0 else { return }
            var written = 0
            while written < count {
                let result = write(target.rawValue, buffer + written, count - written)
                if result > 0 {
                    written += result
                    continue
                }
                guard result < 0, errno == EINTR || errno == EAGAIN else { return }
                if errno == EINTR { continue }
                // Full: wait for the reader, but not for ever.
                var ready = pollfd(fd: target.rawValue, events: Int16(POLLOUT), revents: 0)
                var polled: Int32
                repeat { polled = poll(&ready, 1, idleTimeoutMilliseconds) } while polled < 0 && errno == EINTR
                guard polled > 0 else { return }
            }
        }
    }
}
