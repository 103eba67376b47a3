import CDBus
import DBus

#if canImport(Glibc)
import Glibc
#endif

/// One way of moving bytes from a client's descriptor into a blob file.
///
/// Every method reads at the source's current offset and writes at the file's, advancing
/// both, as `read` and `write` do; so one method can take over from another midway, and a file
/// passed at a non-zero offset is read from there. For a file the kernel copies by itself,
/// sparing the server a copy of every byte through its own memory (and the buffer that copy
/// needs); each method falls back to the next when the kernel refuses it for the pair of
/// descriptors at hand, down to ``readWrite``, which works for anything.
///
/// A pipe is read with ``readWrite`` too: `splice` from a pipe into a file, measured, was two to
/// four times slower than reads into a buffer, the writer being woken for every few pages
/// taken; with a larger pipe buffer (``TransferSource/enlargePipeBuffer()``) reads win clearly.
enum CopyMethod: Equatable {
    /// `copy_file_range`: within one file system the kernel copies the data itself (or shares
    /// the blocks, where the file system can). Across file systems (a memfd into ext4) it
    /// fails with `EXDEV`.
    case copyFileRange
    /// Several threads splicing a range each (``ParallelFileCopy``), for a large file the
    /// kernel would not copy by itself: what is left of a small one, or one met while other
    /// transfers hold the helper threads, is refused here and left to ``sendfile``.
    case parallelSplice
    /// `sendfile`: the kernel copies a file's cached pages straight into the blob file's,
    /// across file systems.
    case sendfile
    /// `read` and `write` through a buffer of the server's: pipes, sockets, terminals, and
    /// whatever the kernel cannot copy by itself.
    case readWrite

    /// The method to try first for a source.
    init(for kind: TransferSource.Kind) {
        self = kind == .file ? .copyFileRange : .readWrite
    }

    /// What to use when this method is refused.
    var fallback: CopyMethod? {
        switch self {
        case .copyFileRange: .parallelSplice
        case .parallelSplice: .sendfile
        case .sendfile: .readWrite
        case .readWrite: nil
        }
    }

    /// The most one step moves. Kernel copies cost no memory of the server's, so they take
    /// large steps; ``readWrite`` moves one buffer at a time.
    var chunkSize: Int {
        switch self {
        case .readWrite: CopyBuffer.size
        // All that is left at once: the threads share out the whole file.
        case .parallelSplice: .max
        case .copyFileRange, .sendfile: 8 << 20
        }
    }

    /// What one step did.
    enum Step: Equatable {
        /// Moved this many bytes (more than zero).
        case moved(Int)
        /// The source has no more data.
        case end
        /// Nothing to read yet from a non-blocking source: wait, then try again.
        case wouldBlock
        /// Not this way between these descriptors (the kernel cannot; or, for
        /// ``parallelSplice``, the rest is not worth sharing out, or no helper thread is free):
        /// use ``fallback``. Nothing was moved.
        case refused
        /// Reading the source failed (an `errno`).
        case readFailed(Int32)
        /// Writing the blob file failed (an `errno`).
        case writeFailed(Int32)
    }

    /// Moves up to `count` bytes from `source` into `destination`.
    func step(from source: Int32, to destination: Int32, count: Int, buffer: inout CopyBuffer?) -> Step {
        while true {
            let moved: Int
            switch self {
            case .copyFileRange:
                moved = copy_file_range(source, nil, destination, nil, count, 0)
            case .parallelSplice:
                return ParallelFileCopy.step(from: source, to: destination, atMost: count)
            case .sendfile:
                moved = Glibc.sendfile(destination, source, nil, count)
            case .readWrite:
                if buffer == nil { buffer = CopyBuffer() }
                return buffer!.copy(from: source, to: destination, count: count)
            }
            if moved > 0 { return .moved(moved) }
            if moved == 0 { return .end }
            switch errno {
            case EINTR: continue
            case EAGAIN: return .wouldBlock
            // Clearly the blob file's side: no other method would do better.
            case ENOSPC, EDQUOT, EFBIG: return .writeFailed(errno)
            // Anything else (EXDEV, EINVAL, EOPNOTSUPP, ENOSYS, an I/O error on either side):
            // the next method tries, and read/write at last tells which side failed.
            default: return .refused
            }
        }
    }
}

/// The buffer of ``CopyMethod/readWrite``, allocated only when a transfer needs it.
final class CopyBuffer {
    static let size = 1 << 20
    private let bytes = UnsafeMutableRawPointer.allocate(byteCount: CopyBuffer.size, alignment: 16)

    deinit {
        bytes.deallocate()
    }

    /// Reads up to `count` bytes (at most one buffer) from `source` and writes all of them to
    /// `destination`.
    func copy(from source: Int32, to destination: Int32, count: Int) -> CopyMethod.Step {
        var read: Int
        repeat {
            read = Glibc.read(source, bytes, min(count, Self.size))
        } while read < 0 && errno == EINTR
        if read < 0 { return errno == EAGAIN ? .wouldBlock : .readFailed(errno) }
        if read == 0 { return .end }
        let failure = UnixFileDescriptor.writeAll(destination, UnsafeRawBufferPointer(start: bytes, count: read))
        return failure == 0 ? .moved(read) : .writeFailed(failure)
    }
}
