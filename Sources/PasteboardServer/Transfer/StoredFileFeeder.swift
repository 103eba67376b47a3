import CDBus
import DBus
import Foundation
import PasteboardModel

/// Hands a `ReadFd` reader the data of a store file through a pipe, filled by a thread of its
/// own, instead of the file itself.
///
/// A descriptor of the store's own file let its reader change the stored data: the file is
/// read-only (0400), but its owner (the same user as the server) may `fchmod` it through the
/// descriptor and open it again for writing through `/proc/self/fd`, so that every later reader
/// got other bytes than `Items` says. A pipe gives the bytes and nothing else. (A memfd, which
/// holds the data that never goes to disk, is sealed against writing and still handed out as
/// it is.)
///
/// The pipe is filled with `splice`, which passes the file's cached pages without copying them:
/// the reader's `read` makes the one copy, as it did from the file. A spliced page stays the
/// file's, though, so the file must not change until the reader has read it: the feeder holds
/// the file open until the pipe is empty (a file someone holds is never reused:
/// ``SpareBlobFile``). A reader that stops reading keeps its feeder waiting, until it closes its
/// end; so each process may have `max-transfers` feeders at once, and all of them four times as
/// many (counted apart from `WriteItemsFd`'s transfers, which readers must not crowd out).
final class StoredFileFeeder: Sendable {
    /// The pipe's buffer when no wide pipe (``WidePipes``, 1 MiB) is free: 1 MiB took 64 MiB
    /// to a reader in half the time 256 KiB did (the feeder and the reader take turns once per
    /// pipeful, less often when the feeder looks before it sleeps: ``PipeRoom``). A refusal
    /// (the user's pipe allowance spent) leaves the pipe as the kernel made it.
    static let pipeSize: Int32 = 256 << 10

    /// Feeders at work, by the reader's process.
    private let slots: TransferSlots<TransferClient>

    /// - Parameter maxTransfers: `max-transfers`; feeders may be four times as many, a quarter
    ///   of them (as many as `max-transfers`) for one process: enough for `pbctl watch`, which
    ///   fetches the data of up to 32 changes ahead.
    init(maxTransfers: UInt64) {
        let (limit, overflow) = maxTransfers.multipliedReportingOverflow(by: 4)
        slots = TransferSlots(limit: overflow ? .max : limit)
    }

    /// The read end of a pipe that will carry the file of `blob` whole, then end.
    func pipe(for blob: Blob, reader: TransferClient) throws(PasteboardError) -> UnixFileDescriptor {
        try admit(reader)
        var ends: [Int32] = [-1, -1]
        let file = open(blob.path, O_RDONLY | O_CLOEXEC)
        guard file >= 0, pipe2(&ends, O_CLOEXEC) == 0 else {
            let code = errno
            if file >= 0 { close(file) }
            release(reader)
            throw DescriptorSource.unavailable(code)
        }
        let wide = WidePipes.readers.widen(ends[1], otherwise: Self.pipeSize)
        let (input, size) = (ends[1], blob.size)
        Thread.detachNewThread { [self] in
            defer {
                close(file)
                close(input)
                if wide { WidePipes.readers.giveBack() }
                release(reader)
            }
            Self.feed(file, size: size, into: input)
        }
        return UnixFileDescriptor(owning: ends[0])
    }

    /// Splices the file into the pipe (copies it where the file system cannot splice), then
    /// waits until the reader has taken everything, so that no page of the file is still in the
    /// pipe when the feeder lets go of the file. Stops when the reader closes its end (the write
    /// fails), or when the file cannot be read. Runs on a thread of its own, in which it blocks
    /// SIGPIPE: a reader's leaving is an `EPIPE` here, whatever the process does with the signal.
    static func feed(_ file: Int32, size: UInt64, into pipe: Int32) {
        var signals = sigset_t()
        sigemptyset(&signals)
        sigaddset(&signals, SIGPIPE)
        pthread_sigmask(SIG_BLOCK, &signals, nil)
        var offset: Int64 = 0
        // Set once the file system refuses to splice: the rest is copied through it.
        var buffer: [UInt8]? = nil
        var room = PipeRoom(pipe)
        while UInt64(offset) < size {
            let left = Int(min(size - UInt64(offset), 1 << 20))
            if buffer == nil {
                let moved = splice(file, &offset, pipe, nil, left, cdbus_SPLICE_F_NONBLOCK)
                if moved > 0 {
                    room.wrote()
                    continue
                }
                if moved < 0, errno == EINTR { continue }
                if moved < 0, errno == EAGAIN {
                    guard room.wait() else { return }
                    continue
                }
                guard moved < 0, errno == EINVAL || errno == ENOSYS else { return }
                buffer = [UInt8](repeating: 0, count: 64 << 10)
            }
            guard copy(file, at: &offset, count: left, into: pipe, through: &buffer!) else { return }
        }
        waitUntilRead(pipe)
    }

    /// Copies up to `count` bytes of the file at `offset` into the pipe; false when the file
    /// cannot be read there or the reader is gone.
    private static func copy(_ file: Int32, at offset: inout Int64, count: Int, into pipe: Int32, through buffer: inout [UInt8]) -> Bool {
        let read = buffer.withUnsafeMutableBytes { pread(file, $0.baseAddress, min($0.count, count), off_t(offset)) }
        if read < 0, errno == EINTR { return true }
        guard read > 0, UnixFileDescriptor.writeAll(pipe, buffer[..<read]) == 0 else { return false }
        offset += Int64(read)
        return true
    }

    /// Waits until the pipe is empty or its reader gone. A spliced page is the file's own, not
    /// a copy: while one waits in the pipe, the file must stay open, which keeps it from being
    /// reused (``SpareBlobFile`` overwrites only a file nobody holds). The reader may resize its
    /// end of the pipe, so what is left is measured (`FIONREAD`), not inferred from the pipe's
    /// size.
    private static func waitUntilRead(_ pipe: Int32) {
        // A reader at speed takes the last pipeful in well under 100 µs: looked for first
        // (``PipeRoom``), so that it sees the end as soon as it has read everything.
        if PipeRoom.waitUntilEmpty(pipe, within: PipeRoom.lookLimit * 2) { return }
        var looks = 0
        while true {
            var unread: Int32 = 0
            guard cdbus_ioctl_int_pointer(pipe, cdbus_FIONREAD, &unread) == 0, unread > 0 else { return }
            // The reader sees the end only once the feeder closes the pipe: looked at every
            // 100 µs while it reads the last pipeful (a mebibyte takes it about 200 µs), then
            // every 5 ms, slowing to every 100 ms for one that stopped reading. No event says
            // "drained"; the reader leaving does (POLLERR), at once.
            looks += 1
            var probe = pollfd(fd: pipe, events: 0, revents: 0)
            if looks <= 200 {
                usleep(100)
                guard poll(&probe, 1, 0) <= 0 || probe.revents & Int16(POLLERR | POLLHUP) == 0 else { return }
            } else if poll(&probe, 1, Int32(min(100, 5 * (1 + (looks - 200) / 20)))) > 0, probe.revents & Int16(POLLERR | POLLHUP) != 0 {
                return
            }
        }
    }

    /// Waits until no reader is being fed, at most `limit`.
    func waitUntilDone(within limit: Duration) async {
        let deadline = ContinuousClock.now + limit
        while slots.inUse > 0, ContinuousClock.now < deadline {
            try? await Task.sleep(for: .milliseconds(20))
        }
    }

    private func admit(_ reader: TransferClient) throws(PasteboardError) {
        do throws(TransferSlots<TransferClient>.Refusal) {
            try slots.take(for: reader)
        } catch {
            switch error {
            case .holderFull(let most):
                throw .quotaExceeded("this process is being sent \(most) large data through ReadFd already, the most one process may (max-transfers); read or close those first")
            case .allTaken(let limit):
                throw .quotaExceeded("\(limit) ReadFd readers are being sent large data already (four times max-transfers); try again when one has finished")
            }
        }
    }

    private func release(_ reader: TransferClient) {
        slots.release(reader)
    }
}
