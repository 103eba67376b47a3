import CDBus
import DBus
import Foundation
import Glibc
import Synchronization
import Testing

/// ``UnixFileDescriptor/writeAll(_:_:socket:)``: everything written across writes the kernel
/// cuts short, and a failure given as its `errno` instead of a signal or a silent loss.
struct WriteAllTests {
    /// A megabyte through a pipe of 4 KiB, read on another thread: every write the kernel
    /// takes is a part, and all of it arrives in order.
    @Test func allOfItArrivesThroughASmallPipe() throws {
        var ends: [Int32] = [0, 0]
        try #require(pipe(&ends) == 0)
        _ = fcntl(ends[1], 1024 + 7, 4096)  // F_SETPIPE_SZ
        let bytes = (0..<(1 << 20)).map { UInt8(truncatingIfNeeded: $0 &* 7 &+ $0 >> 9) }
        let reader = ends[0]
        // Read on a thread of its own: the write blocks until the reader has taken enough.
        let received = Received()
        let reading = Thread {
            var chunk = [UInt8](repeating: 0, count: 3000)
            while true {
                let count = chunk.withUnsafeMutableBytes { read(reader, $0.baseAddress, $0.count) }
                if count <= 0 { break }
                received.bytes.withLock { $0 += chunk[..<count] }
            }
            received.done.signal()
        }
        reading.start()
        #expect(UnixFileDescriptor.writeAll(ends[1], bytes[...]) == 0)
        close(ends[1])
        #expect(received.done.wait(timeout: .now() + 30) == .success)
        close(reader)
        let result = received.bytes.withLock { $0 }
        #expect(result == bytes)
    }

    /// A socket whose peer has gone: `EPIPE`, and no `SIGPIPE` (which would end this process).
    @Test func aSocketWithoutPeerGivesEPIPE() throws {
        var ends: [Int32] = [0, 0]
        try #require(socketpair(AF_UNIX, Int32(SOCK_STREAM.rawValue), 0, &ends) == 0)
        close(ends[1])
        #expect(UnixFileDescriptor.writeAll(ends[0], [1, 2, 3][...], socket: true) == EPIPE)
        close(ends[0])
    }

    /// A full non-blocking pipe stops the write with `EAGAIN`, after what fitted.
    @Test func aFullNonBlockingPipeGivesEAGAIN() throws {
        var ends: [Int32] = [0, 0]
        try #require(pipe(&ends) == 0)
        defer { ends.forEach { close($0) } }
        _ = fcntl(ends[1], F_SETFL, O_NONBLOCK)
        #expect(UnixFileDescriptor.writeAll(ends[1], [UInt8](repeating: 1, count: 1 << 20)[...]) == EAGAIN)
        var pending: Int32 = 0
        #expect(ioctl(ends[0], UInt(FIONREAD), &pending) == 0 && pending > 0)
    }

    private final class Received: Sendable {
        let bytes = Mutex<[UInt8]>([])
        let done = DispatchSemaphore(value: 0)
    }
}
