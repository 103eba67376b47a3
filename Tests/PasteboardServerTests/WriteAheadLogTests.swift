import DBus
import Foundation
import Testing
import TestSupport

/// The write-ahead log is copied back and started over while writes keep coming, so it stays
/// bounded instead of growing with every change.
struct WriteAheadLogTests {
    @Test func theLogStaysBoundedUnderASteadyStreamOfWrites() async throws {
        let h = try await Harness()
        let log = h.server.stateDirectory + "/pasteboards.sqlite-wal"
        let data = [UInt8](repeating: 0x6C, count: 8192)
        var largest: UInt64 = 0
        // Each write adds four or more 4 KiB pages to the log: left alone, it would pass 24 MiB.
        // Owner-only writes take the service queue, each committed in a transaction of its own
        // (small writes are answered from the commit log and reach the database many to a
        // transaction, which would hardly grow the log at all).
        for round in 1...1200 {
            _ = try await h.write([[("application/octet-stream", data)]], to: "stream-\(round % 10)", options: [("owner-only", .boolean(true))])
            if round % 100 == 0, let size = try? FileManager.default.attributesOfItem(atPath: log)[.size] as? UInt64 {
                largest = max(largest, size)
            }
        }
        #expect(largest > 0, "no write-ahead log was seen")
        #expect(largest < 14 << 20, "the log reached \(largest) bytes")
        // Everything is still there after a crash.
        h.server.kill9()
        try await h.server.restart()
        #expect(try await h.readData("application/octet-stream", in: "stream-0").data == data)
        #expect(try await h.changeCount("stream-0") == 120)
    }
}
