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
/// first range that came short: everything before it is the file as it was, and what later
/// ranges copied is not counted. The next step reads on from there (finding the end, or what
/// was written since) and writes over it, and the blob is cut to its size when finished
/// (``BlobFile/finish(size:)``).
///
/// It is one of ``CopyMethod``'s ways (``CopyMethod/parallelSplice``), between
/// `copy_file_range` and `sendfile`.
enum ParallelFileCopy {
    /// Smaller files are copied by one thread: starting others would cost more than it saves.
    static let minimumSize: UInt64 = 16 << 20
    /// The least each thread moves.
    static let minimumPart: UInt64 = 8 << 20
    /// At most this many threads copy one file.
    static let maximumParts = 4

    enum Outcome: Equatable {
        /// This many bytes were copied, and the source's and destination's offsets are past
        /// them: fewer than asked (none, say) when the source shrank meanwhile or the kernel
        /// refused to splice part of it, which another method then copies.
        case copied(UInt64)
        /// Reading the source failed (an `errno`).
        case readFailed(Int32)
        /// Writing the blob file failed (an `errno`).
        case writeFailed(Int32)
    }

    /// Threads copying ranges besides the transfers' own, across all transfers at once: at
    /// most one fewer than the machine has processors, so that many large writes together
    /// neither start hundreds of threads nor copy faster for them (they would take turns).
    private static let helpers = SharedAllowance()

    /// The processors the server may run on, read once: Foundation reads them from the
    /// cgroup's files (eight system calls) at every ask.
    static let processors = ProcessInfo.processInfo.activeProcessorCount

    /// The most helper threads at once.
    static var helperBudget: Int { max(0, processors - 1) }

    /// Takes up to `wanted` helper threads out of `budget`; how many it got, to give back with
    /// ``releaseHelpers(_:)``.
    static func reserveHelpers(_ wanted: Int, budget: Int = helperBudget) -> Int {
        helpers.take(upTo: wanted, of: budget)
    }

    static func releaseHelpers(_ count: Int) {
        helpers.giveBack(count)
    }

    /// One step of ``CopyMethod/parallelSplice``: what is left of `source` past its offset, at
    /// most `limit` bytes, copied as ``copy(from:to:count:parts:copyingRange:)`` does, in as
    /// many ranges as the size is worth and helper threads are free. Refused (for `sendfile` to
    /// take over) when that is one range (a small file, one processor, or no helper free), or
    /// nothing was copied; moved, when some was (the next step copies what is left, the
    /// source's writer having shrunk or grown it meanwhile).
    static func step(from source: Int32, to destination: Int32, atMost limit: Int) -> CopyMethod.Step {
        var status = stat()
        let offset = lseek(source, 0, SEEK_CUR)
        guard offset >= 0, fstat(source, &status) == 0, status.st_size > offset, limit > 0 else { return .refused }
        let count = min(UInt64(status.st_size - offset), UInt64(limit))
        let wanted = parts(for: count)
        guard wanted > 1 else { return .refused }
        let granted = reserveHelpers(wanted - 1)
        defer { releaseHelpers(granted) }
        guard granted > 0 else { return .refused }
        switch copy(from: source, to: destination, count: count, parts: granted + 1) {
        case .copied(0): return .refused
        case .copied(let copied): return .moved(Int(copied))
        case .readFailed(let code): return .readFailed(code)
        case .writeFailed(let code): return .writeFailed(code)
        }
    }

    /// How many threads to copy `size` bytes with, on `processors` processors: 1 when it is
    /// not worth more.
    static func parts(for size: UInt64, processors: Int = ParallelFileCopy.processors) -> Int {
        guard size >= minimumSize else { return 1 }
        return max(1, min(processors, maximumParts, Int(clamping: size / minimumPart)))
    }

    /// Copies `count` bytes of `source` from its current offset into `destination` at its
    /// current offset, in `parts` ranges at once (on threads of their own: they wait on the
    /// disk, which a shared pool's threads must not), and moves both offsets past what was
    /// copied. Once one range fails the others stop. `copyingRange` is how each range is
    /// copied (tests stand in for it to make a range fail).
    static func copy(
        from source: Int32, to destination: Int32, count: UInt64, parts: Int,
        copyingRange: @escaping RangeCopier = copyRange
    ) -> Outcome {
        let sourceStart = lseek(source, 0, SEEK_CUR), destinationStart = lseek(destination, 0, SEEK_CUR)
        guard sourceStart >= 0, destinationStart >= 0, parts >= 1 else { return .copied(0) }
        let share = count / UInt64(parts)
        let ranges = (0..<parts).map { index in
            let start = UInt64(index) * share
            return (start: start, length: index == parts - 1 ? count - start : share)
        }
        let shared = Progress(parts: parts)
        @Sendable func run(_ index: Int) {
            let range = ranges[index]
            let outcome = copyingRange(
                source, Int64(sourceStart) + Int64(range.start), destination,
                Int64(destinationStart) + Int64(range.start), range.length, shared)
            if case .moved = outcome {} else { shared.stop.store(true, ordering: .relaxed) }
            shared.outcomes.withLock { $0[index] = outcome }
        }
        let others = DispatchGroup()
        for index in 1..<parts {
            others.enter()
            Thread.detachNewThread {
                run(index)
                others.leave()
            }
        }
        run(0)
        others.wait()
        let results = shared.outcomes.withLock { $0 }

        // The blob file's failures first: no other method would do better.
        for outcome in results {
            if case .writeFailed(let code) = outcome { return .writeFailed(code) }
        }
        for outcome in results {
            if case .readFailed(let code) = outcome { return .readFailed(code) }
        }
        // What counts is the unbroken run of bytes from the start: up to the first range that
        // came short (the source shrank, or the range stopped for another's refusal) or was
        // refused. The next method goes on from there, over whatever lies past it (the file's
        // space stays reserved), and the blob is cut to its final size when it is finished.
        var copied: UInt64 = 0
        for (range, outcome) in zip(ranges, results) {
            guard case .moved(let moved) = outcome else { break }
            copied += moved
            if moved < range.length { break }
        }
        _ = lseek(source, sourceStart + off_t(copied), SEEK_SET)
        _ = lseek(destination, destinationStart + off_t(copied), SEEK_SET)
        return .copied(copied)
    }

    /// Copies one range: `(source, at, destination, at, length, progress)`, stopping early
    /// once `progress.stopped`.
    typealias RangeCopier = @Sendable (Int32, Int64, Int32, Int64, UInt64, Progress) -> RangeOutcome

    /// What the ranges' threads share: each one's outcome, and whether to stop.
    final class Progress: Sendable {
        let outcomes: Mutex<[RangeOutcome]>
        let stop = Atomic<Bool>(false)

        init(parts: Int) {
            outcomes = Mutex(Array(repeating: .moved(0), count: parts))
        }

        /// Whether another range failed, so that what this one moves will not be used.
        var stopped: Bool { stop.load(ordering: .relaxed) }
    }

    /// How one range's copy ended.
    enum RangeOutcome: Equatable {
        case moved(UInt64)
        case refused
        case readFailed(Int32)
        case writeFailed(Int32)
    }

    /// Splices `length` bytes of `source` at `sourceOffset` into `destination` at
    /// `destinationOffset` through a pipe of its own; fewer when the source ends first, or when
    /// `stop` is set (another range failed, and what this one moved will not be used).
    ///
    /// As with ``CopyMethod``, a failure before anything moved is a refusal (the next method
    /// tries, and tells which side failed), except a full disk, which no method would fix.
    @Sendable static func copyRange(_ source: Int32, at sourceOffset: Int64, _ destination: Int32, at destinationOffset: Int64, length: UInt64, progress: Progress) -> RangeOutcome {
        var ends: [Int32] = [-1, -1]
        guard pipe2(&ends, O_CLOEXEC) == 0 else { return .refused }
        defer { ends.forEach { close($0) } }
        // Wider than the default, so that each pair of calls moves more pages; no wider than a
        // transfer's pipe beyond the few wide ones (see `WidePipes`), as up to `max-transfers`
        // of these may be open at once.
        let widened = cdbus_fcntl_int(ends[1], cdbus_F_SETPIPE_SZ, TransferSource.pipeBufferSize)
        let pipeSize = Int(max(widened, cdbus_fcntl(ends[1], cdbus_F_GETPIPE_SZ), 4096))
        var readAt = sourceOffset, writeAt = destinationOffset
        var moved: UInt64 = 0
        while moved < length, !progress.stopped {
            let inPipe = splice(source, &readAt, ends[1], nil, min(pipeSize, Int(clamping: length - moved)), 0)
            if inPipe < 0 {
                if errno == EINTR { continue }
                return moved == 0 ? .refused : .readFailed(errno)
            }
            if inPipe == 0 { break }
            var left = inPipe
            while left > 0 {
                let out = splice(ends[0], nil, destination, &writeAt, left, 0)
                if out < 0, errno == EINTR { continue }
                guard out > 0 else {
                    let code = out < 0 ? errno : EIO
                    if moved == 0, left == inPipe, ![ENOSPC, EDQUOT, EFBIG].contains(code) { return .refused }
                    return .writeFailed(code)
                }
                left -= out
            }
            moved += UInt64(inPipe)
        }
        return .moved(moved)
    }
}
