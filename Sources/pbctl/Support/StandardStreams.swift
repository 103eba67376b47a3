#if canImport(Glibc)
import Glibc
#endif

/// Standard input, output and error as pbctl found them.
///
/// A descriptor among 0, 1 and 2 that was closed when pbctl started would be the next one
/// opened: the bus socket would become "stdin" or "stdout", and `pbctl paste >&-` would write
/// the data into the bus. So each closed one is opened on /dev/null first, and remembered:
/// reading a closed stdin or writing a closed stdout fails as it should.
enum StandardStreams {
    /// Which of 0, 1 and 2 were closed at start, set once by ``reserve()`` before anything else
    /// runs.
    nonisolated(unsafe) private(set) static var closed: Set<Int32> = []

    /// Opens /dev/null on each of 0, 1 and 2 that is closed (in order, so `open` takes the
    /// lowest free number: the closed one).
    static func reserve() {
        for fd: Int32 in 0...2 where fcntl(fd, F_GETFD) < 0 && errno == EBADF {
            _ = open("/dev/null", O_RDWR)
            closed.insert(fd)
        }
    }

    static var stdinIsClosed: Bool { closed.contains(0) }
    static var stdoutIsClosed: Bool { closed.contains(1) }
}
