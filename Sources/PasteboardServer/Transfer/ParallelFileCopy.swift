import CDBus
import Dispatch
import Foundation
import Synchronization

#if canImport(Glibc)
import Glibc
#endif

/// A large file copied into a blob file by several threads at once, each moving its own range
/// of it, where the kernel cannot copy the file by itself (`copy_file_range` refused across
/// file systems: a memfd into the store's).
///
/// One thread copies a memfd into ext4 at about 2.6 GB/s here, a copy bound by one CPU, while
/// the client waits for the reply and the machine's other cores are idle. Each thread splices
/// its range into a pipe of its own (which takes references to the source's pages, no copy)
/// and from the pipe into the blob file at the same offset (the one copy), so the ranges need
/// no buffer of the server's and no shared file offset. Measured with 64 MiB from a memfd:
/// 20 ms with `sendfile`, 13–17 ms with two threads on two cores.
///
/// A source that shrinks midway (its writer truncating it) leaves the copy at the end of the
/// first range that came short: everything before it is the file as it was, and nothing after
/// it is kept. A source that grows is read on by the caller from where this stopped.
enum ParallelFileCopy {
    /// Smaller files are copied by one thread: starting others would cost more than it saves.
    static let minimumSize: UInt64 = 16 << 20
    /// The least each thread moves.
    static let minimumPart: UInt64 = 8 << 20
    /// At most this many threads copy one file.
    static let maximumParts = 4

    enum Outcome: Equatable {
        /// This many bytes were copied, the source's and destination's offsets are past them;
        /// fewer than asked when the source shrank meanwhile.
        case copied(UInt64)
        /// The kernel cannot splice these descriptors: nothing was copied, and another method
        /// must.
        case refused
        /// Reading the source failed (an `errno`).
        case readFailed(Int32)
        /// Writing the blob file failed (an `errno`).
        case writeFailed(Int32)
    }

    /// How many threads to copy `size` bytes with, on `processors` processors: 1 when it is
    /// not worth more.
    static func parts(for size: UInt64, processors: Int = ProcessInfo.processInfo.activeProcessorCount) -> Int {
        guard size >= minimumSize else { return 1 }
        return max(1, min(processors, maximumParts, Int(clamping: size / minimumPart)))
    }

    /// Copies `count` bytes of `source` from its current offset into `destination` at its
    /// current offset, in `parts` ranges at once, and moves both offsets past what was copied.
    static func copy(from source: Int32, to destination: Int32, count: UInt64, parts: Int) -> Outcome {
        let sourceStart = lseek(source, 0, SEEK_CUR), destinationStart = lseek(destination, 0, SEEK_CUR)
        guard sourceStart >= 0, destinationStart >= 0, parts >= 1 else { return .refused }
        let share = count / UInt64(parts)
        let ranges = (0..<parts).map { index in
            let start = UInt64(index) * share
            return (start: start, length: index == parts - 1 ? count - start : share)
        }
        let outcomes = Mutex([RangeOutcome](repeating: .moved(0), count: parts))
        DispatchQueue.concurrentPerform(iterations: parts) { index in
            let range = ranges[index]
            let outcome = copyRange(
                from: source, at: Int64(sourceStart) + Int64(range.start), to: destination,
                at: Int64(destinationStart) + Int64(range.start), length: range.length)
            outcomes.withLock { $0[index] = outcome }
        }
        var copied: UInt64 = 0
        for (range, outcome) in zip(ranges, outcomes.withLock { $0 }) {
            switch outcome {
            case .writeFailed(let code): return .writeFailed(code)
            case .readFailed(let code): return .readFailed(code)
            case .refused:
                // Nothing of this range was copied; others may have been: undone, for the next
                // method to copy the whole.
                _ = ftruncate(destination, off_t(destinationStart))
                return .refused
            case .moved(let moved):
                copied += moved
                // The source shrank: what any later range found lies past the first gap.
                guard moved == range.length else {
                    _ = ftruncate(destination, off_t(destinationStart) + off_t(copied))
                    return finish(copied, source: source, from: sourceStart, destination: destination, from: destinationStart)
                }
            }
        }
        return finish(copied, source: source, from: sourceStart, destination: destination, from: destinationStart)
    }

    private static func finish(_ copied: UInt64, source: Int32, from sourceStart: off_t, destination: Int32, from destinationStart: off_t) -> Outcome {
        _ = lseek(source, sourceStart + off_t(copied), SEEK_SET)
        _ = lseek(destination, destinationStart + off_t(copied), SEEK_SET)
        return .copied(copied)
    }

    private enum RangeOutcome {
        case moved(UInt64)
        case refused
        case readFailed(Int32)
        case writeFailed(Int32)
    }

    /// Splices `length` bytes of `source` at `sourceOffset` into `destination` at
    /// `destinationOffset` through a pipe of its own; fewer when the source ends first.
    private static func copyRange(from source: Int32, at sourceOffset: Int64, to destination: Int32, at destinationOffset: Int64, length: UInt64) -> RangeOutcome {
        var ends: [Int32] = [-1, -1]
        guard pipe2(&ends, O_CLOEXEC) == 0 else { return .refused }
        defer { ends.forEach { close($0) } }
        // A wide pipe moves more pages per pair of calls; refused, the default works too.
        let pipeSize = max(Int(cdbus_fcntl_int(ends[1], cdbus_F_SETPIPE_SZ, 1 << 20)), Int(cdbus_fcntl(ends[1], cdbus_F_GETPIPE_SZ)), 4096)
        var readAt = sourceOffset, writeAt = destinationOffset
        var moved: UInt64 = 0
        while moved < length {
            let inPipe = splice(source, &readAt, ends[1], nil, min(pipeSize, Int(clamping: length - moved)), 0)
            if inPipe < 0 {
                if errno == EINTR { continue }
                // Only the first splice tells whether the kernel can at all.
                if moved == 0, [EINVAL, ENOSYS, EOPNOTSUPP, EBADF, ESPIPE].contains(errno) { return .refused }
                return .readFailed(errno)
            }
            if inPipe == 0 { break }
            var left = inPipe
            while left > 0 {
                let out = splice(ends[0], nil, destination, &writeAt, left, 0)
                if out < 0 {
                    if errno == EINTR { continue }
                    if moved == 0, [EINVAL, ENOSYS, EOPNOTSUPP, EBADF].contains(errno) { return .refused }
                    return .writeFailed(errno)
                }
                left -= out
            }
            moved += UInt64(inPipe)
        }
        return .moved(moved)
    }
}
