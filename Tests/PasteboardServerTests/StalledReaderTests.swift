import DBus
import Foundation
import Testing
import TestSupport

/// A reader that takes a large `ReadFd` and never reads it costs the server nothing.
struct StalledReaderTests {
    @Test func readersThatNeverReadDoNotHoldTheServer() async throws {
        let h = try await Harness()
        let large = (0..<(8 << 20)).map { UInt8(truncatingIfNeeded: $0 &* 31) }
        try await h.writeFd([[("application/octet-stream", try Descriptors.file(large))]])
        // Many readers take the data and read none of it, keeping their descriptors open.
        var stalled: [UnixFileDescriptor] = []
        for _ in 0..<32 {
            stalled.append(try await h.readFd("application/octet-stream").descriptor)
        }
        // Everyone else is answered, writes included, and a reader that does read gets it all.
        #expect(try await h.write(text: "meanwhile", to: "other") == 1)
        #expect(try await h.readFdBytes("application/octet-stream") == (1, large))
        // Replacing the contents does not disturb a reader that starts late.
        #expect(try await h.write(text: "replaced") == 2)
        #expect(try Descriptors.readAll(stalled[0]) == large)
        #expect(try await h.readData("text/plain;charset=utf-8").data == Array("replaced".utf8))
    }
}
