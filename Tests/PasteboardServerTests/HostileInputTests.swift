import CDBus
@testable import DBus
import Foundation
import Testing
import TestSupport

/// Bad input gets the contract's error name and leaves every stored pasteboard exactly as it
/// was. (Wrong signatures for every method: ``InterfaceTests``.)
struct HostileInputTests {
    static let invalidNames = [
        "", String(repeating: "a", count: 256), String(repeating: "é", count: 128),
        "tab\there", "new\nline", "nul-free\u{1B}escape", "del\u{7F}", "c1\u{85}control", "\r",
    ]

    static let invalidTypes = [
        "", " ", "text/ plain", "text /plain", "text plain", "text/plaïn", "テキスト",
        "application/" + String(repeating: "x", count: 244), "text/pl\tain", "text/plain\n", "text/ ; x", "com.example todo",
    ]

    /// Every method that takes a pasteboard name, called with `name` and otherwise valid
    /// arguments.
    static func callsNaming(_ name: String) throws -> [(String, [DBusValue])] {
        [
            ("ChangeCount", [.string(name)]),
            ("ClearContents", [.string(name)]),
            ("WriteItems", [.string(name), Harness.inlineItems([[("text/plain", [1])]]), Harness.options([])]),
            ("WriteItemsFd", [.string(name), Harness.descriptorItems([[("text/plain", try Descriptors.pipe(holding: [1]))]]), Harness.options([])]),
            ("Types", [.string(name)]),
            ("Items", [.string(name)]),
            ("AvailableType", [.string(name), .strings(["text/plain"])]),
            ("CanRead", [.string(name), .strings(["text/plain"])]),
            ("ReadData", [.string(name), .uint32(0), .string("text/plain"), .uint64(0)]),
            ("ReadBest", [.string(name), .uint32(0), .strings(["text/plain"]), .uint64(0)]),
            ("ReadFd", [.string(name), .uint32(0), .string("text/plain"), .uint64(0)]),
            ("Remove", [.string(name)]),
        ]
    }

    /// Every method that takes a type, called with `type` on `general` and otherwise valid
    /// arguments.
    static func callsWithType(_ type: String) throws -> [(String, [DBusValue])] {
        [
            ("WriteItems", [.string("general"), Harness.inlineItems([[(type, [1])]]), Harness.options([])]),
            ("WriteItems", [.string("general"), Harness.inlineItems([[("text/plain", [1]), (type, [2])]]), Harness.options([])]),
            ("WriteItems", [.string("general"), Harness.inlineItems([[("text/plain", [1])], [(type, [2])]]), Harness.options([])]),
            ("WriteItemsFd", [.string("general"), Harness.descriptorItems([[(type, try Descriptors.pipe(holding: [1]))]]), Harness.options([])]),
            ("AvailableType", [.string("general"), .strings(["text/plain", type])]),
            ("CanRead", [.string("general"), .strings([type, "text/plain"])]),
            ("ReadData", [.string("general"), .uint32(0), .string(type), .uint64(0)]),
            ("ReadBest", [.string("general"), .uint32(0), .strings(["text/plain", type]), .uint64(0)]),
            ("ReadFd", [.string("general"), .uint32(0), .string(type), .uint64(0)]),
        ]
    }

    /// A server holding `general` (two items, inline and file-backed data) and `other`.
    func storedHarness(limits: [String] = []) async throws -> (Harness, [Harness.Snapshot]) {
        let h = try await Harness(limits: limits)
        let large = (0..<100_000).map { UInt8(truncatingIfNeeded: $0 &* 31) }
        try await h.write([[("text/plain", "stored".bytes), ("text/html", "<p>stored</p>".bytes)], [("application/x-large", large)]])
        try await h.write(text: "other", to: "other")
        return (h, [try await h.snapshot("general"), try await h.snapshot("other")])
    }

    func expectUnchanged(_ h: Harness, _ before: [Harness.Snapshot], sourceLocation: SourceLocation = #_sourceLocation) async throws {
        #expect(try await h.snapshot("general") == before[0], sourceLocation: sourceLocation)
        #expect(try await h.snapshot("other") == before[1], sourceLocation: sourceLocation)
        #expect(try await h.listPasteboards().sorted() == ["general", "other"], sourceLocation: sourceLocation)
        #expect(h.server.processIdentifier != nil, "the server died", sourceLocation: sourceLocation)
    }

    @Test func invalidNamesAreRefused() async throws {
        let (h, before) = try await storedHarness()
        for name in Self.invalidNames {
            for (method, arguments) in try Self.callsNaming(name) {
                let error = await h.expectFailure("InvalidName", method, arguments)
                #expect(error?.message.contains("name") == true, "\(method): \(String(describing: error))")
            }
        }
        try await expectUnchanged(h, before)
    }

    @Test func namesAtTheLimitsAreAccepted() async throws {
        let h = try await Harness()
        for name in [String(repeating: "n", count: 255), String(repeating: "é", count: 127) + "x", "a", " ", "spaces inside", "emoji 📋", "slash/and.dots"] {
            #expect(try await h.write(text: name, to: name) == 1, "\(name.utf8.count) bytes")
            #expect(try await h.readData("text/plain;charset=utf-8", in: name).data == name.bytes)
        }
    }

    @Test func invalidTypesAreRefused() async throws {
        let (h, before) = try await storedHarness()
        for type in Self.invalidTypes {
            for (method, arguments) in try Self.callsWithType(type) {
                await h.expectFailure("InvalidType", method, arguments)
            }
        }
        try await expectUnchanged(h, before)
    }

    @Test func typesAtTheLimitsAreAccepted() async throws {
        let h = try await Harness()
        let longest = "application/" + String(repeating: "x", count: 243)
        try await h.write([[(longest, [1]), ("com.example.todo", [2]), ("text/plain ; charset=utf-8 ; format=flowed", [3])]])
        #expect(try await h.types().types == [longest, "com.example.todo", "text/plain;charset=utf-8;format=flowed"])
        #expect(try await h.readData(longest).data == [1])
    }

    @Test func missingItemsTypesAndStaleCountsAreRefused() async throws {
        let (h, before) = try await storedHarness()
        for item: UInt32 in [2, 3, .max] {
            await h.expectFailure("NoSuchItem", "ReadData", [.string("general"), .uint32(item), .string("text/plain"), .uint64(0)])
            await h.expectFailure("NoSuchItem", "ReadBest", [.string("general"), .uint32(item), .strings(["text/plain"]), .uint64(0)])
            await h.expectFailure("NoSuchItem", "ReadFd", [.string("general"), .uint32(item), .string("text/plain"), .uint64(0)])
        }
        await h.expectFailure("NoSuchItem", "ReadData", [.string("never-written"), .uint32(0), .string("text/plain"), .uint64(0)])
        for (item, type) in [(0, "image/png"), (1, "text/plain"), (0, "text/plain;charset=utf-8"), (0, "application/octet-stream")] {
            await h.expectFailure("NoSuchType", "ReadData", [.string("general"), .uint32(UInt32(item)), .string(type), .uint64(0)])
            await h.expectFailure("NoSuchType", "ReadFd", [.string("general"), .uint32(UInt32(item)), .string(type), .uint64(0)])
        }
        await h.expectFailure("NoSuchType", "ReadBest", [.string("general"), .uint32(1), .strings(["text/plain", "image/png"]), .uint64(0)])
        // A thousand types asked for (max-request-types is 1024): the message names ten and
        // counts the rest.
        let many = (0..<1_000).map { "application/x-wanted-\($0)" }
        let refused = await h.expectFailure("NoSuchType", "ReadBest", [.string("general"), .uint32(1), .strings(many), .uint64(0)])
        #expect(refused?.message.contains("application/x-wanted-9 and 990 more") == true, "\(String(describing: refused?.message.prefix(300)))")
        #expect((refused?.message.utf8.count ?? .max) < 1_000)
        for expect: UInt64 in [2, 3, .max] {
            await h.expectFailure("Stale", "ReadData", [.string("general"), .uint32(0), .string("text/plain"), .uint64(expect)])
            await h.expectFailure("Stale", "ReadBest", [.string("general"), .uint32(0), .strings(["text/plain"]), .uint64(expect)])
            await h.expectFailure("Stale", "ReadFd", [.string("general"), .uint32(0), .string("text/plain"), .uint64(expect)])
        }
        try await expectUnchanged(h, before)
    }

    @Test func staleIsCheckedBeforeTheItem() async throws {
        let (h, before) = try await storedHarness()
        // A reader holding an old count learns that it is old, not that the item is missing.
        await h.expectFailure("Stale", "ReadData", [.string("general"), .uint32(9), .string("text/plain"), .uint64(5)])
        try await expectUnchanged(h, before)
    }

    @Test func malformedItemsAreRefused() async throws {
        let (h, before) = try await storedHarness()
        let inline: [[[(String, [UInt8])]]] = [
            [[("text/plain", [1]), ("text/plain", [2])]],
            [[("image/png", [1]), ("public.png", [2])]],
            [[("text/plain;charset=utf-8", [1]), ("TEXT/PLAIN; CHARSET=UTF-8", [2])]],
            [[("com.example.todo", [1]), ("COM.Example.Todo", [2])]],
            [[("text/plain", [1])], []],
            [[]],
        ]
        for items in inline {
            await h.expectFailure("InvalidArgument", "WriteItems", [.string("general"), Harness.inlineItems(items), Harness.options([])])
            await h.expectFailure("InvalidArgument", "WriteItems", [.string("general"), Harness.inlineItems(items), Harness.options([("append", .boolean(true))])])
            let descriptors = try items.map { item in try item.map { ($0.0, try Descriptors.pipe(holding: $0.1)) } }
            await h.expectFailure("InvalidArgument", "WriteItemsFd", [.string("general"), Harness.descriptorItems(descriptors), Harness.options([])])
        }
        try await expectUnchanged(h, before)
    }

    /// A write wrong in several ways is refused for the first thing wrong, in this order: the
    /// name, the options, then each representation's type and size in turn, whichever thread
    /// answers it.
    @Test func theFirstThingWrongIsReported() async throws {
        let h = try await Harness(limits: ["max-inline-bytes=4"])
        try await h.write(text: "kept")
        try await h.write(text: "also", to: "other")
        let before = [try await h.snapshot("general"), try await h.snapshot("other")]
        let badType = Harness.inlineItems([[("text/plain", [1])], [("not a type", [1])]])
        let tooLargeThenBadType = Harness.inlineItems([[("text/plain", [1, 2, 3, 4, 5])], [("not a type", [1])]])
        await h.expectFailure("InvalidName", "WriteItems", [.string(""), badType, Harness.options([("odd", .boolean(true))])])
        await h.expectFailure("InvalidArgument", "WriteItems", [.string("general"), badType, Harness.options([("odd", .boolean(true))])])
        await h.expectFailure("InvalidType", "WriteItems", [.string("general"), badType, Harness.options([])])
        await h.expectFailure("TooLarge", "WriteItems", [.string("general"), tooLargeThenBadType, Harness.options([])])
        try await expectUnchanged(h, before)
    }

    @Test func unreadableDescriptorsAreRefused() async throws {
        let (h, before) = try await storedHarness()
        // The wrong end of a pipe whose other end is open: refused at once, not after the idle
        // timeout (30 s by default, over the call's timeout here).
        let (readEnd, writeEnd) = try Descriptors.pipe()
        let start = ContinuousClock.now
        await h.expectFailure("InvalidArgument", "WriteItemsFd", [.string("general"), Harness.descriptorItems([[("text/plain", writeEnd)]]), Harness.options([])])
        #expect(ContinuousClock.now - start < .seconds(12))
        withExtendedLifetime(readEnd) {}
        let directory = open(FileManager.default.temporaryDirectory.path, O_RDONLY | O_DIRECTORY | O_CLOEXEC)
        try #require(directory >= 0)
        await h.expectFailure("InvalidArgument", "WriteItemsFd", [.string("general"), Harness.descriptorItems([[("text/plain", UnixFileDescriptor(owning: directory))]]), Harness.options([])])
        try await expectUnchanged(h, before)
    }

    /// An `h` indexes the descriptors sent beside the message; a call may name one it does not
    /// carry (the bus passes it on). Refused at once: it used to be waited on for the idle
    /// timeout, holding one of `max-transfers` slots, so that one client could keep everyone's
    /// `WriteItemsFd` refused for 30 s.
    @Test func aDescriptorTheCallDoesNotCarryIsRefusedAtOnce() async throws {
        let (h, before) = try await storedHarness(limits: ["max-transfers=2"])
        for index: UInt32 in [0, 5] {
            let start = ContinuousClock.now
            for _ in 0..<3 {
                let call = try Self.writeItemsFd(naming: index)
                do throws(DBus.DBusError) {
                    _ = try await h.client.call(call, timeout: .seconds(10))
                    Issue.record("a WriteItemsFd naming descriptor \(index) of none succeeded")
                } catch {
                    #expect(error.name == Harness.errorPrefix + "InvalidArgument", "\(error)")
                    #expect(error.message.contains("did not carry"), "\(error)")
                }
            }
            #expect(ContinuousClock.now - start < .seconds(12))
        }
        try await expectUnchanged(h, before)
        // The slots are free again: a real descriptor is read.
        #expect(try await h.writeFd([[("text/plain", try Descriptors.pipe(holding: "fd".bytes))]], to: "fresh") == 1)
    }

    /// A `WriteItemsFd` wrong in a later item is refused before an earlier item's descriptor is
    /// read: here a pipe nobody writes to, which would be waited on for the idle timeout.
    @Test func aWriteWrongFurtherOnIsRefusedBeforeAnyDescriptorIsRead() async throws {
        let (h, before) = try await storedHarness()
        let (readEnd, writeEnd) = try Descriptors.pipe()
        let start = ContinuousClock.now
        await h.expectFailure("InvalidType", "WriteItemsFd", [
            .string("general"),
            Harness.descriptorItems([[("text/plain", readEnd)], [("bad type", try Descriptors.pipe(holding: [1]))]]),
            Harness.options([]),
        ])
        #expect(ContinuousClock.now - start < .seconds(12))
        withExtendedLifetime(writeEnd) {}
        try await expectUnchanged(h, before)
    }

    /// `WriteItemsFd("general", [{"text/plain": h index}], {})` with no descriptor attached:
    /// made with a `u` in the `h`'s place (the same four bytes), whose signature is then
    /// patched, as no library writes such a message.
    static func writeItemsFd(naming index: UInt32) throws -> Message {
        let made = try Message.methodCall(
            destination: Harness.busName, path: Harness.path, interface: Harness.interface, method: "WriteItemsFd",
            arguments: [.string("general"), .array(element: "a{su}", [.dictionary(key: "s", value: "u", [(.string("text/plain"), .uint32(index))])]), Harness.options([])])
        dbus_message_set_serial(made.raw, 1)
        var buffer: UnsafeMutablePointer<CChar>?
        var length: Int32 = 0
        try #require(dbus_message_marshal(made.raw, &buffer, &length) != 0)
        defer { dbus_free(buffer) }
        var bytes = Array(UnsafeBufferPointer(start: buffer, count: Int(length)))
        let signature = Array("saa{su}a{sv}".utf8CString.dropLast())
        let at = try #require((0...(bytes.count - signature.count)).first { Array(bytes[$0..<($0 + signature.count)]) == signature })
        bytes[at + 5] = CChar(UInt8(ascii: "h"))
        var error = CDBus.DBusError()
        dbus_error_init(&error)
        defer { dbus_error_free(&error) }
        let raw = try #require(dbus_message_demarshal(bytes, length, &error), "\(error.message.map { String(cString: $0) } ?? "")")
        dbus_message_set_serial(raw, 0)
        return Message(taking: raw)
    }

    @Test func aFailingItemAnywhereFailsTheWholeWrite() async throws {
        let (h, before) = try await storedHarness()
        await h.expectFailure("InvalidType", "WriteItems", [.string("general"), Harness.inlineItems([[("text/plain", "new".bytes)], [("text/plain", [1]), ("bad type", [2])]]), Harness.options([])])
        await h.expectFailure("InvalidArgument", "WriteItemsFd", [
            .string("general"),
            Harness.descriptorItems([[("text/plain", try Descriptors.pipe(holding: "new".bytes))], [("text/plain", try Descriptors.pipe().write)]]),
            Harness.options([]),
        ])
        try await expectUnchanged(h, before)
    }
}
