import CDBus
import Foundation
@testable import PasteboardServer
import Synchronization
import Testing

/// The feeder behind `ReadFd` of a store file: whatever pace its reader keeps (reading at
/// once, pausing, reading in small pieces), the reader gets the file's bytes exactly, then the
/// end; a reader that leaves midway ends the feed. The pace changes which way the feeder waits
/// for room (``PipeRoom``: looking while the reader keeps up, sleeping when it pauses).
struct StoredFileFeederTests {
    static func bytes(_ count: Int) -> [UInt8] {
        (0..<count).map { UInt8(truncatingIfNeeded: $0 &* 31 &+ ($0 >> 12)) }
    }

    /// A temporary file holding `bytes`, open for reading.
    private static func file(_ bytes: [UInt8]) throws -> (fd: Int32, path: String) {
        let path = FileManager.default.temporaryDirectory.appendingPathComponent("feeder-\(UUID().uuidString)").path
        try Data(bytes).write(to: URL(fileURLWithPath: path))
        let fd = open(path, O_RDONLY | O_CLOEXEC)
        #expect(fd >= 0)
        return (fd, path)
    }

    /// A pipe: its read end, its write end.
    private static func pipe() -> (output: Int32, input: Int32) {
        var ends: [Int32] = [-1, -1]
        #expect(pipe2(&ends, O_CLOEXEC) == 0)
        return (ends[0], ends[1])
    }

    /// A feed running on a thread of its own, as the server runs it.
    final class Feed: Sendable {
        let done = DispatchSemaphore(value: 0)
        /// The processor time the feed took, in seconds, once done.
        let processorTime = Mutex<Double>(0)

        /// Feeds `size` bytes of `file` into `input`, then closes `input`.
        init(_ file: Int32, size: Int, into input: Int32) {
            Thread.detachNewThread { [self] in
                var start = timespec(), end = timespec()
                clock_gettime(CLOCK_THREAD_CPUTIME_ID, &start)
                StoredFileFeeder.feed(file, size: UInt64(size), into: input)
                clock_gettime(CLOCK_THREAD_CPUTIME_ID, &end)
                processorTime.withLock { $0 = Double(end.tv_sec - start.tv_sec) + Double(end.tv_nsec - start.tv_nsec) / 1e9 }
                close(input)
                done.signal()
            }
        }

        /// Whether the feed ended within 10 s.
        func ended() -> Bool {
            done.wait(timeout: .now() + 10) == .success
        }
    }

    /// Feeds `bytes` through a pipe of 1 MiB to a reader reading `chunk` bytes at a time,
    /// pausing after each read as long as `pause` says (in microseconds, given what it has
    /// read so far); what the reader got, and the feeder's processor time in seconds.
    private static func feedAndRead(_ bytes: [UInt8], chunk: Int, pause: (Int) -> UInt32 = { _ in 0 }) throws -> (received: [UInt8], processorTime: Double) {
        let (file, path) = try Self.file(bytes)
        defer { close(file); unlink(path) }
        let (output, input) = Self.pipe()
        defer { close(output) }
        _ = cdbus_fcntl_int(input, cdbus_F_SETPIPE_SZ, WidePipes.size)
        let feed = Feed(file, size: bytes.count, into: input)
        var received: [UInt8] = []
        var buffer = [UInt8](repeating: 0, count: chunk)
        while true {
            let count = buffer.withUnsafeMutableBytes { read(output, $0.baseAddress, chunk) }
            if count < 0, errno == EINTR { continue }
            #expect(count >= 0)
            if count <= 0 { break }
            received += buffer[..<count]
            let pausing = pause(received.count)
            if pausing > 0 { usleep(pausing) }
        }
        #expect(feed.ended())
        return (received, feed.processorTime.withLock { $0 })
    }

    /// A pause of `microseconds` each time the reader passes a multiple of `every` bytes.
    private static func pausing(_ microseconds: UInt32, every: Int, chunk: Int) -> (Int) -> UInt32 {
        { received in received % every < chunk ? microseconds : 0 }
    }

    @Test func aReaderTakingAPipefulAtATimeGetsEveryByte() throws {
        let bytes = Self.bytes(24 << 20 + 12_345)
        #expect(try Self.feedAndRead(bytes, chunk: 1 << 20).received == bytes)
    }

    @Test func aReaderThatPausesGetsEveryByte() throws {
        // Pauses of 30 ms, far past the feeder's looking: it sleeps, then looks again once
        // the reader is back at speed.
        let bytes = Self.bytes(12 << 20 + 777)
        #expect(try Self.feedAndRead(bytes, chunk: 1 << 20, pause: Self.pausing(30_000, every: 3 << 20, chunk: 1 << 20)).received == bytes)
    }

    @Test func aReaderOfSmallPiecesGetsEveryByte() throws {
        let bytes = Self.bytes(6 << 20 + 5)
        #expect(try Self.feedAndRead(bytes, chunk: 4093, pause: Self.pausing(2_000, every: 1 << 20, chunk: 4093)).received == bytes)
    }

    /// The kernel counts a pipe's room in pages, a look in bytes: a pipe shrunk to one page
    /// that holds part of one has room by the look's count and none by the kernel's. The
    /// feeder must then sleep until the reader reads, not look and try again and again.
    @Test func aPipeFullByPagesButNotByBytesPutsTheFeederToSleep() throws {
        let bytes = Self.bytes(64 << 10)
        let (file, path) = try Self.file(bytes)
        defer { close(file); unlink(path) }
        let (output, input) = Self.pipe()
        defer { close(output) }
        #expect(cdbus_fcntl_int(input, cdbus_F_SETPIPE_SZ, 4096) == 4096)
        let head = [UInt8](repeating: 0x68, count: 1096)
        #expect(head.withUnsafeBytes { write(input, $0.baseAddress, $0.count) } == 1096)
        let feed = Feed(file, size: bytes.count, into: input)
        // The reader reads nothing for 300 ms: a feeder that kept looking would spend them.
        usleep(300_000)
        var received: [UInt8] = []
        var buffer = [UInt8](repeating: 0, count: 8192)
        while true {
            let count = buffer.withUnsafeMutableBytes { read(output, $0.baseAddress, 8192) }
            if count < 0, errno == EINTR { continue }
            if count <= 0 { break }
            received += buffer[..<count]
        }
        #expect(feed.ended())
        #expect(received == head + bytes)
        let cpu = feed.processorTime.withLock { $0 }
        #expect(cpu < 0.1, "the feeder spent \(cpu) s of processor time while its reader read nothing")
    }

    /// A reader that takes a page at a time, with pauses between (as one that writes each
    /// piece somewhere before reading the next): looks that find no room make the feeder
    /// look less and less often, rather than spend 50 µs at every one of its wakes.
    @Test func aReaderThatDoesOtherWorkBetweenReadsCostsTheFeederLittle() throws {
        let bytes = Self.bytes(1 << 20 + 400 * 4096)
        let (received, cpu) = try Self.feedAndRead(bytes, chunk: 4096) { $0 <= 400 * 4096 ? 500 : 0 }
        #expect(received == bytes)
        #expect(cpu < 0.015, "the feeder spent \(cpu) s of processor time on a reader of pages")
    }

    @Test func aReaderThatLeavesEndsTheFeed() throws {
        let bytes = Self.bytes(16 << 20)
        let (file, path) = try Self.file(bytes)
        defer { close(file); unlink(path) }
        let (output, input) = Self.pipe()
        let feed = Feed(file, size: bytes.count, into: input)
        var buffer = [UInt8](repeating: 0, count: 1 << 20)
        #expect(buffer.withUnsafeMutableBytes { read(output, $0.baseAddress, 1 << 20) } > 0)
        close(output)
        #expect(feed.ended())
    }
}
