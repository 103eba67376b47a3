import DBus
import Foundation
import Testing
import TestSupport

/// The write option `owner-only`: only connections of the writing process (the same unix
/// process id) read the data; other processes get `AccessDenied` from `ReadData`, `ReadBest`
/// and `ReadFd`, while the types stay listed for everyone.
struct OwnerOnlyTests {
    static let text = "text/plain;charset=utf-8"
    static let ownerOnly: [(String, DBusValue)] = [("owner-only", .boolean(true))]
    static let accessDenied = Harness.errorPrefix + "AccessDenied"

    /// Records an issue unless every connection of this process reads `name`'s item 0 as `data`.
    func expectOwnerReads(_ h: Harness, _ name: String, _ type: String, _ data: [UInt8], count: UInt64, sourceLocation: SourceLocation = #_sourceLocation) async throws {
        let second = try h.connect()
        defer { second.close() }
        for connection in [h.client, second] {
            let read = try await h.call("ReadData", [.string(name), .uint32(0), .string(type), .uint64(0)], on: connection)
            #expect(read.first?.uint64Value == count && read.last?.bytesValue == data, "\(read)", sourceLocation: sourceLocation)
            let best = try await h.call("ReadBest", [.string(name), .uint32(0), .strings([type]), .uint64(count)], on: connection)
            #expect(best.count == 3 && best[1].stringValue == type && best.last?.bytesValue == data, "\(best)", sourceLocation: sourceLocation)
            let fd = try #require(try await h.call("ReadFd", [.string(name), .uint32(0), .string(type), .uint64(count)], on: connection).last?.fileDescriptorValue)
            #expect(try Descriptors.readAll(fd) == data, sourceLocation: sourceLocation)
        }
    }

    /// Records an issue unless `pbctl paste` of `name` (another process) is denied.
    func expectPbctlDenied(_ h: Harness, _ name: String = "general", sourceLocation: SourceLocation = #_sourceLocation) async throws {
        let paste = try await OtherProcess.pbctl(h, "-p", name, "paste")
        #expect(paste.status == 65, "\(paste)", sourceLocation: sourceLocation)
        #expect(paste.out.isEmpty, "\(paste)", sourceLocation: sourceLocation)
        #expect(paste.err.hasPrefix("pbctl: ") && paste.err.contains("owner-only") && paste.err.hasSuffix("\n"), "\(paste)", sourceLocation: sourceLocation)
        #expect(paste.err.split(separator: "\n").count == 1, "\(paste)", sourceLocation: sourceLocation)
    }

    @Test func theWritingProcessReadsAndOthersAreDenied() async throws {
        let h = try await Harness()
        let signals = try await h.recordSignals()
        #expect(try await h.write([[(Self.text, "mine".bytes), ("text/html", "<b>mine</b>".bytes)]], options: Self.ownerOnly) == 1)
        // The types are announced and listed as usual.
        #expect(await signals.announcements(1) == [Announcement("general", 1, [Self.text, "text/html"])])
        try await expectOwnerReads(h, "general", Self.text, "mine".bytes, count: 1)

        // pbctl, another process: denied, exit 65 with the server's message; its types still list.
        try await expectPbctlDenied(h)
        let types = try await OtherProcess.pbctl(h, "types")
        #expect(types.status == 0 && types.out == "\(Self.text)\ntext/html\n", "\(types)")

        // gdbus, another process: the contract's error name.
        let read = try await OtherProcess.gdbusCall(h, "ReadData", "general", "0", Self.text, "0")
        #expect(read.status != 0)
        #expect(read.err.contains("GDBus.Error:\(Self.accessDenied): "), "\(read)")
        let best = try await OtherProcess.gdbusCall(h, "ReadBest", "general", "0", "['text/plain']", "0")
        #expect(best.err.contains("GDBus.Error:\(Self.accessDenied): "), "\(best)")
        let listed = try await OtherProcess.gdbusCall(h, "Types", "general")
        #expect(listed.out == "(uint64 1, ['\(Self.text)', 'text/html'])\n", "\(listed)")

        // dbus-python, another process: every read method is denied, every listing answers.
        let answers = try await OtherProcess.python(h, """
            u, t = dbus.UInt32(0), dbus.UInt64(0)
            count, items = pb.Items('general')
            print(json.dumps({
                'ReadData': error_name(lambda: pb.ReadData('general', u, 'text/plain;charset=utf-8', t, signature='sust')),
                'ReadBest': error_name(lambda: pb.ReadBest('general', u, ['text/plain'], t, signature='suast')),
                'ReadFd': error_name(lambda: pb.ReadFd('general', u, 'text/html', t, signature='sust')),
                'Types': [str(x) for x in pb.Types('general')[1]],
                'Items': [[str(x) for x in item['types']] for item in items],
                'CanRead': bool(pb.CanRead('general', ['text/plain'], signature='sas')),
                'AvailableType': str(pb.AvailableType('general', ['text/plain'], signature='sas')),
            }))
            """)
        for method in ["ReadData", "ReadBest", "ReadFd"] {
            #expect(answers[method] as? String == Self.accessDenied, "\(method): \(String(describing: answers[method]))")
        }
        #expect(answers["Types"] as? [String] == [Self.text, "text/html"])
        #expect(answers["Items"] as? [[String]] == [[Self.text, "text/html"]])
        #expect(answers["CanRead"] as? Bool == true)
        #expect(answers["AvailableType"] as? String == "text/plain")

        // Denied reads change nothing, and the owner still reads.
        #expect(try await h.changeCount() == 1)
        try await expectOwnerReads(h, "general", "text/html", "<b>mine</b>".bytes, count: 1)
    }

    @Test func writeItemsFdTakesTheOptionToo() async throws {
        let h = try await Harness()
        let data = payload(repeating: "private", count: 200_000)
        #expect(try await h.writeFd([[("application/octet-stream", try Descriptors.file(data))]], to: "big", options: Self.ownerOnly) == 1)
        #expect(try await h.readFdBytes("application/octet-stream", in: "big") == (1, data))
        try await expectPbctlDenied(h, "big")
        let fd = try await OtherProcess.gdbusCall(h, "ReadData", "big", "0", "application/octet-stream", "0")
        #expect(fd.err.contains("GDBus.Error:\(Self.accessDenied): "), "\(fd)")
    }

    @Test func theOwnerStillReadsAfterACrash() async throws {
        let h = try await Harness()
        #expect(try await h.write([[(Self.text, "mine".bytes)]], options: Self.ownerOnly) == 1)
        h.server.kill9()
        try await h.server.restart()
        try await expectOwnerReads(h, "general", Self.text, "mine".bytes, count: 1)
        try await expectPbctlDenied(h)
    }

    /// `owner-only` belongs to the items written with it: appended items, by the owner or by
    /// another process, keep their own handling, and a plain write or a clear ends it.
    @Test func ownerOnlyBelongsToTheItemsWrittenWithIt() async throws {
        let h = try await Harness()
        #expect(try await h.write([[(Self.text, "mine".bytes)]], options: Self.ownerOnly) == 1)
        // Plain items appended by the owner are open to all; its own stays private.
        #expect(try await h.write([[(Self.text, "more".bytes)]], options: [("append", .boolean(true))]) == 2)
        try await expectPbctlDenied(h)
        let more = try await OtherProcess.pbctl(h, "paste", "--item", "1")
        #expect(more.status == 0 && more.out == "more" && more.err.isEmpty, "\(more)")

        // Another process appends an item of its own: it reads it, not the owner's; the owner reads both.
        let other = try await OtherProcess.python(h, """
            count = pb.WriteItems('general', [{'text/plain': dbus.ByteArray(b'theirs')}], {'append': dbus.Boolean(True)}, signature='saa{say}a{sv}')
            own = pb.ReadData('general', dbus.UInt32(2), 'text/plain', dbus.UInt64(0), signature='sust', byte_arrays=True)
            print(json.dumps({
                'count': int(count),
                'own': bytes(own[1]).decode(),
                'owners': error_name(lambda: pb.ReadData('general', dbus.UInt32(0), 'text/plain;charset=utf-8', dbus.UInt64(0), signature='sust')),
            }))
            """)
        #expect(other["count"] as? Int == 3)
        #expect(other["own"] as? String == "theirs")
        #expect(other["owners"] as? String == Self.accessDenied)
        #expect(try await h.readData("text/plain", item: 2).data == "theirs".bytes)
        let owned = try #require(try await h.call("Items", [.string("general")]).last?.arrayValue).map { item in
            item.dictionaryEntries?.first { $0.key == .string("owner-only") }?.value.variantValue?.boolValue
        }
        #expect(owned == [true, nil, nil])
        try await expectOwnerReads(h, "general", Self.text, "mine".bytes, count: 3)

        // A plain write replacing it all is open to all.
        #expect(try await h.write(text: "open") == 4)
        let paste = try await OtherProcess.pbctl(h, "paste")
        #expect(paste.status == 0 && paste.out == "open" && paste.err.isEmpty, "\(paste)")
        // Owner-only items appended to open ones leave those open.
        #expect(try await h.write([[(Self.text, "secret".bytes)]], options: Self.ownerOnly + [("append", .boolean(true))]) == 5)
        let open = try await OtherProcess.pbctl(h, "paste")
        #expect(open.status == 0 && open.out == "open", "\(open)")
        let secret = try await OtherProcess.pbctl(h, "paste", "--item", "1")
        #expect(secret.status == 65 && secret.out.isEmpty && secret.err.contains("owner-only"), "\(secret)")
        // Clearing ends it.
        #expect(try await h.clear() == 6)
        #expect(try await h.write([[(Self.text, "open again".bytes)]], options: [("append", .boolean(true))]) == 7)
        let again = try await OtherProcess.pbctl(h, "paste")
        #expect(again.status == 0 && again.out == "open again", "\(again)")
    }

    /// After a reboot a process id names another process: owner-only data stored before it is
    /// nobody's to read, in the history too; other data is untouched.
    @Test func afterARebootOwnerOnlyDataIsNobodys() async throws {
        let h = try await Harness()
        #expect(try await h.write([[(Self.text, "mine".bytes)]], options: Self.ownerOnly) == 1)
        try await h.write(text: "open", to: "plain")
        #expect(try await h.readData(Self.text) == (1, "mine".bytes))
        #expect(await h.server.terminate() == 0)
        // As a store left by an earlier boot: its boot id is another.
        let database = h.server.storeDirectory + "/pasteboards.sqlite"
        let script = "import sqlite3, sys; db = sqlite3.connect(sys.argv[1]); db.execute(\"UPDATE meta SET value = 'an-earlier-boot' WHERE key = 'boot_id'\"); db.commit()"
        let made = try await runProgram(try Paths.executable(named: "python3"), ["-c", script, database])
        try #require(made.status == 0, "\(made)")
        try await h.server.restart()
        await h.expectFailure("AccessDenied", "ReadData", [.string("general"), .uint32(0), .string(Self.text), .uint64(0)])
        #expect(try await h.readData(Self.text, in: "plain") == (1, "open".bytes))
        #expect(try await h.types() == (1, [Self.text]))
    }

    /// Owner-only contents enter the history with their owner: restored, by anyone and after a
    /// crash, they stay private.
    @Test func aRestoredOwnerOnlyGenerationStaysPrivate() async throws {
        let h = try await Harness()
        #expect(try await h.write([[(Self.text, "mine".bytes)]], options: Self.ownerOnly) == 1)
        #expect(try await h.write(text: "open") == 2)
        h.server.kill9()
        try await h.server.restart()
        let history = try await h.call("History", [.string("general"), .uint32(0)])
        #expect(history.first?.arrayValue?.compactMap { $0.structureFields?.first?.uint64Value } == [2, 1])
        let restore = try await OtherProcess.pbctl(h, "restore", "1")
        #expect(restore.status == 0, "\(restore)")
        try await expectPbctlDenied(h)
        try await expectOwnerReads(h, "general", Self.text, "mine".bytes, count: 3)
    }
}
