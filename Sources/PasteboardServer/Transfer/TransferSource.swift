import CDBus

#if canImport(Glibc)
import Glibc
#endif

/// A client's descriptor as `WriteItemsFd` finds it: what it reads from decides how its bytes
/// are moved into a blob file, whether the server must wait for them, and whether their end
/// proves that the writer finished.
struct TransferSource {
    enum Kind: Equatable {
        /// A regular file, a memfd included: every byte is already there, and the end is the
        /// file's size.
        case file
        /// A pipe or FIFO: bytes arrive when the writer sends them, and the end also comes
        /// when the writer dies halfway.
        case pipe
        /// Anything else (a socket, a terminal, a device): read like a pipe, with plain reads.
        case other
    }

    let fd: Int32
    let kind: Kind
    /// For a file, the bytes from its current offset (where reading starts, as `read` would)
    /// to its end, when the transfer began.
    let remaining: UInt64?

    init(_ fd: Int32) {
        self.fd = fd
        var info = stat()
        guard fstat(fd, &info) == 0 else {
            (kind, remaining) = (.other, nil)
            return
        }
        switch info.st_mode & S_IFMT {
        case S_IFREG:
            let offset = max(lseek(fd, 0, SEEK_CUR), 0)
            (kind, remaining) = (.file, UInt64(max(Int64(info.st_size) - Int64(offset), 0)))
        case S_IFIFO:
            (kind, remaining) = (.pipe, nil)
        default:
            (kind, remaining) = (.other, nil)
        }
    }

    /// Whether reading to the end proves the writer meant the data to end there: only a file's
    /// end does. A pipe or socket also ends when its writer dies, with the data cut short.
    var endIsFinal: Bool { kind == .file }

    /// Whether a read may find nothing yet: then the server waits for data before each read,
    /// at most the transfer idle timeout. A file never keeps a reader waiting.
    var mayStall: Bool { kind != .file }

    /// The pipe buffer size ``enlargePipeBuffer()`` asks for when no wide pipe is free.
    static let pipeBufferSize: Int32 = 256 << 10

    /// Widens a pipe's buffer (64 KiB by default) to 1 MiB (``WidePipes``) or, with many
    /// transfers at once, to ``pipeBufferSize``; never narrows it. True when it took one of the
    /// wide pipes, to give back (``WidePipes/giveBack()``) once the transfer is over.
    ///
    /// With 64 KiB the writer and the server take turns every 64 KiB, two wake-ups each time;
    /// with more both keep running, the writer filling while the server writes its file.
    /// Measured on two processors, 64 MiB from a writing thread into a cached file: 47–52 ms
    /// with 64 KiB, 17–19 ms with 256 KiB, 14–15 ms with 1 MiB, reading 1 MiB at a time. A
    /// refusal (the user's pipe allowance spent) leaves the pipe as it was. Only for data
    /// already known to be large: small writes never get here.
    func enlargePipeBuffer() -> Bool {
        guard kind == .pipe else { return false }
        return WidePipes.writers.widen(fd, otherwise: Self.pipeBufferSize)
    }
}
