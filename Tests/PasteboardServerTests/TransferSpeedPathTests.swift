import DBus
import Foundation
import Testing
import TestSupport

/// `WriteItemsFd` on its fast paths (files and memfds copied by the kernel with
/// `copy_file_range` or `sendfile` into preallocated space, pipes read through a widened pipe
/// buffer): the same bytes, limits, timeouts and durability as the plain read loop.
struct TransferSpeedPathTests {
    static let type = "application/octet-stream"

    /// `count` pseudo-random bytes (xorshift), different for each seed: a chunk lost, repeated
    /// or misplaced shows.
    static func bytes(_ count: Int, seed: UInt64) -> [UInt8] {
        var state = seed &* 0x9E37_79B9_7F4A_7C15 | 1
        var result = [UInt8](repeating: 0, count: count)
        result.withUnsafeMutableBytes { buffer in
            var offset = 0
            while offset < count {
                state ^= state << 13
                state ^= state >> 7
                state ^= state << 17
                withUnsafeBytes(of: state) { word in
                    let length = min(8, count - offset)
                    buffer.baseAddress!.advanced(by: offset).copyMemory(from: word.baseAddress!, byteCount: length)
                }
                offset += 8
            }
        }
        return result
    }

    /// Whether two byte arrays are equal (compared with `memcmp`: fast in a debug build).
    static func same(_ a: [UInt8], _ b: [UInt8]) -> Bool {
        a.count == b.count && a.withUnsafeBytes { a in b.withUnsafeBytes { b in memcmp(a.baseAddress!, b.baseAddress!, a.count) == 0 } }
    }

    /// `ReadFd` of the current contents, compared with `expected`.
    static func expectStored(_ expected: [UInt8], in h: Harness, count: UInt64, sourceLocation: SourceLocation = #_sourceLocation) async throws {
        let (readCount, data) = try await h.readFdBytes(type)
        #expect(readCount == count, sourceLocation: sourceLocation)
        #expect(data.count == expected.count, sourceLocation: sourceLocation)
        #expect(same(data, expected), "the stored bytes differ", sourceLocation: sourceLocation)
    }

    /// A memfd holding `bytes`, at offset `offset`.
    static func memfd(_ bytes: [UInt8], offset: Int = 0) throws -> UnixFileDescriptor {
        let descriptor = try UnixFileDescriptor.memoryFile(name: "transfer-test")
        try Descriptors.writeAll(descriptor, bytes)
        lseek(descriptor.rawValue, off_t(offset), SEEK_SET)
        return descriptor
    }

    static func offset(of descriptor: UnixFileDescriptor) -> Int {
        Int(lseek(descriptor.rawValue, 0, SEEK_CUR))
    }

    /// A pipe's buffer size (`F_GETPIPE_SZ`, which Glibc does not export to Swift).
    static func capacity(of pipe: UnixFileDescriptor) -> Int {
        Int(fcntl(pipe.rawValue, 1024 + 8))
    }

    /// The named files in the server's blob folder.
    static func blobFiles(_ h: Harness) -> [String] {
        (try? FileManager.default.contentsOfDirectory(atPath: h.server.stateDirectory + "/blobs")) ?? []
    }

    @Test func aMemfdIsStoredWholeAndSurvivesKill9() async throws {
        let h = try await Harness()
        let data = Self.bytes(5 << 20 + 77, seed: 11)
        let memfd = try Self.memfd(data)
        #expect(try await h.writeFd([[(Self.type, memfd)]]) == 1)
        // Read from the current offset to the end, as `read` would: the offset is at the end.
        #expect(Self.offset(of: memfd) == data.count)
        #expect(try await h.items().items == [.init(types: [Self.type], sizes: [Int64(data.count)])])
        try await Self.expectStored(data, in: h, count: 1)
        #expect(Self.blobFiles(h).count == 1)

        // On disk before the reply: a kill -9 right after it loses nothing.
        h.server.kill9()
        try await h.server.restart()
        try await Self.expectStored(data, in: h, count: 1)
    }

    @Test func aLargeFileIsReadFromItsCurrentOffset() async throws {
        let h = try await Harness()
        let data = Self.bytes(2 << 20 + 5, seed: 12)
        let file = try Descriptors.file(data)

        // An odd offset, with more than the inline threshold after it: copied into a blob file.
        lseek(file.rawValue, 100_003, SEEK_SET)
        #expect(try await h.writeFd([[(Self.type, file)]]) == 1)
        try await Self.expectStored(Array(data[100_003...]), in: h, count: 1)
        #expect(Self.offset(of: file) == data.count)

        // Near the end, what is left is small: kept in memory.
        lseek(file.rawValue, off_t(data.count - 1000), SEEK_SET)
        #expect(try await h.writeFd([[(Self.type, file)]]) == 2)
        #expect(try await h.readFdBytes(Self.type) == (2, Array(data[(data.count - 1000)...])))
        #expect(Self.blobFiles(h).count == 1, "only the first write's blob file (now in the history)")

        // At the end: nothing, which is an empty representation.
        #expect(try await h.writeFd([[(Self.type, file)]]) == 3)
        #expect(try await h.items().items == [.init(types: [Self.type], sizes: [0])])
    }

    @Test func aFileOverTheLimitIsRefusedBeforeAnythingIsCopied() async throws {
        let h = try await Harness(limits: ["max-item-bytes=1M"])
        let data = Self.bytes(1 << 20 + 1, seed: 13)
        let memfd = try Self.memfd(data)
        let error = await h.expectFailure("TooLarge", "WriteItemsFd", [.string("general"), Harness.descriptorItems([[(Self.type, memfd)]]), Harness.options([])])
        #expect(error?.message.contains("max-item-bytes") == true, "\(String(describing: error))")
        // Refused from its size: the server read nothing, and stored nothing.
        #expect(Self.offset(of: memfd) == 0)
        #expect(Self.blobFiles(h).isEmpty)
        #expect(try await h.changeCount() == 0)

        // One byte further on, exactly the limit is left: accepted.
        lseek(memfd.rawValue, 1, SEEK_SET)
        #expect(try await h.writeFd([[(Self.type, memfd)]]) == 1)
        try await Self.expectStored(Array(data[1...]), in: h, count: 1)
    }

    @Test func aPipeOverTheLimitIsCutOffOneBytePastIt() async throws {
        let limit = 1 << 20
        let h = try await Harness(limits: ["max-item-bytes=1M"])
        let (reader, feeder) = try PipeFeeder.start(count: nil) { Self.bytes(100_000, seed: UInt64($0) + 100) }
        let error = await h.expectFailure("TooLarge", "WriteItemsFd", [.string("general"), Harness.descriptorItems([[(Self.type, reader)]]), Harness.options([])])
        #expect(error?.message.contains("max-item-bytes") == true, "\(String(describing: error))")
        _ = consume reader
        // The server let go of the pipe: the writer stops (EPIPE). It got rid of at most what
        // the server took (the limit and one byte), what the pipe holds (the server may have
        // widened it to 1 MiB) and one chunk of its own on the way.
        #expect(await feeder.wait(timeout: .seconds(10)))
        #expect(feeder.written > limit)
        let most = limit + 1 + (1 << 20) + 100_000
        #expect(feeder.written <= most, "\(feeder.written - limit) bytes written past the limit")
        #expect(Self.blobFiles(h).isEmpty)
        #expect(try await h.changeCount() == 0)
    }

    @Test func aPipeThatGoesSilentMidwayTimesOut() async throws {
        let h = try await Harness(limits: ["transfer-idle-timeout-ms=500"])
        // More than the inline threshold arrives (the server has begun a blob file), then the
        // writer stalls without closing the pipe.
        let (reader, feeder) = try PipeFeeder.start(count: 4, keepOpen: true) { Self.bytes(65536, seed: UInt64($0) + 200) }
        let started = ContinuousClock.now
        let error = await h.expectFailure("InvalidArgument", "WriteItemsFd", [.string("general"), Harness.descriptorItems([[(Self.type, reader)]]), Harness.options([])])
        #expect(error?.message.contains("transfer-idle-timeout-ms") == true, "\(String(describing: error))")
        // A writer the machine left unscheduled for the limit was idle, and rightly cut off
        // before its last byte.
        if feeder.longestPause < .milliseconds(450) {
            #expect(feeder.written == 4 * 65536)
        }
        let waited = ContinuousClock.now - (feeder.lastWrite ?? started)
        #expect(waited >= .milliseconds(450) && waited < .seconds(15), "gave up \(waited) after the last byte")
        #expect(Self.blobFiles(h).isEmpty)
        #expect(try await h.changeCount() == 0)
    }

    @Test func aNonBlockingPipeThatTricklesIsReadWhole() async throws {
        let h = try await Harness()
        let chunks = (0..<24).map { Self.bytes(50_001 + $0 * 997, seed: UInt64($0) + 300) }
        let (reader, feeder) = try PipeFeeder.start(count: chunks.count) { index in
            // Pauses leave the pipe empty now and then: the server finds nothing (EAGAIN) and
            // must wait for more, not give up or spin.
            if index % 3 == 0 { Thread.sleep(forTimeInterval: 0.02) }
            return chunks[index]
        }
        _ = fcntl(reader.rawValue, F_SETFL, fcntl(reader.rawValue, F_GETFL) | O_NONBLOCK)
        #expect(try await h.writeFd([[(Self.type, reader)]]) == 1)
        #expect(await feeder.wait())
        // Large data: the server widened the pipe, so that the writer keeps going.
        #expect(Self.capacity(of: reader) >= 256 << 10)
        let data = chunks.flatMap { $0 }
        #expect(try await h.items().items == [.init(types: [Self.type], sizes: [Int64(data.count)])])
        try await Self.expectStored(data, in: h, count: 1)
    }

    @Test func aFileFromAWriterThatLeftIsStoredWhole() async throws {
        let h = try await Harness()
        // Large enough that the writer is gone long before the copy ends.
        let data = Self.bytes(32 << 20, seed: 14)
        let memfd = try Self.memfd(data)
        let writer = try h.connect()
        let call = try Message.methodCall(
            destination: Harness.busName, path: Harness.path, interface: Harness.interface, method: "WriteItemsFd",
            arguments: [.string("general"), Harness.descriptorItems([[(Self.type, memfd)]]), Harness.options([])])
        writer.send([call])
        writer.close()
        await writer.waitUntilDisconnected()
        // A file's end is its size: the data is complete whether or not its writer stayed (a
        // pipe's would not be; see TransferTests).
        #expect(try await eventually(timeout: .seconds(30)) { try await h.changeCount() == 1 })
        try await Self.expectStored(data, in: h, count: 1)
    }

    @Test func aWriteOnlyFileIsRefusedAtOnce() async throws {
        let h = try await Harness(limits: ["transfer-idle-timeout-ms=60000"])
        let memfd = try Self.memfd(Self.bytes(200_000, seed: 15))
        let fd = open("/proc/self/fd/\(memfd.rawValue)", O_WRONLY | O_CLOEXEC)
        try #require(fd >= 0)
        let writeOnly = UnixFileDescriptor(owning: fd)
        let started = ContinuousClock.now
        let error = await h.expectFailure("InvalidArgument", "WriteItemsFd", [.string("general"), Harness.descriptorItems([[(Self.type, writeOnly)]]), Harness.options([])])
        #expect(error?.message.contains("writing only") == true, "\(String(describing: error))")
        #expect(ContinuousClock.now - started < .seconds(10))
    }

    @Test func aVolatileMemfdIsStoredInMemoryOnly() async throws {
        let h = try await Harness()
        let data = Self.bytes(3 << 20 + 3, seed: 16)
        #expect(try await h.writeFd([[(Self.type, try Self.memfd(data, offset: 3))]], options: [("transient", .boolean(true))]) == 1)
        try await Self.expectStored(Array(data[3...]), in: h, count: 1)
        #expect(Self.blobFiles(h).isEmpty)
    }
}
