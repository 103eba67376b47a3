import DBus
import Foundation
import PasteboardModel
@testable import PasteboardServer
import Testing

/// ``CallerWatch`` in ``DescriptorReader``: once the caller has left, a pipe's transfer stops,
/// while a file's is read whole (its end is its size, and it is stored whoever is left).
struct CallerWatchTests {
    /// A watch that finds the caller gone at every question, asked at once.
    static func gone() -> CallerWatch {
        CallerWatch(interval: .zero) { true }
    }

    static func reader(watch: CallerWatch) throws -> DescriptorReader {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("caller-watch-\(getpid())-\(UInt32.random(in: 0 ... .max))").path
        try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
        return DescriptorReader(payloads: PayloadWriter(blobDirectory: directory), maxBytes: 1 << 30, idleTimeoutMilliseconds: 10_000, watch: watch)
    }

    @Test func aPipeWhoseCallerLeftIsGivenUp() throws {
        let reader = try Self.reader(watch: Self.gone())
        let pipe = try Descriptors.pipe(holding: TransferSpeedPathTests.bytes(60_000, seed: 31))
        do throws(PasteboardError) {
            _ = try reader.read(TransferSource(pipe.rawValue), label: "text/plain of item 0")
            Issue.record("a pipe whose caller left was read to its end")
        } catch {
            #expect(error.code == .invalidArgument && error.message.contains("left the bus"), "\(error)")
        }
    }

    /// The first cut of the watch stopped these too, so that a large memfd handed over by a
    /// client that then exited was dropped, where it is stored.
    @Test func aFileWhoseCallerLeftIsReadWhole() throws {
        let reader = try Self.reader(watch: Self.gone())
        let data = TransferSpeedPathTests.bytes(3 << 20, seed: 32)
        let memfd = try TransferSpeedPathTests.memfd(data)
        let payload = try reader.read(TransferSource(memfd.rawValue), label: "text/plain of item 0")
        #expect(payload.size == UInt64(data.count))
    }
}
