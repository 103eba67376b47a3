import DBus
import Foundation
import Testing
import TestSupport

/// Each method of `org.pasteboardd.Pasteboard1` in scope, on a real server, with exact answers.
struct MethodTests {
    @Test func aFreshServerHoldsNothing() async throws {
        let h = try await Harness()
        #expect(try await h.listPasteboards() == [])
        for name in ["general", "find", "drag", "font", "ruler", "never-written"] {
            #expect(try await h.changeCount(name) == 0)
            let (count, types) = try await h.types(name)
            #expect(count == 0 && types == [])
            let (itemsCount, items) = try await h.items(name)
            #expect(itemsCount == 0 && items == [])
            #expect(try await h.canRead(["application/octet-stream"], in: name) == false)
            #expect(try await h.availableType(["text/plain"], in: name) == "")
        }
        await h.expectFailure("NoSuchItem", "ReadData", [.string("general"), .uint32(0), .string("text/plain"), .uint64(0)])
    }

    @Test func writeItemsReplacesTheContentsAndKeepsOrder() async throws {
        let h = try await Harness()
        let first = try await h.write([
            [("text/html", "<b>hi</b>".bytes), ("text/plain;charset=utf-8", "hi".bytes)],
            [("image/png", [0x89, 0x50, 0x4E, 0x47]), ("com.example.todo", [1, 2, 3])],
        ])
        #expect(first == 1)
        let (count, items) = try await h.items()
        #expect(count == 1)
        #expect(items == [
            .init(types: ["text/html", "text/plain;charset=utf-8"], sizes: [9, 2]),
            .init(types: ["image/png", "com.example.todo"], sizes: [4, 3]),
        ])
        #expect(try await h.types() == (1, ["text/html", "text/plain;charset=utf-8", "image/png", "com.example.todo"]))
        #expect(try await h.readData("text/html", item: 0) == (1, "<b>hi</b>".bytes))
        #expect(try await h.readData("com.example.todo", item: 1) == (1, [1, 2, 3]))

        // A second write replaces everything.
        #expect(try await h.write([[("text/plain", "bye".bytes)]]) == 2)
        #expect(try await h.items().items == [.init(types: ["text/plain"], sizes: [3])])
        #expect(try await h.types() == (2, ["text/plain"]))
        await h.expectFailure("NoSuchItem", "ReadData", [.string("general"), .uint32(1), .string("image/png"), .uint64(0)])
        await h.expectFailure("NoSuchType", "ReadData", [.string("general"), .uint32(0), .string("text/html"), .uint64(0)])
    }

    @Test func typesListsEachTypeOnceFirstItemFirst() async throws {
        let h = try await Harness()
        try await h.write([
            [("text/plain", "a".bytes), ("text/html", "<a>".bytes)],
            [("image/png", [1]), ("text/plain", "b".bytes)],
            [("text/html", "<c>".bytes)],
        ])
        #expect(try await h.types() == (1, ["text/plain", "text/html", "image/png"]))
    }

    @Test func typesAreNormalizedAndAppleIdentifiersMapped() async throws {
        let h = try await Harness()
        try await h.write([[("text/plain ; charset=utf-8", "x".bytes), ("public.png", [1]), ("com.example.todo", [2])]])
        #expect(try await h.types().types == ["text/plain;charset=utf-8", "image/png", "com.example.todo"])
    }

    @Test func emptyDataIsStored() async throws {
        let h = try await Harness()
        try await h.write([[("text/plain", [])]])
        #expect(try await h.items().items == [.init(types: ["text/plain"], sizes: [0])])
        #expect(try await h.readData("text/plain") == (1, []))
        #expect(try await h.readFdBytes("text/plain") == (1, []))
    }

    @Test func writingNoItemsLeavesAnEmptyListedPasteboard() async throws {
        let h = try await Harness()
        #expect(try await h.write([], to: "scratch") == 1)
        #expect(try await h.listPasteboards() == ["scratch"])
        #expect(try await h.types("scratch") == (1, []))
    }

    @Test func clearContentsEmptiesAndCounts() async throws {
        let h = try await Harness()
        try await h.write(text: "hello")
        #expect(try await h.clear() == 2)
        #expect(try await h.types() == (2, []))
        #expect(try await h.items() == (2, []))
        #expect(try await h.listPasteboards() == ["general"])
        // Clearing an empty pasteboard is still a change, and creates a never-written name.
        #expect(try await h.clear() == 3)
        #expect(try await h.clear("new") == 1)
        #expect(try await h.listPasteboards().sorted() == ["general", "new"])
    }

    @Test func listPasteboardsHasEveryWrittenNameOnce() async throws {
        let h = try await Harness()
        for name in ["general", "find", "Notes – drafts", "general", "été"] {
            try await h.write(text: name, to: name)
        }
        #expect(Set(try await h.listPasteboards()) == ["general", "find", "Notes – drafts", "été"])
        #expect(try await h.listPasteboards().count == 4)
        try await h.remove("find")
        #expect(Set(try await h.listPasteboards()) == ["general", "Notes – drafts", "été"])
    }

    @Test func namesAreExactBytes() async throws {
        let h = try await Harness()
        try await h.write(text: "precomposed", to: "caf\u{E9}")
        #expect(try await h.changeCount("cafe\u{301}") == 0)
        #expect(try await h.changeCount("caf\u{E9}") == 1)
        #expect(try await h.changeCount("Caf\u{E9}") == 0)
    }

    @Test func availableTypeAndCanRead() async throws {
        let h = try await Harness()
        try await h.write([[("image/png", [1]), ("text/plain;charset=utf-8", "x".bytes)]])
        #expect(try await h.availableType(["image/jpeg", "text/plain;charset=utf-8", "image/png"]) == "text/plain;charset=utf-8")
        #expect(try await h.availableType(["image/jpeg"]) == "")
        #expect(try await h.availableType([]) == "")
        #expect(try await h.canRead(["image/jpeg", "image/png"]) == true)
        #expect(try await h.canRead(["image/jpeg"]) == false)
        #expect(try await h.canRead([]) == false)
    }

    @Test func readDataHonoursExpect() async throws {
        let h = try await Harness()
        try await h.write(text: "one")
        try await h.write(text: "two")
        #expect(try await h.readData("text/plain;charset=utf-8", expect: 2) == (2, "two".bytes))
        #expect(try await h.readData("text/plain;charset=utf-8", expect: 0) == (2, "two".bytes))
        await h.expectFailure("Stale", "ReadData", [.string("general"), .uint32(0), .string("text/plain;charset=utf-8"), .uint64(1)])
        await h.expectFailure("Stale", "ReadBest", [.string("general"), .uint32(0), .strings(["text/plain"]), .uint64(3)])
        await h.expectFailure("Stale", "ReadFd", [.string("general"), .uint32(0), .string("text/plain;charset=utf-8"), .uint64(1)])
    }

    @Test func readBestReturnsTheItemsOwnType() async throws {
        let h = try await Harness()
        try await h.write([
            [("text/html", "<p>x</p>".bytes), ("text/plain;charset=utf-8", "x".bytes)],
            [("image/png", [9, 9])],
        ])
        #expect(try await h.readBest(["text/plain;charset=utf-8"], item: 0) == (1, "text/plain;charset=utf-8", "x".bytes))
        // HTML is text too, but plain text with a charset is the better answer to plain text.
        #expect(try await h.readBest(["text/plain"], item: 0) == (1, "text/plain;charset=utf-8", "x".bytes))
        #expect(try await h.readBest(["public.plain-text"], item: 0) == (1, "text/plain;charset=utf-8", "x".bytes))
        #expect(try await h.readBest(["image/png", "text/html"], item: 0) == (1, "text/html", "<p>x</p>".bytes))
        #expect(try await h.readBest(["public.png"], item: 1) == (1, "image/png", [9, 9]))
        await h.expectFailure("NoSuchType", "ReadBest", [.string("general"), .uint32(1), .strings(["text/plain"]), .uint64(0)])
        let none = await h.expectFailure("NoSuchType", "ReadBest", [.string("general"), .uint32(0), .strings([]), .uint64(0)])
        #expect(none?.message.contains("no types were asked for") == true, "\(String(describing: none))")
        await h.expectFailure("NoSuchItem", "ReadBest", [.string("general"), .uint32(2), .strings(["image/png"]), .uint64(0)])
        // Every type is bytes: asked for bytes, the item's first (richest) type, parameters or not.
        try await h.write([[("text/plain;charset=utf-8", "t".bytes), ("image/png", [1])]], to: "bytes")
        #expect(try await h.readBest(["application/octet-stream"], in: "bytes") == (1, "text/plain;charset=utf-8", "t".bytes))
    }

    @Test func readFdStreamsTheBytes() async throws {
        let h = try await Harness()
        let small = (0..<300).map { UInt8(truncatingIfNeeded: $0) }
        let large = (0..<200_000).map { UInt8(truncatingIfNeeded: $0 &* 7) }
        try await h.write([[("application/x-small", small), ("application/x-large", large)]])
        #expect(try await h.readFdBytes("application/x-small") == (1, small))
        #expect(try await h.readFdBytes("application/x-large") == (1, large))
        await h.expectFailure("NoSuchType", "ReadFd", [.string("general"), .uint32(0), .string("text/plain"), .uint64(0)])
        await h.expectFailure("NoSuchItem", "ReadFd", [.string("general"), .uint32(1), .string("application/x-small"), .uint64(0)])
    }

    @Test func readFdDescriptorOutlivesAChange() async throws {
        let h = try await Harness()
        let large = (0..<100_000).map { UInt8(truncatingIfNeeded: $0 &* 13) }
        try await h.write([[("application/x-a", large), ("application/x-b", [1, 2])]])
        let (_, bigDescriptor) = try await h.readFd("application/x-a")
        let (_, smallDescriptor) = try await h.readFd("application/x-b")
        try await h.write(text: "replaced")
        try await h.remove()
        #expect(try Descriptors.readAll(bigDescriptor) == large)
        #expect(try Descriptors.readAll(smallDescriptor) == [1, 2])
    }

    @Test func readFdDescriptorIsReadOnly() async throws {
        let h = try await Harness()
        try await h.write(text: "secret")
        let (_, descriptor) = try await h.readFd("text/plain;charset=utf-8")
        #expect(write(descriptor.rawValue, "x", 1) == -1)
        #expect(try await h.readData("text/plain;charset=utf-8").data == "secret".bytes)
    }

    /// A descriptor from `ReadFd` can be opened again through `/proc`, and its owner (the user
    /// the server runs as) may first change the file's mode through it. Neither may change the
    /// stored data: a store file's data comes through a pipe, never as the file, and data kept
    /// off the disk in a memfd sealed against writing and resizing.
    @Test(arguments: [false, true])
    func readFdFilesCannotBeWrittenThroughProc(concealed: Bool) async throws {
        let h = try await Harness()
        let small = "small".bytes
        let large = (0..<200_000).map { UInt8(truncatingIfNeeded: $0 &* 7) }
        try await h.write([[("application/x-small", small), ("application/x-large", large)]], options: [("concealed", .boolean(concealed))])
        for (type, bytes) in [("application/x-small", small), ("application/x-large", large)] {
            let (_, descriptor) = try await h.readFd(type)
            _ = fchmod(descriptor.rawValue, 0o600)
            let reopened = open("/proc/self/fd/\(descriptor.rawValue)", O_WRONLY | O_CLOEXEC)
            if reopened >= 0 {
                _ = pwrite(reopened, "HACK", 4, 0)
                _ = ftruncate(reopened, 1)
                close(reopened)
            }
            #expect(try await h.readFdBytes(type).data == bytes, "\(type)")
            #expect(try await h.items().items.first?.sizes == [Int64(small.count), Int64(large.count)])
        }
    }

    @Test func createUniqueGivesDistinctUnusedNames() async throws {
        let h = try await Harness()
        var names = Set<String>()
        for _ in 0..<20 {
            let name = try await h.createUnique()
            #expect(!name.isEmpty && name.utf8.count <= 255)
            #expect(try await h.changeCount(name) == 0)
            names.insert(name)
        }
        #expect(names.count == 20)
        let name = try #require(names.first)
        #expect(try await h.write(text: "mine", to: name) == 1)
        #expect(try await h.readData("text/plain;charset=utf-8", in: name).data == "mine".bytes)
        #expect(try await h.listPasteboards() == [name])
    }

    @Test func removeDropsTheContentsButNotTheCount() async throws {
        let h = try await Harness()
        try await h.write([[("text/plain", "x".bytes)], [("image/png", [1])]], to: "doomed")
        try await h.write(text: "kept", to: "kept")
        try await h.remove("doomed")
        #expect(try await h.listPasteboards() == ["kept"])
        #expect(try await h.changeCount("doomed") == 2)
        #expect(try await h.types("doomed") == (2, []))
        #expect(try await h.items("doomed") == (2, []))
        #expect(try await h.canRead(["text/plain"], in: "doomed") == false)
        await h.expectFailure("NoSuchItem", "ReadData", [.string("doomed"), .uint32(0), .string("text/plain"), .uint64(0)])
        #expect(try await h.readData("text/plain;charset=utf-8", in: "kept").data == "kept".bytes)
        // Written again, it continues from its count.
        #expect(try await h.write(text: "again", to: "doomed") == 3)
        #expect(try await h.listPasteboards().sorted() == ["doomed", "kept"])
    }

    @Test func propertiesGetAndGetAll() async throws {
        let h = try await Harness()
        try await h.write(text: "b", to: "b")
        try await h.write(text: "a", to: "a")

        let version = try #require(try await h.property("Version").stringValue)
        #expect(version.split(separator: ".").count == 3 && version.split(separator: ".").allSatisfy { Int($0) != nil })
        #expect(try await h.property("Pasteboards").stringArrayValue?.sorted() == ["a", "b"])
        let limits = try #require(try await h.property("Limits").dictionaryEntries)
        #expect(try await h.property("Limits").signature == "a{st}")
        let keys = limits.compactMap(\.key.stringValue)
        for key in ["max-item-bytes", "max-inline-bytes", "max-pasteboard-bytes", "max-items", "max-pasteboards", "history-depth"] {
            #expect(keys.contains(key), "Limits lacks \(key)")
        }
        #expect(limits.allSatisfy { $0.value.uint64Value.map { $0 > 0 } ?? false })

        let all = try await h.call("GetAll", [.string(Harness.interface)], interface: "org.freedesktop.DBus.Properties")
        let entries = try #require(all.first?.dictionaryEntries)
        #expect(entries.compactMap(\.key.stringValue).sorted() == ["Desktop", "Limits", "Pasteboards", "Version"])
        // A server started with --desktop off joins nothing to the desktop.
        #expect(entries.first { $0.key == .string("Desktop") }?.value == .variant(.dictionary(key: "s", value: "s", [])))
        #expect(entries.first { $0.key == .string("Version") }?.value == .variant(.string(version)))
        #expect(entries.first { $0.key == .string("Pasteboards") }?.value.variantValue?.stringArrayValue?.sorted() == ["a", "b"])
        #expect(entries.first { $0.key == .string("Limits") }?.value.variantValue?.dictionaryEntries?.count == limits.count)

        await h.expectFailure("org.freedesktop.DBus.Error.UnknownProperty", "Get", [.string(Harness.interface), .string("Nope")], interface: "org.freedesktop.DBus.Properties")
        await h.expectFailure("org.freedesktop.DBus.Error.UnknownInterface", "Get", [.string("org.example.Nope"), .string("Version")], interface: "org.freedesktop.DBus.Properties")
        await h.expectFailure("org.freedesktop.DBus.Error.PropertyReadOnly", "Set", [.string(Harness.interface), .string("Version"), .variant(.string("9"))], interface: "org.freedesktop.DBus.Properties")
        await h.expectFailure("org.freedesktop.DBus.Error.UnknownProperty", "Set", [.string(Harness.interface), .string("Nope"), .variant(.string("9"))], interface: "org.freedesktop.DBus.Properties")
        await h.expectFailure("org.freedesktop.DBus.Error.UnknownInterface", "Set", [.string("org.example.Nope"), .string("Version"), .variant(.string("9"))], interface: "org.freedesktop.DBus.Properties")
        #expect(try await h.property("Version") == .string(version))
    }

    @Test func limitsPropertyReportsTheCommandLine() async throws {
        let h = try await Harness(limits: ["max-items=7", "max-inline-bytes=2K"])
        let limits = try #require(try await h.property("Limits").dictionaryEntries)
        #expect(limits.first { $0.key == .string("max-items") }?.value == .uint64(7))
        #expect(limits.first { $0.key == .string("max-inline-bytes") }?.value == .uint64(2048))
    }

    @Test func peerInterfaceAnswers() async throws {
        let h = try await Harness()
        #expect(try await h.call("Ping", interface: "org.freedesktop.DBus.Peer") == [])
        let id = try #require(try await h.call("GetMachineId", interface: "org.freedesktop.DBus.Peer").first?.stringValue)
        #expect(id.count == 32)
        // Neither takes arguments.
        await h.expectFailure("org.freedesktop.DBus.Error.InvalidArgs", "Ping", [.string("x")], interface: "org.freedesktop.DBus.Peer")
        await h.expectFailure("org.freedesktop.DBus.Error.InvalidArgs", "GetMachineId", [.uint32(1)], interface: "org.freedesktop.DBus.Peer")
        await h.expectFailure("org.freedesktop.DBus.Error.UnknownMethod", "Pong", interface: "org.freedesktop.DBus.Peer")
    }

    /// The D-Bus specification lets a call leave its interface out; GDBus and zbus do for
    /// `Ping` and `Get`. Each such call gets the same answer as when it names its interface.
    @Test func standardMethodsAnswerWithoutAnInterface() async throws {
        let h = try await Harness()
        #expect(try await h.call("Ping", interface: nil) == [])
        let id = try await h.call("GetMachineId", interface: nil)
        #expect(id == (try await h.call("GetMachineId", interface: "org.freedesktop.DBus.Peer")))
        let version = try await h.call("Get", [.string(Harness.interface), .string("Version")], interface: nil)
        #expect(version == [.variant(try await h.property("Version"))])
        let all = try await h.call("GetAll", [.string(Harness.interface)], interface: nil)
        #expect(all == (try await h.call("GetAll", [.string(Harness.interface)], interface: "org.freedesktop.DBus.Properties")))
        #expect(all.first?.dictionaryEntries?.count ?? 0 >= 3)
        await h.expectFailure("org.freedesktop.DBus.Error.PropertyReadOnly", "Set", [.string(Harness.interface), .string("Version"), .variant(.string("9"))], interface: nil)
        // The empty interface name is "any interface" to the specification.
        #expect(try await h.call("Get", [.string(""), .string("Version")], interface: "org.freedesktop.DBus.Properties") == version)
        #expect(try await h.call("GetAll", [.string("")], interface: "org.freedesktop.DBus.Properties") == all)
        // A name the standard interfaces have, with other arguments, is still the object's own.
        await h.expectFailure("org.freedesktop.DBus.Error.UnknownMethod", "Ping", [.string("general")], interface: nil)
    }

    @Test func unknownMethodsAndInterfacesAreRefused() async throws {
        let h = try await Harness()
        await h.expectFailure("org.freedesktop.DBus.Error.UnknownMethod", "Paste", [])
        await h.expectFailure("org.freedesktop.DBus.Error.UnknownInterface", "ChangeCount", [.string("general")], interface: "org.example.Nope")
        // Without an interface the call still reaches the pasteboard interface.
        #expect(try await h.call("ChangeCount", [.string("general")], interface: nil) == [.uint64(0)])
    }
}
