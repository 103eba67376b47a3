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
/// the file open meanwhile (a file someone holds is never reused: ``SpareBlobFile``), and
/// copies the last pipeful instead of splicing it, so that once it closes the file, the pipe
/// holds copies only. A reader that stops reading keeps its feeder waiting, until it closes its
/// end; so each connection may have a quarter of `max-transfers` feeders at once, and all
/// connections `max-transfers` (counted apart from `WriteItemsFd`'s transfers, which readers
/// must not crowd out).
final class StoredFileFeeder: Sendable {
    /// The pipe's buffer: 1 MiB (the most an unprivileged process may ask for by default) took
    /// 64 MiB to a reader in half the time 256 KiB did (the feeder and the reader take turns
    /// once per pipeful). The pages count against the user's pipe allowance
    /// (`pipe-user-pages-soft`, 64 MiB by default): a client holding its quarter of
    /// `max-transfers` feeders unread takes a quarter of it. A refusal leaves 64 KiB.
    static let pipeSize: Int32 = 1 << 20

    /// Feeders at work, by the reader's connection.
    private let slots: TransferSlots<String>

    init(limit: UInt64) {
        slots = TransferSlots(limit: limit)
    }

    /// The read end of a pipe that will carry the file of `blob` whole, then end.
    func pipe(for blob: Blob, reader sender: String) throws(PasteboardError) -> UnixFileDescriptor {
        try admit(sender)
        var ends: [Int32] = [-1, -1]
        let file = open(blob.path, O_RDONLY | O_CLOEXEC)
        guard file >= 0, pipe2(&ends, O_CLOEXEC) == 0 else {
            let code = errno
            if file >= 0 { close(file) }
            release(sender)
            throw DescriptorSource.unavailable(code)
        }
        _ = cdbus_fcntl_int(ends[1], cdbus_F_SETPIPE_SZ, Self.pipeSize)
        let (input, size) = (ends[1], blob.size)
        Thread.detachNewThread { [self] in
            defer {
                close(file)
                close(input)
                release(sender)
            }
            Self.feed(file, size: size, into: input)
        }
        return UnixFileDescriptor(owning: ends[0])
    }

    /// Splices the file into the pipe but for its last pipeful, which is copied. Stops when the
    /// reader closes its end (the write fails), or when the file cannot be read.
    static func feed(_ file: Int32, size: UInt64, into pipe: Int32) {
        let pipeSize = UInt64(max(cdbus_fcntl(pipe, cdbus_F_GETPIPE_SZ), 4096))
        let spliced = size > pipeSize ? size - pipeSize : 0
        var offset: Int64 = 0
        while UInt64(offset) < spliced {
            let moved = splice(file, &offset, pipe, nil, Int(min(spliced - UInt64(offset), pipeSize)), 0)
            if moved < 0, errno == EINTR { continue }
            guard moved > 0 else { return }
        }
        var buffer = [UInt8](repeating: 0, count: 64 << 10)
        while UInt64(offset) < size {
            let count = buffer.withUnsafeMutableBytes { pread(file, $0.baseAddress, min($0.count, Int(size - UInt64(offset))), off_t(offset)) }
            if count < 0, errno == EINTR { continue }
            guard count > 0, UnixFileDescriptor.writeAll(pipe, buffer[..<count]) == 0 else { return }
            offset += Int64(count)
        }
    }

    private func admit(_ sender: String) throws(PasteboardError) {
        do throws(TransferSlots<String>.Refusal) {
            try slots.take(for: sender)
        } catch {
            switch error {
            case .holderFull(let most):
                throw .quotaExceeded("this client is being sent \(most) large data through ReadFd already, the most one client may (a quarter of max-transfers); read or close those first")
            case .allTaken(let limit):
                throw .quotaExceeded("\(limit) ReadFd readers are being sent large data already (max-transfers); try again when one has finished")
            }
        }
    }

    private func release(_ sender: String) {
        slots.release(sender)
    }
}
