import DBus
import Foundation
import Testing
import TestSupport

/// The last large file let go of is overwritten by the next large write, but only when no
/// reader still has it open: a descriptor from `ReadFd` keeps reading what it was given.
///
/// With `history-depth=0` the contents a write replaces are let go of at once.
struct SpareBlobFileTests {
    static let type = "application/octet-stream"

    static func bytes(_ count: Int, seed: UInt8) -> [UInt8] {
        (0..<count).map { UInt8(truncatingIfNeeded: $0 &* 7 &+ Int(seed)) }
    }

    private static func spares(_ h: Harness) throws -> [String] {
        try FileManager.default.contentsOfDirectory(atPath: blobs(h)).filter { $0.hasPrefix("spare-") }
    }

    @Test(.timeLimit(.minutes(5)))
    func aFileReusedForSmallerDataHoldsExactlyThatData() async throws {
        let h = try await Harness(limits: ["history-depth=0"])
        let first = Self.bytes(3 << 20, seed: 1), second = Self.bytes(2 << 20, seed: 2), third = Self.bytes((3 << 19) + 5, seed: 3)
        #expect(try await h.writeFd([[(Self.type, try Descriptors.file(first))]], to: "big") == 1)
        #expect(try await h.writeFd([[(Self.type, try Descriptors.file(second))]], to: "big") == 2)
        // The first file is the spare now; the third write overwrites it and cuts it to size.
        #expect(await eventually(timeout: .seconds(20)) { (try? Self.spares(h).count) == 1 })
        let sparePath = Self.blobs(h) + "/" + (try #require(try Self.spares(h).first))
        let spareInode = try Self.inode(sparePath)
        // A stored file is read-only, for readers given it by ReadFd; the spare is to be written
        // (by a server not running as root, whom the mode would stop).
        #expect(try Self.mode(sparePath) == 0o600)
        #expect(try await h.writeFd([[(Self.type, try Descriptors.file(third))]], to: "big") == 3)
        #expect(try await h.readFdBytes(Self.type, in: "big") == (3, third))
        #expect(try Self.blobNames(withInode: spareInode, h) == 1, "the spare was not overwritten")
        for blob in try FileManager.default.contentsOfDirectory(atPath: Self.blobs(h)) where !blob.hasPrefix("spare-") {
            #expect(try Self.mode(Self.blobs(h) + "/" + blob) == 0o400, "\(blob)")
        }

        // Named and committed like any other: a restart reads it back, and no spare is left.
        #expect(await h.server.terminate() == 0)
        #expect(try Self.spares(h).isEmpty)
        try await h.server.restart()
        #expect(try await h.readFdBytes(Self.type, in: "big") == (3, third))
    }

    private static func blobs(_ h: Harness) -> String {
        h.server.stateDirectory + "/blobs"
    }

    /// The inode number of the file at `path`.
    private static func inode(_ path: String) throws -> UInt {
        var info = stat()
        guard stat(path, &info) == 0 else { throw TestSupportError("stat \(path): \(String(cString: strerror(errno)))") }
        return UInt(info.st_ino)
    }

    /// The permission bits of the file at `path`.
    private static func mode(_ path: String) throws -> UInt32 {
        var info = stat()
        guard stat(path, &info) == 0 else { throw TestSupportError("stat \(path): \(String(cString: strerror(errno)))") }
        return UInt32(info.st_mode) & 0o777
    }

    /// How many blob files (not spares) are the file `inode`: 1 when a spare was overwritten and
    /// became a blob.
    private static func blobNames(withInode inode: UInt, _ h: Harness) throws -> Int {
        try FileManager.default.contentsOfDirectory(atPath: blobs(h))
            .filter { !$0.hasPrefix("spare-") }
            .filter { try Self.inode(blobs(h) + "/" + $0) == inode }
            .count
    }

    @Test(.timeLimit(.minutes(5)))
    func aPipeOfUnknownLengthOverwritesTheSpareToo() async throws {
        let h = try await Harness(limits: ["history-depth=0"])
        #expect(try await h.writeFd([[(Self.type, try Descriptors.file(Self.bytes(2 << 20, seed: 8)))]], to: "big") == 1)
        #expect(try await h.writeFd([[(Self.type, try Descriptors.file(Self.bytes(2 << 20, seed: 9)))]], to: "big") == 2)
        #expect(await eventually(timeout: .seconds(20)) { (try? Self.spares(h).count) == 1 })
        let spare = try #require(try Self.spares(h).first)
        let spareInode = try Self.inode(Self.blobs(h) + "/" + spare)

        // 3 MiB and 5 bytes through a pipe: its length is known only at its end.
        let piped = Self.bytes(3 << 20, seed: 10) + [1, 2, 3, 4, 5]
        let (readEnd, feeder) = try PipeFeeder.start(count: 4) { index in
            index < 3 ? Array(piped[(index << 20)..<((index + 1) << 20)]) : Array(piped[(3 << 20)...])
        }
        #expect(try await h.writeFd([[(Self.type, readEnd)]], to: "big") == 3)
        #expect(await feeder.wait())
        #expect(try await h.readFdBytes(Self.type, in: "big") == (3, piped))
        // The spare's file now holds the piped data, under a blob's name.
        #expect(try Self.blobNames(withInode: spareInode, h) == 1, "the spare was not overwritten")
    }

    @Test(.timeLimit(.minutes(5)))
    func aFileAReaderStillHoldsIsNeverOverwritten() async throws {
        let h = try await Harness(limits: ["history-depth=0"])
        let first = Self.bytes(2 << 20, seed: 4)
        #expect(try await h.writeFd([[(Self.type, try Descriptors.file(first))]], to: "big") == 1)
        let (_, held) = try await h.readFd(Self.type, in: "big")
        var info = stat()
        #expect(fstat(held.rawValue, &info) == 0)
        let firstInode = UInt(info.st_ino)
        // The first file is let go of while the reader holds it, and becomes the spare.
        #expect(try await h.writeFd([[(Self.type, try Descriptors.file(Self.bytes(2 << 20, seed: 5)))]], to: "big") == 2)
        #expect(await eventually(timeout: .seconds(20)) { (try? Self.spares(h).count) == 1 })
        // The writes after it must not overwrite it.
        for (index, seed) in [UInt8(6), 7].enumerated() {
            let next = Self.bytes(2 << 20, seed: seed)
            #expect(try await h.writeFd([[(Self.type, try Descriptors.file(next))]], to: "big") == UInt64(index + 3))
            #expect(try await h.readFdBytes(Self.type, in: "big").data == next)
            #expect(try Self.blobNames(withInode: firstInode, h) == 0, "the held file became a blob again")
        }
        #expect(try Descriptors.readAll(held) == first)
    }
}
