import DBus
import Foundation
import Testing
import TestSupport

/// A state directory written by an earlier version (the v4 schema, where the history kept its
/// own copy of each generation's rows) opens with every count, item, history entry and blob.
struct StoreMigrationTests {
    /// The v4 schema, built with Python's sqlite3 as that version left it: `general` at count 3
    /// with two generations of history, `big` holding a blob file, `gone` removed at count 2,
    /// `mine` written owner-only by process 1 (not this one), `ours` by this process.
    static let v4Database = """
        import sqlite3, sys
        db = sqlite3.connect(sys.argv[1])
        db.executescript('''
        CREATE TABLE grdb_migrations (identifier TEXT NOT NULL PRIMARY KEY);
        INSERT INTO grdb_migrations VALUES ('v1'), ('v2: expiry and owner'), ('v3: history'), ('v4: volatile');
        CREATE TABLE pasteboard (name TEXT PRIMARY KEY NOT NULL, count INTEGER NOT NULL, listed INTEGER NOT NULL,
            changed_at INTEGER NOT NULL, expires_at INTEGER, owner_pid INTEGER, volatile INTEGER NOT NULL DEFAULT 0);
        CREATE TABLE representation (pasteboard TEXT NOT NULL REFERENCES pasteboard(name) ON DELETE CASCADE,
            item INTEGER NOT NULL, position INTEGER NOT NULL, type TEXT NOT NULL, size INTEGER NOT NULL, data BLOB, blob TEXT,
            PRIMARY KEY (pasteboard, item, position));
        CREATE TABLE generation (pasteboard TEXT NOT NULL REFERENCES pasteboard(name) ON DELETE CASCADE,
            count INTEGER NOT NULL, written_at INTEGER NOT NULL, PRIMARY KEY (pasteboard, count));
        CREATE TABLE generation_representation (pasteboard TEXT NOT NULL, count INTEGER NOT NULL, item INTEGER NOT NULL,
            position INTEGER NOT NULL, type TEXT NOT NULL, size INTEGER NOT NULL, data BLOB, blob TEXT,
            PRIMARY KEY (pasteboard, count, item, position),
            FOREIGN KEY (pasteboard, count) REFERENCES generation(pasteboard, count) ON DELETE CASCADE);
        INSERT INTO pasteboard VALUES ('general', 3, 1, 3000, NULL, NULL, 0), ('big', 1, 1, 1000, NULL, NULL, 0), ('gone', 2, 0, 2000, NULL, NULL, 0),
            ('mine', 1, 1, 1000, NULL, 1, 0);
        INSERT INTO representation VALUES ('general', 0, 0, 'text/plain;charset=utf-8', 5, CAST('third' AS BLOB), NULL),
            ('general', 0, 1, 'text/html', 9, CAST('<b>3</b>' || ' ' AS BLOB), NULL),
            ('big', 0, 0, 'application/octet-stream', 70000, NULL, 'blobfile'),
            ('mine', 0, 0, 'text/plain', 6, CAST('secret' AS BLOB), NULL);
        INSERT INTO generation VALUES ('general', 2, 2000), ('general', 1, 1000);
        INSERT INTO generation_representation VALUES ('general', 2, 0, 0, 'text/plain;charset=utf-8', 6, CAST('second' AS BLOB), NULL),
            ('general', 1, 0, 0, 'text/plain;charset=utf-8', 5, CAST('first' AS BLOB), NULL);
        ''')
        db.execute("INSERT INTO pasteboard VALUES ('ours', 1, 1, 1000, NULL, ?, 0)", (int(sys.argv[2]),))
        db.execute("INSERT INTO representation VALUES ('ours', 0, 0, 'text/plain', 4, CAST('ours' AS BLOB), NULL)")
        db.commit()
        """

    @Test func aVersion4StoreKeepsCountsContentsHistoryAndBlobs() async throws {
        let h = try await Harness()
        #expect(await h.server.terminate() == 0)
        let state = h.server.stateDirectory
        for file in try FileManager.default.contentsOfDirectory(atPath: state) where file.hasPrefix("pasteboards.sqlite") {
            try FileManager.default.removeItem(atPath: state + "/" + file)
        }
        let big = (0..<70_000).map { UInt8(truncatingIfNeeded: $0 &* 7) }
        try Data(big).write(to: URL(fileURLWithPath: state + "/blobs/blobfile"))
        let made = try await runProgram(try Paths.executable(named: "python3"), ["-c", Self.v4Database, state + "/pasteboards.sqlite", String(getpid())])
        try #require(made.status == 0, "\(made)")

        try await h.server.restart()
        #expect(try await h.changeCount() == 3)
        #expect(try await h.types() == (3, ["text/plain;charset=utf-8", "text/html"]))
        #expect(try await h.readData("text/plain;charset=utf-8").data == Array("third".utf8))
        #expect(try await historyCounts(h) == [3, 2, 1])
        #expect(try await h.changeCount("gone") == 2)
        #expect(try await h.listPasteboards().sorted() == ["big", "general", "mine", "ours"])
        // The pasteboard's owner moved to its rows: still private, in the history too, and
        // still its owner's (this process) to read.
        await h.expectFailure("AccessDenied", "ReadData", [.string("mine"), .uint32(0), .string("text/plain"), .uint64(0)])
        #expect(try await h.readData("text/plain", in: "ours") == (1, "ours".bytes))
        #expect(try await h.write(text: "open", to: "mine") == 2)
        #expect(try await h.readFdBytes("application/octet-stream", in: "big").data == big)

        // The migrated store is written, restarted and read again the new way.
        #expect(try await h.write(text: "fourth") == 4)
        #expect(await h.server.terminate() == 0)
        try await h.server.restart()
        #expect(try await h.readData("text/plain;charset=utf-8").data == Array("fourth".utf8))
        #expect(try await historyCounts(h) == [4, 3, 2, 1])
        // An earlier generation's own rows came across: restoring it gives its data back.
        #expect(try await h.call("Restore", [.string("general"), .uint64(1)]).first?.uint64Value == 5)
        #expect(try await h.readData("text/plain;charset=utf-8").data == Array("first".utf8))
        #expect(try await h.readFdBytes("application/octet-stream", in: "big").data == big)
        #expect(try await h.call("Restore", [.string("mine"), .uint64(1)]).first?.uint64Value == 3)
        await h.expectFailure("AccessDenied", "ReadData", [.string("mine"), .uint32(0), .string("text/plain"), .uint64(0)])
    }

    private func historyCounts(_ h: Harness) async throws -> [UInt64] {
        let history = try #require(try await h.call("History", [.string("general"), .uint32(0)]).first?.arrayValue)
        return history.compactMap { $0.structureFields?[0].uint64Value }
    }
}
