import CDBus
import DBus
import Dispatch

#if canImport(Glibc)
import Glibc
#endif

/// The copies a transfer through a pipe makes, made directly by this process with no D-Bus
/// and no server: what the machine allows for the same work.
///
/// The socketpair ceiling moves the bytes once, through buffers the kernel reuses. A pipe's
/// transfer through `WriteItemsFd` and `ReadFd` moves them three times: the client writes the
/// pipe, the bytes are read out of it into a file of the state directory, and they are read
/// back from that file. Made here the plainest way, in the same run, they tell what the
/// server costs from what the copies cost on this machine. As the server overwrites its spare
/// file (whose pages are cached), the rounds overwrite one file, made once: a new file each
/// round would need fresh memory, which on a virtual machine can cost more than the copies.
///
/// (A memfd's copy has no such plain way: `sendfile` from a memfd into a file, one thread,
/// is several times slower than the server's copy, which shares the file out among threads.
/// The memfd's figure is timed in steps instead.)
final class PlainCopy {
    /// The file the rounds overwrite: unnamed, in the state directory's file system.
    private let file: Int32
    private let buffer = UnsafeMutableRawPointer.allocate(byteCount: 1 << 20, alignment: 16)

    init(in directory: String) throws {
        file = open(directory, cdbus_O_TMPFILE | O_RDWR | O_CLOEXEC, 0o600)
        guard file >= 0 else { throw BenchError("open \(directory) (O_TMPFILE): \(String(cString: strerror(errno)))") }
    }

    deinit {
        close(file)
        buffer.deallocate()
    }

    /// Microseconds to write `size` bytes through a pipe from a thread of its own (its buffer
    /// widened as the server widens it), read them out in 1 MiB reads over the file from its
    /// start, and read the file back in 1 MiB reads.
    func copy(_ chunk: [UInt8], size: Int) throws -> Double {
        let start = monotonicNanoseconds()
        lseek(file, 0, SEEK_SET)
        var ends: [Int32] = [0, 0]
        guard pipe(&ends) == 0 else { throw BenchError("pipe: \(String(cString: strerror(errno)))") }
        defer { close(ends[0]) }
        _ = cdbus_fcntl_int(ends[0], cdbus_F_SETPIPE_SZ, 256 << 10)
        let writing = Measurements.writeInBackground(chunk, size: size, to: ends[1])
        var written = 0
        while true {
            let count = read(ends[0], buffer, 1 << 20)
            if count < 0, errno == EINTR { continue }
            guard count >= 0 else { throw BenchError("read: \(String(cString: strerror(errno)))") }
            if count == 0 { break }
            let failure = UnixFileDescriptor.writeAll(file, UnsafeRawBufferPointer(start: buffer, count: count))
            guard failure == 0 else { throw BenchError("write: \(String(cString: strerror(failure)))") }
            written += count
        }
        writing.wait()
        guard ftruncate(file, off_t(written)) == 0 else { throw BenchError("ftruncate: \(String(cString: strerror(errno)))") }

        lseek(file, 0, SEEK_SET)
        let total = try Measurements.readToEnd(file) { _ in }
        guard total == size else { throw BenchError("the plain copy read back \(total) bytes, not \(size)") }
        return Double(monotonicNanoseconds() - start) / 1_000
    }
}
