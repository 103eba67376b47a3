import CDBus

#if canImport(Glibc)
import Glibc
#endif

/// Waits for room in a pipe a feeder fills, looking for a moment before it sleeps while the
/// reader keeps pace.
///
/// The kernel wakes a pipe's sleeping writer only at the end of a read that found the pipe
/// full. A reader that takes a pipeful at a time (1 MiB reads of a 1 MiB pipe, as `pbctl`, the
/// Swift library and most programs read) therefore empties the pipe before the feeder wakes,
/// then sleeps until the feeder has filled it again: the two take turns, each idle while the
/// other works. A feeder that looks at the pipe instead of sleeping refills it while the
/// reader's read is still copying out of it, and the next read finds it full. Measured on two
/// processors, 64 MiB from a file's cached pages: 4.8–4.9 ms sleeping, 2.9–3.0 ms looking for
/// up to 50 µs (the time a reader takes to copy out 1 MiB), 2.3–2.5 ms read from the file
/// itself; 1 GiB in 75–160 ms and 47 ms.
///
/// Looking costs a processor while it lasts, so it lasts at most ``lookLimit``, and it is
/// worth it only while the reader keeps pace. A reader that does other work between its reads
/// (`pbctl paste` writing each piece to a file, say) makes looks fail: after each failure in a
/// row the feeder sleeps through twice as many waits before it looks again (1, 3, 7, up to 63),
/// so that such a reader costs it a look in 64 waits at most; a look that finds room starts
/// over. A look measures bytes (`FIONREAD`) where the kernel counts a pipe's room in pages, so
/// a look that found room followed by no write at all (the reader left part of a page in a
/// pipe it shrank to a page, say) means sleeping next time, never looking again and again.
struct PipeRoom {
    /// How long one look lasts at most.
    static let lookLimit: Duration = .microseconds(50)
    /// The room worth waking for: a splice of a few pages costs about what one of many does.
    static let wanted: Int32 = 64 << 10
    /// The most waits slept through between two looks.
    static let mostWaitsWithoutLooking = 63

    private let pipe: Int32
    /// Whether the last wait ended in a look, with nothing written since.
    private var lookedLast = false
    /// Looks in a row that found no room.
    private var failedLooks = 0
    /// Waits left to sleep through before the next look.
    private var waitsBeforeLook = 0

    init(_ pipe: Int32) {
        self.pipe = pipe
    }

    /// The feeder wrote into the pipe.
    mutating func wrote() {
        lookedLast = false
    }

    /// Waits until the pipe has room, or its reader has gone (the next write says which);
    /// false if waiting failed.
    mutating func wait() -> Bool {
        if waitsBeforeLook > 0 {
            waitsBeforeLook -= 1
        } else if !lookedLast {
            if look() {
                failedLooks = 0
                lookedLast = true
                return true
            }
            failedLooks += 1
            waitsBeforeLook = min(Self.mostWaitsWithoutLooking, (1 << min(failedLooks, 6)) - 1)
        }
        lookedLast = false
        var probe = pollfd(fd: pipe, events: Int16(POLLOUT), revents: 0)
        while poll(&probe, 1, -1) < 0 {
            guard errno == EINTR else { return false }
        }
        return true
    }

    /// Looks at what the pipe holds until `wanted` of it is free, for at most ``lookLimit``.
    private func look() -> Bool {
        let capacity = cdbus_fcntl_int(pipe, cdbus_F_GETPIPE_SZ, 0)
        guard capacity > 0 else { return false }
        let most = capacity - min(Self.wanted, capacity / 2)
        let deadline = ContinuousClock.now + Self.lookLimit
        repeat {
            var unread: Int32 = 0
            guard cdbus_ioctl_int_pointer(pipe, cdbus_FIONREAD, &unread) == 0 else { return false }
            if unread <= most { return true }
        } while ContinuousClock.now < deadline
        return false
    }

    /// Looks at the pipe until it is empty, for at most `limit`: true once it is empty, or once
    /// `FIONREAD` fails (as the feeder's slower wait treats it), false if it still holds data.
    static func waitUntilEmpty(_ pipe: Int32, within limit: Duration) -> Bool {
        let deadline = ContinuousClock.now + limit
        repeat {
            var unread: Int32 = 0
            guard cdbus_ioctl_int_pointer(pipe, cdbus_FIONREAD, &unread) == 0, unread > 0 else { return true }
        } while ContinuousClock.now < deadline
        return false
    }
}
