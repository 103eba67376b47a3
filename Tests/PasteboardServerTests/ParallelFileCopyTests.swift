import CDBus
import DBus
import Foundation
@testable import PasteboardServer
import Testing
import TestSupport

/// ``ParallelFileCopy``: a large file copied in ranges by several threads gives the same bytes
/// as one copy, from the source's offset on, and stops at the first range a shrinking source
/// left short; through the server, a large memfd is stored whole that way.
struct ParallelFileCopyTests {
    @Test func rangesCopiedTogetherGiveTheWholeFileFromItsOffset() throws {
        let data = TransferSpeedPathTests.bytes(20 << 20 + 13, seed: 21)
        let source = try TransferSpeedPathTests.memfd(data, offset: 4_099)
        let destination = try Self.blobFile()
        #expect(ParallelFileCopy.copy(from: source.rawValue, to: destination.rawValue, count: UInt64(data.count - 4_099), parts: 3) == .copied(UInt64(data.count - 4_099)))
        #expect(lseek(source.rawValue, 0, SEEK_CUR) == data.count)
        #expect(lseek(destination.rawValue, 0, SEEK_CUR) == data.count - 4_099)
        #expect(TransferSpeedPathTests.same(try Self.contents(of: destination), Array(data[4_099...])))
    }

    /// Asked for more than the source holds, as when its writer truncates it midway: the copy
    /// ends with the first range that came short, and keeps nothing past it.
    @Test(arguments: [(15 << 20, 3), (20 << 20, 3), (1, 2)])
    func aSourceThatShrankEndsTheCopyAtItsEnd(held: Int, parts: Int) throws {
        let data = TransferSpeedPathTests.bytes(held, seed: 22)
        let source = try TransferSpeedPathTests.memfd(data)
        let destination = try Self.blobFile()
        #expect(ParallelFileCopy.copy(from: source.rawValue, to: destination.rawValue, count: 30 << 20, parts: parts) == .copied(UInt64(held)))
        #expect(lseek(source.rawValue, 0, SEEK_CUR) == held)
        #expect(TransferSpeedPathTests.same(try Self.contents(of: destination), data))
    }

    /// A blob file the kernel will not splice into (opened to append) is left as it was, and
    /// nothing counted copied, for another method to copy the whole.
    @Test func whatTheKernelCannotSpliceIsLeftToAnotherMethod() throws {
        let source = try TransferSpeedPathTests.memfd(TransferSpeedPathTests.bytes(4 << 20, seed: 23))
        let path = FileManager.default.temporaryDirectory.appendingPathComponent("parallel-copy-\(getpid())-\(UInt32.random(in: 0 ... .max))").path
        let appending = UnixFileDescriptor(owning: open(path, O_RDWR | O_CREAT | O_APPEND | O_CLOEXEC, 0o600))
        unlink(path)
        #expect(ParallelFileCopy.copy(from: source.rawValue, to: appending.rawValue, count: 4 << 20, parts: 2) == .copied(0))
        var info = stat()
        #expect(fstat(appending.rawValue, &info) == 0 && info.st_size == 0)
        #expect(lseek(source.rawValue, 0, SEEK_CUR) == 0)
    }

    /// A range refused once another has begun: the others stop, and only the unbroken bytes
    /// from the start count, with both offsets left after them for the next method.
    @Test func aRefusedRangeStopsTheOthersAndEndsTheCount() throws {
        let data = TransferSpeedPathTests.bytes(20 << 20, seed: 26)
        let source = try TransferSpeedPathTests.memfd(data)
        let destination = try Self.blobFile()
        let outcome = ParallelFileCopy.copy(from: source.rawValue, to: destination.rawValue, count: UInt64(data.count), parts: 2) { from, at, to, toAt, length, progress in
            guard at == 0 else { return .refused }
            // The first range starts only once the second has been refused: it copies nothing.
            while !progress.stopped { usleep(100) }
            return ParallelFileCopy.copyRange(from, at: at, to, at: toAt, length: length, progress: progress)
        }
        #expect(outcome == .copied(0))
        #expect(lseek(source.rawValue, 0, SEEK_CUR) == 0 && lseek(destination.rawValue, 0, SEEK_CUR) == 0)

        // Refused while the first range copies: what counts is what it copied, in place.
        lseek(source.rawValue, 0, SEEK_SET)
        let second = try Self.blobFile()
        let partial = ParallelFileCopy.copy(from: source.rawValue, to: second.rawValue, count: UInt64(data.count), parts: 2) { from, at, to, toAt, length, progress in
            guard at == 0 else {
                usleep(2_000)
                return .refused
            }
            return ParallelFileCopy.copyRange(from, at: at, to, at: toAt, length: length, progress: progress)
        }
        guard case .copied(let copied) = partial else {
            Issue.record("\(partial)")
            return
        }
        #expect(copied <= 10 << 20)
        #expect(lseek(source.rawValue, 0, SEEK_CUR) == copied && lseek(second.rawValue, 0, SEEK_CUR) == copied)
        #expect(TransferSpeedPathTests.same(Array(try Self.contents(of: second).prefix(Int(copied))), Array(data.prefix(Int(copied)))))
    }

    /// The blob file's failure wins over the source's, which wins over a refusal, whichever
    /// range met it.
    @Test(arguments: [
        ([ParallelFileCopy.RangeOutcome.readFailed(EIO), .writeFailed(ENOSPC)], ParallelFileCopy.Outcome.writeFailed(ENOSPC)),
        ([.refused, .readFailed(EIO)], .readFailed(EIO)),
        ([.moved(1 << 20), .refused], .copied(1 << 20)),
    ])
    func failuresAreRankedBlobFileFirst(_ outcomes: [ParallelFileCopy.RangeOutcome], _ expected: ParallelFileCopy.Outcome) throws {
        let source = try TransferSpeedPathTests.memfd(TransferSpeedPathTests.bytes(2 << 20, seed: 27))
        let destination = try Self.blobFile()
        let outcome = ParallelFileCopy.copy(from: source.rawValue, to: destination.rawValue, count: 2 << 20, parts: 2) { _, at, _, _, _, _ in
            outcomes[at == 0 ? 0 : 1]
        }
        #expect(outcome == expected)
    }

    /// The tests that take helper threads in this process, one after the other: the server's
    /// transfers take them in its own.
    @Suite(.serialized) struct Helpers {
        /// Helper threads are shared by all transfers: no more than the budget at once, and
        /// given back.
        @Test func helperThreadsAreRationed() {
            #expect(ParallelFileCopy.reserveHelpers(3, budget: 2) == 2)
            #expect(ParallelFileCopy.reserveHelpers(1, budget: 2) == 0)
            ParallelFileCopy.releaseHelpers(2)
            #expect(ParallelFileCopy.reserveHelpers(1, budget: 2) == 1)
            #expect(ParallelFileCopy.reserveHelpers(5, budget: 2) == 1)
            ParallelFileCopy.releaseHelpers(2)
            #expect(ParallelFileCopy.reserveHelpers(0, budget: 2) == 0)
            #expect(ParallelFileCopy.reserveHelpers(2, budget: 0) == 0)
        }

        /// As a step of ``CopyMethod``: what is left of a large file past its offset, at most
        /// the step's count, in one step (on one processor, refused for `sendfile`).
        @Test func aStepCopiesWhatIsLeftOfALargeFileUpToItsCount() throws {
            let data = TransferSpeedPathTests.bytes(40 << 20, seed: 27)
            let source = try TransferSpeedPathTests.memfd(data, offset: 3 << 20)
            let destination = try ParallelFileCopyTests.blobFile()
            var buffer: CopyBuffer? = nil
            let first = CopyMethod.parallelSplice.step(from: source.rawValue, to: destination.rawValue, count: 20 << 20, buffer: &buffer)
            guard ParallelFileCopy.helperBudget > 0 else {
                #expect(first == .refused)
                return
            }
            #expect(first == .moved(20 << 20))
            #expect(CopyMethod.parallelSplice.step(from: source.rawValue, to: destination.rawValue, count: .max, buffer: &buffer) == .moved(17 << 20))
            #expect(buffer == nil)
            #expect(TransferSpeedPathTests.same(try ParallelFileCopyTests.contents(of: destination), Array(data[(3 << 20)...])))
            // At the end, the next method is the one to say so.
            #expect(CopyMethod.parallelSplice.step(from: source.rawValue, to: destination.rawValue, count: .max, buffer: &buffer) == .refused)
        }
    }

    /// Between `copy_file_range`, which a memfd into the store refuses, and `sendfile`; and
    /// a file too small to share out, or what is left of one, goes on to `sendfile` untouched.
    @Test func aSmallFileIsLeftToTheNextMethod() throws {
        #expect(CopyMethod.copyFileRange.fallback == .parallelSplice)
        #expect(CopyMethod.parallelSplice.fallback == .sendfile)
        let data = TransferSpeedPathTests.bytes(40 << 20, seed: 28)
        let source = try TransferSpeedPathTests.memfd(data, offset: 25 << 20)
        let destination = try Self.blobFile()
        var buffer: CopyBuffer? = nil
        #expect(CopyMethod.parallelSplice.step(from: source.rawValue, to: destination.rawValue, count: .max, buffer: &buffer) == .refused)
        #expect(lseek(source.rawValue, 0, SEEK_CUR) == 25 << 20 && lseek(destination.rawValue, 0, SEEK_CUR) == 0)
    }

    @Test func smallFilesAndSingleProcessorsTakeOneThread() {
        #expect(ParallelFileCopy.parts(for: 16 << 20 - 1, processors: 8) == 1)
        #expect(ParallelFileCopy.parts(for: 16 << 20, processors: 8) == 2)
        #expect(ParallelFileCopy.parts(for: 1 << 30, processors: 8) == 4)
        #expect(ParallelFileCopy.parts(for: 1 << 30, processors: 2) == 2)
        #expect(ParallelFileCopy.parts(for: 1 << 30, processors: 1) == 1)
    }

    /// Through the server: a memfd large enough to be copied in ranges, at an odd offset, is
    /// stored whole, and read from where its offset was.
    @Test func aLargeMemfdIsStoredWholeThroughTheServer() async throws {
        let h = try await Harness()
        let data = TransferSpeedPathTests.bytes(40 << 20 + 7, seed: 24)
        let memfd = try TransferSpeedPathTests.memfd(data, offset: 1_000_001)
        #expect(try await h.writeFd([[(TransferSpeedPathTests.type, memfd)]]) == 1)
        #expect(TransferSpeedPathTests.offset(of: memfd) == data.count)
        try await TransferSpeedPathTests.expectStored(Array(data[1_000_001...]), in: h, count: 1)
    }

    /// A writer that truncates its memfd while the server copies it gets an answer, and what
    /// is stored is the start of its data: no range of zeros or of bytes from past a gap. (Cut
    /// to a third, at a page's start, so that no page is zeroed in part under a reader: inside
    /// an early range, while later ones may have copied some of their own already.)
    @Test func aMemfdTruncatedDuringTheCopyLeavesAPrefix() async throws {
        let h = try await Harness()
        let data = TransferSpeedPathTests.bytes(64 << 20, seed: 25)
        let cut = off_t(data.count / 3) & ~4095
        for round in 1...3 {
            let memfd = try TransferSpeedPathTests.memfd(data)
            let shrinking = Thread {
                usleep(UInt32(round) * 1_500)
                _ = ftruncate(memfd.rawValue, cut)
            }
            shrinking.start()
            #expect(try await h.writeFd([[(TransferSpeedPathTests.type, memfd)]]) == UInt64(round))
            let (_, stored) = try await h.readFdBytes(TransferSpeedPathTests.type)
            #expect(stored.count >= Int(cut) && stored.count <= data.count, "\(stored.count) bytes")
            #expect(TransferSpeedPathTests.same(stored, Array(data.prefix(stored.count))), "round \(round): not a prefix of the data")
        }
    }

    /// An unnamed file in a temporary folder, open for reading and writing.
    fileprivate static func blobFile() throws -> UnixFileDescriptor {
        let fd = open(FileManager.default.temporaryDirectory.path, cdbus_O_TMPFILE | O_RDWR | O_CLOEXEC, 0o600)
        guard fd >= 0 else { throw TestSupportError("O_TMPFILE: \(String(cString: strerror(errno)))") }
        return UnixFileDescriptor(owning: fd)
    }

    fileprivate static func contents(of file: UnixFileDescriptor) throws -> [UInt8] {
        var info = stat()
        guard fstat(file.rawValue, &info) == 0 else { throw TestSupportError("fstat failed") }
        var bytes = [UInt8](repeating: 0, count: Int(info.st_size))
        let read = bytes.withUnsafeMutableBytes { pread(file.rawValue, $0.baseAddress, $0.count, 0) }
        guard read == bytes.count else { throw TestSupportError("read \(read) of \(bytes.count) bytes") }
        return bytes
    }
}
