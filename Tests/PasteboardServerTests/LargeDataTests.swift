import DBus
import Foundation
import Testing
import TestSupport

/// About 100 MiB in by `WriteItemsFd` and out by `ReadFd`, byte for byte, without the test
/// ever holding it all in memory.
struct LargeDataTests {
    static let chunkSize = 1 << 20
    static let chunkCount = 100

    /// Chunk `index` of a payload: pseudo-random bytes, stamped with the index at both ends
    /// so a lost, repeated or misplaced chunk shows.
    static let base: [UInt8] = {
        var generator = SystemRandomNumberGenerator()
        var bytes = [UInt8](repeating: 0, count: chunkSize)
        bytes.withUnsafeMutableBytes { buffer in
            let words = buffer.bindMemory(to: UInt64.self)
            for index in words.indices { words[index] = generator.next() }
        }
        return bytes
    }()

    static func chunk(_ index: Int, salt: UInt8 = 0) -> [UInt8] {
        var bytes = base
        bytes.withUnsafeMutableBytes { buffer in
            buffer.storeBytes(of: UInt64(index), toByteOffset: 0, as: UInt64.self)
            buffer.storeBytes(of: UInt64(index), toByteOffset: chunkSize - 8, as: UInt64.self)
            buffer[8] = salt
        }
        return bytes
    }

    /// Reads `descriptor` to its end and compares it chunk by chunk with `chunk(_:)`.
    static func verify(_ descriptor: UnixFileDescriptor, salt: UInt8, sourceLocation: SourceLocation = #_sourceLocation) throws {
        var buffer = [UInt8](repeating: 0, count: chunkSize)
        for index in 0...chunkCount {
            var filled = 0
            while filled < chunkSize {
                let count = buffer.withUnsafeMutableBytes { read(descriptor.rawValue, $0.baseAddress! + filled, $0.count - filled) }
                if count < 0, errno == EINTR { continue }
                try #require(count >= 0, "read failed", sourceLocation: sourceLocation)
                if count == 0 { break }
                filled += count
            }
            if index == chunkCount {
                #expect(filled == 0, "\(filled) bytes more than were written", sourceLocation: sourceLocation)
                return
            }
            try #require(filled == chunkSize, "chunk \(index) has \(filled) bytes", sourceLocation: sourceLocation)
            let expected = chunk(index, salt: salt)
            let same = buffer.withUnsafeBytes { got in expected.withUnsafeBytes { memcmp(got.baseAddress!, $0.baseAddress!, chunkSize) == 0 } }
            try #require(same, "chunk \(index) differs", sourceLocation: sourceLocation)
        }
    }

    @Test func hundredMebibytesThroughAPipe() async throws {
        let h = try await Harness()
        let (readEnd, feeder) = try PipeFeeder.start(count: Self.chunkCount) { Self.chunk($0, salt: 1) }
        #expect(try await h.writeFd([[("video/mp4", readEnd)]], timeout: .seconds(60)) == 1)
        #expect(await feeder.wait())
        #expect(feeder.written == Self.chunkCount * Self.chunkSize)

        #expect(try await h.items().items == [.init(types: ["video/mp4"], sizes: [Int64(Self.chunkCount * Self.chunkSize)])])
        await h.expectFailure("TooLarge", "ReadData", [.string("general"), .uint32(0), .string("video/mp4"), .uint64(0)])
        let (count, descriptor) = try await h.readFd("public.mpeg-4", expect: 1)
        #expect(count == 1)
        try Self.verify(descriptor, salt: 1)

        // Still all there after a crash.
        h.server.kill9()
        try await h.server.restart()
        try Self.verify(try await h.readFd("video/mp4").descriptor, salt: 1)
    }

    @Test func hundredMebibytesFromAFileForTwoTypes() async throws {
        let h = try await Harness()
        let file = try Descriptors.temporaryFile()
        for index in 0..<Self.chunkCount {
            try Descriptors.writeAll(file, Self.chunk(index, salt: 2))
        }
        lseek(file.rawValue, 0, SEEK_SET)
        #expect(try await h.writeFd([[("application/x-raw", file), ("application/octet-stream", file)]], timeout: .seconds(60)) == 1)
        let size = Int64(Self.chunkCount * Self.chunkSize)
        #expect(try await h.items().items == [.init(types: ["application/x-raw", "application/octet-stream"], sizes: [size, size])])
        try Self.verify(try await h.readFd("application/x-raw").descriptor, salt: 2)
        try Self.verify(try await h.readFd("application/octet-stream").descriptor, salt: 2)
    }
}
