import DBus
import Foundation
import Testing
import TestSupport

/// A damaged store is detected and reported at start, keeping what can be kept, never wiped.
struct StoreRecoveryTests {
    @Test func anUnreadableDatabaseIsMovedAsideNotWiped() async throws {
        let h = try await Harness()
        try await h.write(text: "before the damage")
        #expect(await h.server.terminate() == 0)
        let database = h.server.stateDirectory + "/pasteboards.sqlite"
        let handle = try #require(FileHandle(forWritingAtPath: database))
        try handle.write(contentsOf: Data(repeating: 0x5A, count: 100))
        try handle.close()
        let damaged = try Data(contentsOf: URL(fileURLWithPath: database))
        try? FileManager.default.removeItem(atPath: database + "-wal")

        try await h.server.restart()
        // The server runs on a new, empty store, and says where the old one went.
        #expect(try await h.changeCount() == 0)
        #expect(try await h.write(text: "after") == 1)
        #expect(h.server.log.contains("moved, untouched"), "\(h.server.log)")
        let folders = try FileManager.default.contentsOfDirectory(atPath: h.server.stateDirectory).filter { $0.hasPrefix("corrupt-") }
        #expect(folders.count == 1)
        let kept = try Data(contentsOf: URL(fileURLWithPath: h.server.stateDirectory + "/" + folders[0] + "/pasteboards.sqlite"))
        #expect(kept == damaged)
    }

    /// A store that cannot take a file says why and what to do, not "free some disk space"
    /// whatever the cause: here its blob folder was deleted under it. The server goes on, and
    /// small data (which needs no file of its own) is still written.
    @Test func aStoreThatCannotTakeAFileSaysWhy() async throws {
        let h = try await Harness()
        try await h.write(text: "before")
        try FileManager.default.removeItem(atPath: h.server.stateDirectory + "/blobs")
        let error = await h.expectFailure("QuotaExceeded", "WriteItems", [.string("general"), Harness.inlineItems([[("application/x-large", Array(repeating: 1, count: 200_000))]]), Harness.options([])])
        #expect(error?.message.contains("No such file or directory); the state directory is gone; restart the server") == true, "\(String(describing: error))")
        #expect(error?.message.contains("disk space") == false)
        #expect(try await h.readData("text/plain;charset=utf-8").data == "before".bytes)
        #expect(try await h.write(text: "small") == 2)
    }

    /// A state directory deleted under the running server: its database, still open, takes no
    /// more changes (SQLite sees it moved). Small writes answered from the commit log would be
    /// lost (the log is a deleted file too), so once the database has refused the log's changes
    /// the log takes no more: within a save's delay, writes fail with a contract error that
    /// says why and what to do, instead of being answered and lost. Reads go on.
    @Test func aDeletedStateDirectoryRefusesWritesInsteadOfLosingThem() async throws {
        let h = try await Harness()
        try await h.write(text: "before")
        try FileManager.default.removeItem(atPath: h.server.stateDirectory)
        var answered: [String] = []
        var refusal: DBusError?
        let deadline = ContinuousClock.now + .seconds(10)
        while refusal == nil, ContinuousClock.now < deadline {
            let text = "after \(answered.count)"
            do {
                _ = try await h.write(text: text)
                answered.append(text)
            } catch let error as DBusError {
                refusal = error
            }
            try await Task.sleep(for: .milliseconds(20))
        }
        let error = try #require(refusal, "\(answered.count) writes were answered after the store was deleted")
        #expect(error.name == Harness.errorPrefix + "QuotaExceeded", "\(error)")
        #expect(error.message.contains("deleted or moved") && error.message.contains("restart the server"), "\(error.message)")
        // The refusal lasts; the server goes on answering reads with what it holds.
        await h.expectFailure("QuotaExceeded", "WriteItems", [.string("general"), Harness.inlineItems([[("text/plain", Array("refused".utf8))]]), Harness.options([])])
        let last = answered.last ?? "before"
        #expect(try await h.readData("text/plain;charset=utf-8").data == Array(last.utf8))
        #expect(try await h.changeCount() == UInt64(1 + answered.count))
        // The save of what the log answered is tried again every second, and fails the same
        // way each time: said at the first failure and the tenth (a loaded machine may be
        // there by now), not once a second for as long as the server runs.
        if !answered.isEmpty {
            try await Task.sleep(for: .seconds(3.5))
            #expect(h.server.log.components(separatedBy: "could not apply the commit log").count - 1 <= 2, "\(h.server.log)")
        }
    }

    /// The first refusal may come to a write that takes the service queue (large data), while
    /// the log's own save has not yet met the deleted database: small writes right after it
    /// are refused too, not answered from the log.
    @Test func aRefusedLargeWriteStopsTheLogToo() async throws {
        let h = try await Harness()
        try await h.write(text: "before")
        try FileManager.default.removeItem(atPath: h.server.stateDirectory)
        await h.expectFailure("QuotaExceeded", "WriteItems", [.string("general"), Harness.inlineItems([[("application/x-large", Array(repeating: 1, count: 300_000))]]), Harness.options([])])
        for round in 0..<5 {
            await h.expectFailure("QuotaExceeded", "WriteItems", [.string("general"), Harness.inlineItems([[("text/plain", Array("small \(round)".utf8))]]), Harness.options([])])
        }
        #expect(try await h.readData("text/plain;charset=utf-8").data == Array("before".utf8))
    }

    @Test func aMissingBlobFileLosesOnlyItsData() async throws {
        let h = try await Harness()
        let big = (0..<200_000).map { UInt8(truncatingIfNeeded: $0) }
        try await h.writeFd([[("application/octet-stream", try Descriptors.file(big))], [("text/plain", try Descriptors.file(Array("small".utf8)))]], to: "mixed")
        try await h.write(text: "untouched", to: "other")
        #expect(await h.server.terminate() == 0)
        let blobs = h.server.stateDirectory + "/blobs"
        for file in try FileManager.default.contentsOfDirectory(atPath: blobs) {
            try FileManager.default.removeItem(atPath: blobs + "/" + file)
        }
        try await h.server.restart()
        #expect(h.server.log.contains("missing or truncated"), "\(h.server.log)")
        // The item whose data is gone is dropped; the rest is kept as it was.
        #expect(try await h.types("mixed") == (1, ["text/plain"]))
        #expect(try await h.readData("text/plain", in: "mixed").data == Array("small".utf8))
        #expect(try await h.readData("text/plain;charset=utf-8", in: "other").data == Array("untouched".utf8))
        // The loss is told once: the next start finds nothing wrong, and keeps the rest.
        #expect(await h.server.terminate() == 0)
        try await h.server.restart()
        #expect(h.server.log.components(separatedBy: "missing or truncated").count == 2, "\(h.server.log)")
        #expect(try await h.types("mixed") == (1, ["text/plain"]))
        #expect(try await h.readData("text/plain", in: "mixed").data == Array("small".utf8))
    }

    /// A file that cannot be checked at a start (here a symlink loop, which `stat` fails with
    /// ELOOP; permissions would do the same for a user other than root) is not a lost file: its
    /// row stays, and once the file can be read again its data is back.
    @Test func aBlobFileThatCannotBeCheckedIsLeftOutButKept() async throws {
        let h = try await Harness()
        let big = (0..<200_000).map { UInt8(truncatingIfNeeded: $0 &* 3) }
        try await h.writeFd([[("application/octet-stream", try Descriptors.file(big))], [("text/plain", try Descriptors.file(Array("small".utf8)))]], to: "mixed")
        #expect(await h.server.terminate() == 0)
        let blobs = h.server.stateDirectory + "/blobs"
        let file = try #require(try FileManager.default.contentsOfDirectory(atPath: blobs).first { !$0.hasPrefix("spare-") })
        let aside = h.server.stateDirectory + "/aside"
        try FileManager.default.moveItem(atPath: blobs + "/" + file, toPath: aside)
        try FileManager.default.createSymbolicLink(atPath: blobs + "/" + file, withDestinationPath: file)

        try await h.server.restart()
        #expect(h.server.log.contains("cannot be checked"), "\(h.server.log)")
        #expect(!h.server.log.contains("missing or truncated"), "\(h.server.log)")
        #expect(try await h.types("mixed") == (1, ["text/plain"]))

        #expect(await h.server.terminate() == 0)
        try FileManager.default.removeItem(atPath: blobs + "/" + file)
        try FileManager.default.moveItem(atPath: aside, toPath: blobs + "/" + file)
        try await h.server.restart()
        #expect(try await h.types("mixed") == (1, ["application/octet-stream", "text/plain"]))
        #expect(try await h.readFdBytes("application/octet-stream", in: "mixed").data == big)
    }
}
