import DBus
import Foundation
import Testing
import TestSupport

/// What a promise's writer provides is kept as the contents it stands for (§5), in the SQLite
/// store. (A store shared through PostgreSQL keeps promises its own way, and provided data in
/// memory: these tests are not among those run again on it.)
struct KeptPromiseTests {
    /// The server keeps what a writer provided (§5) as the contents it stands for: stored like
    /// written data, small or large, so that it is served after `kill -9` or a stop, from the
    /// history too, without asking the writer again, who may have left.
    @Test(arguments: [4, 300_000])
    func providedDataIsKeptAcrossRestarts(size: Int) async throws {
        let h = try await Harness()
        let writer = try h.connect()
        let data = (0..<size).map { UInt8(truncatingIfNeeded: $0 &* 7 &+ 1) }
        let provider = TestProvider(["text/plain": data])
        try writer.export(provider, at: "/org/pasteboardd/Provider1")
        #expect(try await PromiseTests().promise(h, [["text/plain"]], by: writer) == 1)
        #expect(try await h.readFdBytes("text/plain") == (1, data))
        // Large data is in a blob file of the store, as written data would be.
        let blobs = (try? FileManager.default.contentsOfDirectory(atPath: h.server.stateDirectory + "/blobs")) ?? []
        #expect(blobs.count == (size > 65_536 ? 1 : 0), "\(blobs)")
        writer.close()
        await writer.waitUntilDisconnected()

        h.server.kill9()
        try await h.server.restart()
        #expect(try await h.items().items.first?.sizes == [Int64(size)])
        #expect(try await h.readFdBytes("text/plain") == (1, data))

        // Into the history, out of it, and through a stop (whose blob files must stay).
        try await h.write(text: "later")
        #expect(await h.server.terminate() == 0)
        try await h.server.restart()
        #expect(try await h.call("Restore", [.string("general"), .uint64(1)]).first?.uint64Value == 3)
        h.server.kill9()
        try await h.server.restart()
        #expect(try await h.readFdBytes("text/plain") == (3, data))
        #expect(provider.calls.withLock { $0.count } == 1)
    }

    /// Concealed contents never reach the disk, what their writer provides included: after a
    /// restart they are gone, as concealed contents always are.
    @Test func dataProvidedForConcealedContentsIsNotKept() async throws {
        let h = try await Harness()
        let writer = try h.connect()
        try writer.export(TestProvider(["text/plain": Array(repeating: 0x73, count: 100_000)]), at: "/org/pasteboardd/Provider1")
        let reply = try await h.call("WritePromised", [.string("general"), .array(element: "as", [.strings(["text/plain"])]), Harness.options([("concealed", .boolean(true))])], on: writer)
        #expect(reply.first?.uint64Value == 1)
        #expect(try await h.readFdBytes("text/plain").data.count == 100_000)
        // Nothing in the blob directory: the data lives in memory only.
        let directory = h.server.stateDirectory + "/blobs"
        #expect(FileManager.default.fileExists(atPath: directory))
        let blobs = (try? FileManager.default.contentsOfDirectory(atPath: directory)) ?? []
        #expect(blobs.isEmpty, "\(blobs)")
        h.server.kill9()
        try await h.server.restart()
        #expect(try await h.types() == (2, []))
    }
}
