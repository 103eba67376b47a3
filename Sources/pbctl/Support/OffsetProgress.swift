import Synchronization

#if canImport(Glibc)
import Glibc
#endif

/// Progress of a regular file the server reads straight from the descriptor pbctl handed it.
///
/// The descriptor the server received shares its file offset with pbctl's own (one open file,
/// two descriptors), and the server reads at that offset, advancing it: so how far the offset
/// has moved is how much the server has read. A thread of its own looks every tenth of a second
/// while the call waits for its reply.
final class OffsetProgress: Sendable {
    private let fd: Int32
    private let start: off_t
    /// Whether ``finish(_:)`` has run; held while a line is printed, so that no update comes
    /// after the last line.
    private let finished = Mutex(false)
    private let progress: Progress

    /// Starts watching `fd` from offset `start`; nil when stderr is not a terminal.
    static func watching(_ fd: Int32, from start: off_t, verb: String) -> OffsetProgress? {
        guard let progress = Progress.onTerminal(verb) else { return nil }
        let watcher = OffsetProgress(fd: fd, start: start, progress: progress)
        // Without a thread there is no progress, and nothing else is lost.
        try? Threads.detach { watcher.watch() }
        return watcher
    }

    private init(fd: Int32, start: off_t, progress: Progress) {
        self.fd = fd
        self.start = start
        self.progress = progress
    }

    private func watch() {
        while true {
            usleep(100_000)
            let done = finished.withLock { finished -> Bool in
                guard !finished else { return true }
                let offset = lseek(fd, 0, SEEK_CUR)
                if offset > start { progress.update(UInt64(offset - start)) }
                return false
            }
            if done { return }
        }
    }

    /// Stops watching; prints the total of a copy large enough to show progress for, as a
    /// copy through a pipe does, however fast the server was.
    func finish(_ total: UInt64) {
        finished.withLock { finished in
            finished = true
            progress.update(total)
            progress.finish(total)
        }
    }

    /// Stops watching a copy that failed: the line shown so far is ended, with no total.
    func abandon() {
        finished.withLock { finished in
            finished = true
            progress.abandon()
        }
    }
}
