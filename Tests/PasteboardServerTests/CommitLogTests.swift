import DBus
import Foundation
import Testing
import TestSupport

/// A small write is answered once it is recorded in the commit log, before the database has
/// it: it must survive `kill -9` from there, be applied once, and a damaged record must cost
/// only itself.
///
/// The store is held by another process (see ``FailedCommitTests/lockStore(_:seconds:)``), so
/// that the recorded change cannot reach the database before the server is killed.
struct CommitLogTests {
    static let type = "text/plain;charset=utf-8"

    private static func readText(_ h: Harness, _ name: String) async throws -> (count: UInt64, text: String) {
        let (count, data) = try await h.readData(type, in: name)
        return (count, String(decoding: data, as: UTF8.self))
    }

    @Test(.timeLimit(.minutes(5)))
    func aWriteAnsweredWhileTheStoreIsHeldSurvivesKill9() async throws {
        let h = try await Harness()
        #expect(try await h.write(text: "one", to: "p") == 1)
        let locker = try await FailedCommitTests.lockStore(h, seconds: 60, untilReleased: true)

        // Answered, though the database cannot take it: the store is held until the server is
        // killed, so a write that waited for it would fail with the busy timeout instead.
        #expect(try await h.write(text: "two", to: "p") == 2)
        #expect(try await Self.readText(h, "p") == (2, "two"))
        h.server.kill9()
        locker.send(Data())
        _ = try await locker.wait(timeout: .seconds(20))

        try await h.server.restart()
        #expect(h.server.log.contains("applied 1 change(s) left in the commit log"), "\(h.server.log)")
        #expect(try await Self.readText(h, "p") == (2, "two"))
        let history = try await h.call("History", [.string("p"), .uint32(0)])
        let counts = history.first?.arrayValue?.compactMap { $0.structureFields?.first?.uint64Value }
        #expect(counts == [2, 1])
        // And the next change follows on.
        #expect(try await h.write(text: "three", to: "p") == 3)
    }

    @Test(.timeLimit(.minutes(5)))
    func everyPartOfARecordedChangeComesBack() async throws {
        let h = try await Harness()
        let big = (0..<200_000).map { UInt8(truncatingIfNeeded: $0) }
        try await h.writeFd([[("application/octet-stream", try Descriptors.file(big))]], to: "mixed")
        let writer = try h.connect()
        try writer.export(TestProvider(["text/x-later": Array("promised".utf8)]), at: "/org/pasteboardd/Provider1")
        let promised = try await h.call("WritePromised", [.string("promised"), .array(element: "as", [.strings(["text/x-later"])]), Harness.options([])], on: writer)
        #expect(promised.first?.uint64Value == 1)
        // Held until the server is killed, however long a loaded machine takes to get there.
        let locker = try await FailedCommitTests.lockStore(h, seconds: 60, untilReleased: true)
        // Appended to a promise: the record holds the promise too.
        #expect(try await h.write([[("text/plain", Array("b".utf8))]], to: "promised", options: [("append", .boolean(true))]) == 2)
        // Appended to a blob, two items of several types, an expiry; a concealed write; a clear.
        #expect(try await h.write(
            [[("text/plain", Array("a".utf8)), ("text/html", Array("<b>a</b>".utf8))], [("image/png", [0x89, 0x50])]],
            to: "mixed", options: [("append", .boolean(true)), ("expires-in-ms", .uint64(600_000))]) == 2)
        #expect(try await h.write(text: "to be cleared", to: "cleared") == 1)
        #expect(try await h.write([[("text/plain", Array("hunter2-in-the-log".utf8))]], to: "secret", options: [("concealed", .boolean(true))]) == 1)
        StateFiles.expectAbsent("hunter2-in-the-log", from: h.server, "while recorded")
        #expect(try await h.clear("cleared") == 2)
        let before = try await h.snapshot("mixed")
        h.server.kill9()
        locker.send(Data())
        _ = try await locker.wait(timeout: .seconds(20))

        try await h.server.restart()
        #expect(try await h.snapshot("mixed") == before)
        #expect(try await h.readFdBytes("application/octet-stream", in: "mixed").data == big)
        #expect(try await h.types("mixed").types == ["application/octet-stream", "text/plain", "text/html", "image/png"])
        // Concealed data never reaches the disk, so it vanished with the restart: a change.
        #expect(try await h.types("secret") == (2, []))
        StateFiles.expectAbsent("hunter2-in-the-log", from: h.server, "after the restart")
        #expect(try await h.types("cleared") == (2, []))
        #expect(try await h.types("promised") == (2, ["text/x-later", "text/plain"]))
        #expect(try await h.readData("text/x-later", in: "promised") == (2, Array("promised".utf8)))
        #expect(try await h.listPasteboards() == ["cleared", "mixed", "promised", "secret"])
    }

    @Test(.timeLimit(.minutes(5)))
    func aChangeTheDatabaseAlreadyHasIsNotAppliedAgain() async throws {
        let h = try await Harness()
        #expect(try await h.write(text: "one", to: "p") == 1)
        let log = h.server.stateDirectory + "/commits.log"
        let locker = try await FailedCommitTests.lockStore(h, seconds: 60, untilReleased: true)
        #expect(try await h.write(text: "two", to: "p") == 2)
        // The log as a server killed after its commit, but before it started the log over,
        // would leave it.
        let recorded = try Data(contentsOf: URL(fileURLWithPath: log))
        locker.send(Data())
        _ = try await locker.wait(timeout: .seconds(20))
        #expect(try await h.write(text: "three", to: "p") == 3)
        #expect(await h.server.terminate() == 0)
        try recorded.write(to: URL(fileURLWithPath: log))

        try await h.server.restart()
        #expect(!h.server.log.contains("left in the commit log"), "\(h.server.log)")
        #expect(try await Self.readText(h, "p") == (3, "three"))
        let history = try await h.call("History", [.string("p"), .uint32(0)])
        let counts = history.first?.arrayValue?.compactMap { $0.structureFields?.first?.uint64Value }
        #expect(counts == [3, 2, 1])
    }

    @Test(.timeLimit(.minutes(5)))
    func aDamagedRecordIsLeftOutAndReported() async throws {
        let h = try await Harness()
        #expect(try await h.write(text: "one", to: "p") == 1)
        #expect(try await h.write(text: "kept", to: "q") == 1)
        let locker = try await FailedCommitTests.lockStore(h, seconds: 60, untilReleased: true)
        #expect(try await h.write(text: "two", to: "p") == 2)
        h.server.kill9()
        locker.send(Data())
        _ = try await locker.wait(timeout: .seconds(20))
        // A byte of the record's payload (after the 64-byte header and the record's 24) changes.
        let log = h.server.stateDirectory + "/commits.log"
        let handle = try #require(FileHandle(forUpdatingAtPath: log))
        try handle.seek(toOffset: 64 + 24 + 4)
        let byte = try #require(handle.readData(ofLength: 1).first)
        try handle.seek(toOffset: 64 + 24 + 4)
        try handle.write(contentsOf: Data([byte ^ 0xFF]))
        try handle.close()

        try await h.server.restart()
        #expect(h.server.log.contains("damaged record"), "\(h.server.log)")
        #expect(try await Self.readText(h, "p") == (1, "one"))
        #expect(try await Self.readText(h, "q") == (1, "kept"))
        #expect(try await h.write(text: "after", to: "p") == 2)
    }

    /// The bytes past the log's last record are older records, holding clipboard data clients
    /// chose: the server writes a zero length after each record before the record, so that no
    /// run of those bytes can ever be read as a record of its own.
    @Test(.timeLimit(.minutes(5)))
    func theLogsEndIsMarkedOverWhateverLayBeyondIt() async throws {
        let h = try await Harness()
        #expect(try await h.write(text: "one", to: "p") == 1)
        #expect(await h.server.terminate() == 0)
        let log = h.server.stateDirectory + "/commits.log"
        var bytes = try Data(contentsOf: URL(fileURLWithPath: log))
        bytes.replaceSubrange(64..., with: Data(repeating: 0xA5, count: bytes.count - 64))
        try bytes.write(to: URL(fileURLWithPath: log))

        try await h.server.restart()
        let locker = try await FailedCommitTests.lockStore(h, seconds: 60, untilReleased: true)
        #expect(try await h.write(text: "two", to: "p") == 2)
        h.server.kill9()
        locker.send(Data())
        _ = try await locker.wait(timeout: .seconds(20))
        let recorded = try Data(contentsOf: URL(fileURLWithPath: log))
        let length = Int(recorded[64..<72].reversed().reduce(UInt64(0)) { $0 << 8 | UInt64($1) })
        #expect(length > 0 && length < 4096)
        let after = 64 + 24 + (length + 7) & ~7
        #expect(recorded[after..<after + 8].allSatisfy { $0 == 0 }, "\(Array(recorded[after..<after + 8]))")

        try await h.server.restart()
        #expect(!h.server.log.contains("damaged"), "\(h.server.log)")
        #expect(try await Self.readText(h, "p") == (2, "two"))
    }

    /// An append's rows are the whole contents: a small append to large contents held in the
    /// database is not recorded on the bus thread (its record would be far larger than the
    /// call), but takes the queue, and survives like any write.
    @Test func aSmallAppendToLargeContentsIsNotRecordedInTheLog() async throws {
        let h = try await Harness()
        let marker = uniqueMarker("large-contents")
        let items = (0..<6).map { index in [("application/octet-stream", payload(repeating: "\(marker)-\(index)", count: 60_000))] }
        #expect(try await h.write(items, to: "large") == 1)
        #expect(try await h.write([[("text/plain", Array("appended".utf8))]], to: "large", options: [("append", .boolean(true))]) == 2)
        #expect(!StateFiles.holding(marker, under: h.server.stateDirectory).contains("commits.log"))
        h.server.kill9()
        try await h.server.restart()
        #expect(try await h.items("large").items.count == 7)
        #expect(try await h.readData("text/plain", item: 6, in: "large") == (2, Array("appended".utf8)))
    }

    @Test func aLogThatIsNotACommitLogIsStartedOver() async throws {
        let h = try await Harness()
        #expect(try await h.write(text: "one", to: "p") == 1)
        #expect(await h.server.terminate() == 0)
        try Data(repeating: 0xA5, count: 5000).write(to: URL(fileURLWithPath: h.server.stateDirectory + "/commits.log"))

        try await h.server.restart()
        #expect(try await Self.readText(h, "p") == (1, "one"))
        #expect(try await h.write(text: "two", to: "p") == 2)
        h.server.kill9()
        try await h.server.restart()
        #expect(try await Self.readText(h, "p") == (2, "two"))
    }

    @Test func withoutACommitLogEveryWriteIsCommittedBeforeItsReply() async throws {
        let h = try await Harness()
        #expect(await h.server.terminate() == 0)
        // Something that cannot be a log stands where it goes.
        let log = h.server.stateDirectory + "/commits.log"
        try? FileManager.default.removeItem(atPath: log)
        try FileManager.default.createDirectory(atPath: log, withIntermediateDirectories: false)

        try await h.server.restart()
        #expect(h.server.log.contains("no commit log"), "\(h.server.log)")
        #expect(try await h.write(text: "one", to: "p") == 1)
        h.server.kill9()
        try await h.server.restart()
        #expect(try await Self.readText(h, "p") == (1, "one"))
    }
}
