import Foundation
import Testing
import TestSupport

@testable import Pasteboard

/// The `NSPasteboard`-shaped API against a real server on a private bus.
@Suite("Pasteboard client")
struct PasteboardClientTests {
    // MARK: Change count

    @Test("the change count starts at 0 and each write adds exactly 1")
    func changeCount() async throws {
        let world = try await World()
        let pasteboard = world.pasteboard()
        #expect(try await pasteboard.changeCount == 0)
        #expect(try await pasteboard.clearContents() == 1)
        #expect(try await pasteboard.changeCount == 1)
        #expect(try await pasteboard.setString("one"))
        #expect(try await pasteboard.changeCount == 2)
        try await pasteboard.setData(Data([1, 2, 3]), forType: .png)
        #expect(try await pasteboard.changeCount == 3)
        try await pasteboard.writeObjects(["a", "b"])
        #expect(try await pasteboard.changeCount == 4)
        // Another instance of the same name sees the same count.
        #expect(try await world.pasteboard(.general).changeCount == 4)
    }

    @Test("clearContents empties the pasteboard, and setData(nil) clears it too")
    func clear() async throws {
        let world = try await World()
        let pasteboard = world.pasteboard()
        try await pasteboard.setString("text")
        #expect(try await pasteboard.types == [.utf8PlainText])
        #expect(try await pasteboard.clearContents() == 2)
        #expect(try await pasteboard.types == nil)
        #expect(try await pasteboard.pasteboardItems == nil)
        #expect(try await pasteboard.string(forType: .utf8PlainText) == nil)

        try await pasteboard.setString("again")
        #expect(try await pasteboard.setData(nil, forType: .utf8PlainText))
        #expect(try await pasteboard.types == nil)
        #expect(try await pasteboard.changeCount == 4)
    }

    @Test("pasteboards of different names are independent")
    func names() async throws {
        let world = try await World()
        let general = world.pasteboard(.general)
        let find = world.pasteboard(.find)
        try await find.setString("needle")
        #expect(try await general.changeCount == 0)
        #expect(try await general.string() == nil)
        #expect(try await find.string() == "needle")
        #expect(try await find.changeCount == 1)
    }

    // MARK: Strings and data

    @Test("setString and string(forType:) round-trip UTF-8 text")
    func strings() async throws {
        let world = try await World()
        let pasteboard = world.pasteboard()
        let text = "Grüße, 世界 👋\nline two"
        try await pasteboard.setString(text)
        #expect(try await pasteboard.string() == text)
        #expect(try await pasteboard.string(forType: .utf8PlainText) == text)
        #expect(try await pasteboard.types == [.utf8PlainText])
        #expect(try await pasteboard.data(forType: .utf8PlainText) == Data(text.utf8))
    }

    @Test("string(forType:) falls back to text that conforms to the type asked for")
    func stringConformance() async throws {
        let world = try await World()
        let pasteboard = world.pasteboard()

        // Written as UTF-8 text, read as plain text: text/plain;charset=utf-8 conforms to text/plain.
        try await pasteboard.setString("plain", forType: .utf8PlainText)
        #expect(try await pasteboard.data(forType: .plainText) == nil, "exact reads take only the same type")
        #expect(try await pasteboard.string(forType: .plainText) == "plain")
        #expect(try await pasteboard.string(forType: .text) == "plain")
        // An item reads as its pasteboard does.
        let item = try #require(try await pasteboard.pasteboardItems?.first)
        #expect(try await item.data(forType: .plainText) == nil, "exact reads take only the same type")
        #expect(try await item.string(forType: .plainText) == "plain")
        #expect(try await item.string(forType: .text) == "plain")
        #expect(try await item.string(forType: .html) == nil)

        // HTML is text: it serves a request for plain text.
        try await pasteboard.setString("<b>bold</b>", forType: .html)
        #expect(try await pasteboard.string(forType: .html) == "<b>bold</b>")
        #expect(try await pasteboard.string(forType: .plainText) == "<b>bold</b>")

        // Nothing conforms: nil, not an error.
        try await pasteboard.setData(Data([0x89, 0x50, 0x4E, 0x47]), forType: .png)
        #expect(try await pasteboard.string(forType: .plainText) == nil)
        #expect(try await pasteboard.string(forType: .html) == nil)
        // A non-text type is read exactly, never by conformance.
        #expect(try await pasteboard.string(forType: .jpeg) == nil)
    }

    @Test("string(forType:) decodes UTF-16 text as UTF-16, as loadTransferable does")
    func utf16Text() async throws {
        let world = try await World()
        let pasteboard = world.pasteboard()
        var littleEndian = Data([0xFF, 0xFE])
        for unit in "héllo ✓".utf16 { littleEndian.append(contentsOf: [UInt8(unit & 0xFF), UInt8(unit >> 8)]) }
        try await pasteboard.setData(littleEndian, forType: .utf16PlainText)
        #expect(try await pasteboard.string(forType: .utf16PlainText) == "héllo ✓")
        #expect(try await pasteboard.string(forType: .plainText) == "héllo ✓")
        #expect(try await pasteboard.pasteboardItems?.first?.string(forType: .plainText) == "héllo ✓")
        #expect(try await pasteboard.loadTransferable(type: String.self) == "héllo ✓")
        // Another program's copy, big-endian without a mark, and one that says little-endian.
        let bigEndian = Data("ok ✓".utf16.flatMap { [UInt8($0 >> 8), UInt8($0 & 0xFF)] })
        expectSuccess(try await world.pbctl("-p", pasteboard.name.rawValue, "copy", "-t", "text/plain;charset=UTF-16", input: bigEndian))
        #expect(try await pasteboard.string(forType: .plainText) == "ok ✓")
        let noMark = Data("le ✓".utf16.flatMap { [UInt8($0 & 0xFF), UInt8($0 >> 8)] })
        expectSuccess(try await world.pbctl("-p", pasteboard.name.rawValue, "copy", "-t", "text/plain; charset=utf-16le", input: noMark))
        #expect(try await pasteboard.string(forType: .plainText) == "le ✓")
    }

    @Test("data(forType:) reads exactly the type asked for, in any spelling")
    func data() async throws {
        let world = try await World()
        let pasteboard = world.pasteboard()
        let png = Data([0x89, 0x50, 0x4E, 0x47, 0x0D, 0x0A, 0x1A, 0x0A, 0, 1, 2, 255])
        try await pasteboard.setData(png, forType: .png)
        #expect(try await pasteboard.data(forType: .png) == png)
        #expect(try await pasteboard.data(forType: try #require(UTType(mimeType: "image/png"))) == png)
        #expect(try await pasteboard.data(forType: try #require(UTType("public.png"))) == png)
        #expect(try await pasteboard.data(forType: .jpeg) == nil)
        #expect(try await pasteboard.data(forType: .image) == nil, "an abstract type is not read by data(forType:)")
        #expect(try await pasteboard.types == [.png])

        // Empty data is data.
        try await pasteboard.setData(Data(), forType: .json)
        #expect(try await pasteboard.data(forType: .json) == Data())
    }

    @Test("the spellings of a type are one type: written as MIME, read by identifier and back")
    func spellings() async throws {
        let world = try await World()
        let pasteboard = world.pasteboard()
        try await pasteboard.setString("a,b\n1,2", forType: try #require(UTType(mimeType: "text/csv")))
        #expect(try await pasteboard.types == [.commaSeparatedText])
        #expect(try await pasteboard.string(forType: .commaSeparatedText) == "a,b\n1,2")
        let pbctl = try await world.pbctl("paste", "-t", "public.comma-separated-values-text")
        expectSuccess(pbctl)
        #expect(pbctl.out == "a,b\n1,2")
    }

    // MARK: Types

    @Test("types lists every type of every item, first item first, without repeats")
    func types() async throws {
        let world = try await World()
        let pasteboard = world.pasteboard()
        #expect(try await pasteboard.types == nil)
        try await pasteboard.writeObjects([URL(string: "https://example.com/a")!, "text", Data([1])])
        #expect(try await pasteboard.types == [.url, .utf8PlainText, .data])
    }

    @Test("a type declared in this process satisfies its supertypes for availableType and canReadItem too")
    func typeDeclaredInProcess() async throws {
        let note = UTType(exportedAs: "com.example.tests.client.note", conformingTo: .json)
        let world = try await World()
        let pasteboard = world.pasteboard()
        try await pasteboard.setData(Data(#"{"note": 1}"#.utf8), forType: note)
        #expect(try await pasteboard.types == [note])
        #expect(try await pasteboard.availableType(from: [.png, .json]) == .json)
        #expect(try await pasteboard.availableType(from: [.text, .json]) == .text, "the first asked for that is satisfied")
        #expect(try await pasteboard.availableType(from: [.png, .html]) == nil)
        #expect(try await pasteboard.canReadItem(withDataConformingToTypes: [.json]))
        #expect(try await pasteboard.canReadItem(withDataConformingToTypes: [.plainText]))
        #expect(try await !pasteboard.canReadItem(withDataConformingToTypes: [.png]))
        #expect(try await pasteboard.string(forType: .plainText) == #"{"note": 1}"#)
    }

    @Test("availableType(from:) gives the first of the types asked for that some item satisfies")
    func availableType() async throws {
        let world = try await World()
        let pasteboard = world.pasteboard()
        #expect(try await pasteboard.availableType(from: [.utf8PlainText]) == nil)

        try await pasteboard.setString("<p>hi</p>", forType: .html)
        #expect(try await pasteboard.availableType(from: [.png, .html, .plainText]) == .html)
        #expect(try await pasteboard.availableType(from: [.png, .plainText, .html]) == .plainText, "by conformance")
        #expect(try await pasteboard.availableType(from: [.png, .jpeg]) == nil)
        #expect(try await pasteboard.availableType(from: []) == nil)
        #expect(try await pasteboard.availableType(from: [.data]) == .data, "everything is data")
    }

    @Test("abstract types, which have no MIME type, are matched by conformance too")
    func abstractTypes() async throws {
        let world = try await World()
        let pasteboard = world.pasteboard()
        try await pasteboard.setData(Data([0x89, 0x50, 0x4E, 0x47]), forType: .png)
        #expect(try await pasteboard.canReadItem(withDataConformingToTypes: [.image]))
        #expect(try await pasteboard.availableType(from: [.movie, .image, .png]) == .image)
        #expect(try await pasteboard.availableType(from: [.movie, .audio]) == nil)
        #expect(try await !pasteboard.canReadItem(withDataConformingToTypes: [.movie, .audiovisualContent]))
        #expect(try await pasteboard.availableType(from: [.content]) == .content)

        expectSuccess(try await world.pbctl("copy", "-t", "video/quicktime", input: Data([0, 0, 0, 20])))
        #expect(try await pasteboard.canReadItem(withDataConformingToTypes: [.movie]))
        #expect(try await pasteboard.availableType(from: [.image, .audiovisualContent]) == .audiovisualContent)

        // A declared type without a MIME type is matched by its identifier and its declaration.
        try await pasteboard.writeObjects([ItemTodo(title: "t")])
        #expect(try await pasteboard.availableType(from: [.png, .itemTodo]) == .itemTodo)
        #expect(try await pasteboard.canReadItem(withDataConformingToTypes: [.itemTodo]))
        #expect(try await pasteboard.availableType(from: [.image]) == nil)
    }

    @Test("canReadItem(withDataConformingToTypes:) matches by conformance")
    func canRead() async throws {
        let world = try await World()
        let pasteboard = world.pasteboard()
        #expect(try await !pasteboard.canReadItem(withDataConformingToTypes: [.plainText]))
        try await pasteboard.setString("x", forType: .utf8PlainText)
        #expect(try await pasteboard.canReadItem(withDataConformingToTypes: [.plainText]))
        #expect(try await pasteboard.canReadItem(withDataConformingToTypes: [.png, .utf8PlainText]))
        #expect(try await !pasteboard.canReadItem(withDataConformingToTypes: [.png, .html]))
        #expect(try await !pasteboard.canReadItem(withDataConformingToTypes: []))
    }

    @Test("NSPasteboard's spellings: .string and .tabularText, and canReadItem with type strings as AppKit takes them")
    func appKitSpellings() async throws {
        let world = try await World()
        let pasteboard = world.pasteboard()
        #expect(UTType.string == .utf8PlainText && UTType.string.identifier == "public.utf8-plain-text")
        #expect(UTType.tabularText.preferredMIMEType == "text/tab-separated-values;charset=utf-8")
        try await pasteboard.setString("hi", forType: .string)
        #expect(try await pasteboard.string(forType: .string) == "hi")
        #expect(try await pasteboard.types?.contains(.string) == true)
        #expect(try await pasteboard.canReadItem(withDataConformingToTypes: ["public.utf8-plain-text"]))
        #expect(try await pasteboard.canReadItem(withDataConformingToTypes: ["public.png", "text/plain"]), "MIME types too, by conformance")
        #expect(try await !pasteboard.canReadItem(withDataConformingToTypes: ["public.png", "image/jpeg"]))
        let identifiers: [String] = []
        #expect(try await !pasteboard.canReadItem(withDataConformingToTypes: identifiers))
        await #expect(throws: PasteboardError.self, "a string that is no type is refused by the server") {
            try await pasteboard.canReadItem(withDataConformingToTypes: ["not a type"])
        }

        try await pasteboard.setString("https://example.org/\n", forType: .url)
        #expect(try await pasteboard.availableType(from: [.png, .url]) == .url)
    }

    // MARK: Items

    @Test("pasteboardItems lists each item with its types, sizes and data")
    func items() async throws {
        let world = try await World()
        let pasteboard = world.pasteboard()
        #expect(try await pasteboard.pasteboardItems == nil)

        let todo = ItemTodo(title: "buy milk")
        try await pasteboard.writeObjects([todo, "second", Data([9, 8, 7])])
        let items = try #require(try await pasteboard.pasteboardItems)
        #expect(items.count == 3)
        #expect(items.map(\.index) == [0, 1, 2])
        #expect(items.allSatisfy { $0.changeCount == 1 })
        let count: Int = try await pasteboard.changeCount
        #expect(items[0].changeCount == count, "counted as the pasteboard counts, in an Int")
        #expect(items[0].types == [.itemTodo, .utf8PlainText])
        #expect(items[1].types == [.utf8PlainText])
        #expect(items[2].types == [.data])

        let json = try #require(try await items[0].data(forType: .itemTodo))
        #expect(try JSONDecoder().decode(ItemTodo.self, from: json) == todo)
        #expect(try await items[0].string(forType: .utf8PlainText) == "buy milk")
        #expect(try await items[0].data(forType: .png) == nil)
        #expect(try await items[1].string() == "second")
        #expect(try await items[2].data(forType: .data) == Data([9, 8, 7]))
        #expect(items[2].sizesByType.map(\.size) == [3])
        #expect(items[1].sizesByType.map(\.type) == [.utf8PlainText])
        #expect(items[1].sizesByType.map(\.size) == [6])

        // data(forType:) on the pasteboard reads the first item that has the type.
        #expect(try await pasteboard.string(forType: .utf8PlainText) == "buy milk")
        #expect(try await pasteboard.loadTransferable(type: ItemTodo.self) == todo)
        #expect(try await items[1].loadTransferable(type: ItemTodo.self) == nil)
        #expect(try await items[0].loadTransferable(type: String.self) == "buy milk")
    }

    // MARK: Errors

    @Test("an item read after the pasteboard changed fails with Stale")
    func stale() async throws {
        let world = try await World()
        let pasteboard = world.pasteboard()
        try await pasteboard.setString("first generation")
        let item = try #require(try await pasteboard.pasteboardItems?.first)
        #expect(try await item.string() == "first generation")

        // Another process writes: the item belongs to a generation that is gone.
        expectSuccess(try await world.pbctl("copy", input: "second generation"))
        let error = await #expect(throws: PasteboardError.self) { try await item.data(forType: .utf8PlainText) }
        #expect(error?.code == .stale)
        #expect(error?.message.isEmpty == false)
        await #expect(throws: PasteboardError.self) { try await item.loadTransferable(type: String.self) }

        // Listing again gives the new generation.
        #expect(try await pasteboard.pasteboardItems?.first?.string() == "second generation")
    }

    @Test("a type the server refuses fails with InvalidType, and a bad name with InvalidName")
    func invalidInput() async throws {
        let world = try await World()
        let pasteboard = world.pasteboard()
        try await pasteboard.setString("kept")

        let badType = UTType.types(for: "not a type")
        let typeError = await #expect(throws: PasteboardError.self) { try await pasteboard.setData(Data([1]), forType: badType) }
        #expect(typeError?.code == .invalidType)
        let readError = await #expect(throws: PasteboardError.self) { try await pasteboard.canReadItem(withDataConformingToTypes: [badType]) }
        #expect(readError?.code == .invalidType)

        let badName = world.pasteboard(Pasteboard.Name("bad\nname"))
        let nameError = await #expect(throws: PasteboardError.self) { try await badName.changeCount }
        #expect(nameError?.code == .invalidName)
        await #expect(throws: PasteboardError.self) { try await badName.setString("x") }

        // Nothing stored was changed or lost.
        #expect(try await pasteboard.string() == "kept")
        #expect(try await pasteboard.changeCount == 1)
    }

    @Test("the server's limits surface as TooLarge and QuotaExceeded, inline and by descriptor")
    func limits() async throws {
        let world = try await World(limits: ["max-item-bytes=1024", "max-inline-bytes=65536", "max-pasteboards=2"])
        let pasteboard = world.pasteboard()
        try await pasteboard.setString("fits")
        for size in [1025, 100_000, 2 << 20] {
            let error = await #expect(throws: PasteboardError.self) { try await pasteboard.setData(randomBytes(size), forType: .pdf) }
            #expect(error?.code == .tooLarge, "\(size) bytes")
        }
        #expect(try await pasteboard.string() == "fits")
        #expect(try await pasteboard.changeCount == 1)

        try await world.pasteboard(.find).setString("second")
        let error = await #expect(throws: PasteboardError.self) { try await world.pasteboard(.drag).setString("third") }
        #expect(error?.code == .quotaExceeded)
    }

    @Test("pasteboards on one bus share one connection")
    func sharedConnection() async throws {
        let world = try await World()
        let first = try SharedConnection.proxy(address: world.address)
        let second = try SharedConnection.proxy(address: world.address)
        #expect(first === second)
        #expect(try world.pasteboard(.general).proxy === world.pasteboard(.find).proxy)
        let otherBus = try await TestBus()
        #expect(try SharedConnection.proxy(address: otherBus.address) !== first)
    }

    @Test("without a server, calls fail with PasteboardConnectionError naming the bus")
    func noServer() async throws {
        let world = try await World(server: false)
        let pasteboard = world.pasteboard()
        let error = await #expect(throws: PasteboardConnectionError.self) { try await pasteboard.changeCount }
        #expect(error?.address == world.address)
        #expect(error?.description.contains(world.address) == true)
        #expect(error?.dbusErrorName.hasPrefix("org.freedesktop.DBus.Error.") == true)
        // The test's bus is not the session bus: the server to start is named with it.
        #expect(error?.reason.contains("start it with `pasteboardd --address '\(world.address)' &`") == true, "\(String(describing: error))")
        await #expect(throws: PasteboardConnectionError.self) { try await pasteboard.setString("x") }
        await #expect(throws: PasteboardConnectionError.self) { try await pasteboard.loadTransferable(type: String.self) }
        await #expect(throws: PasteboardConnectionError.self) { try await Pasteboard.withUniqueName(address: world.address) }
    }

    @Test("without a bus, calls fail with PasteboardConnectionError naming the address")
    func noBus() async throws {
        let pasteboard = World.noServerPasteboard()
        let address = try #require(pasteboard.address)
        let error = await #expect(throws: PasteboardConnectionError.self) { try await pasteboard.types }
        #expect(error?.address == address)
        #expect(error?.reason.isEmpty == false)
    }

    @Test("a server that comes back is used again without a new Pasteboard")
    func serverRestart() async throws {
        let world = try await World()
        let server = try #require(world.server)
        let pasteboard = world.pasteboard()
        try await pasteboard.setString("durable")
        server.kill9()
        await #expect(throws: PasteboardConnectionError.self) { try await pasteboard.changeCount }
        try await server.restart()
        #expect(try await pasteboard.string() == "durable")
        #expect(try await pasteboard.changeCount == 1)
    }

    // MARK: Names

    @Test("withUniqueName gives a new name each time, usable at once")
    func uniqueName() async throws {
        let world = try await World()
        let first = try await Pasteboard.withUniqueName(address: world.address)
        let second = try await Pasteboard.withUniqueName(address: world.address)
        #expect(first.name != second.name)
        #expect(first.name != .general)
        #expect(first.address == world.address)
        #expect(try await first.changeCount == 0)

        try await first.setString("private")
        #expect(try await second.types == nil)
        #expect(try await world.pasteboard(first.name).string() == "private")
        let listed = try await PasteboardProxy.connect(address: world.address).listPasteboards()
        #expect(listed.contains(first.name.rawValue))
    }

    @Test("releaseGlobally removes the pasteboard with its contents; its count still goes forward")
    func releaseGlobally() async throws {
        let world = try await World()
        let pasteboard = try await Pasteboard.withUniqueName(address: world.address)
        try await pasteboard.setString("going away")
        let proxy = try PasteboardProxy.connect(address: world.address)
        #expect(try await proxy.listPasteboards().contains(pasteboard.name.rawValue))

        try await pasteboard.releaseGlobally()
        #expect(try await !proxy.listPasteboards().contains(pasteboard.name.rawValue))
        #expect(try await pasteboard.types == nil)
        #expect(try await pasteboard.string() == nil)
        #expect(try await pasteboard.changeCount >= 2, "counts never go backwards")

        // Releasing again does nothing; writing again creates it afresh.
        try await pasteboard.releaseGlobally()
        try await pasteboard.setString("back")
        #expect(try await pasteboard.string() == "back")
        #expect(try await proxy.listPasteboards().contains(pasteboard.name.rawValue))
    }

    /// AppKit's owner model: after `clearContents()`, `setData` adds types to the first item
    /// and `writeObjects` adds items, one change each; without a clear, a write replaces.
    @Test("after clearContents, setData adds types to the first item and writeObjects adds items, as in AppKit")
    func additionsAfterClear() async throws {
        let world = try await World()
        let pasteboard = world.pasteboard()
        let html = Data("<b>Hello</b>".utf8)
        #expect(try await pasteboard.clearContents() == 1)
        #expect(try await pasteboard.setString("Hello"))
        #expect(try await pasteboard.setData(html, forType: .html))
        #expect(try await pasteboard.types == [.utf8PlainText, .html])
        #expect(try await pasteboard.pasteboardItems?.count == 1)
        #expect(try await pasteboard.string() == "Hello")
        #expect(try await pasteboard.data(forType: .html) == html)
        // The same type again replaces its data, in place.
        #expect(try await pasteboard.setString("Hello again"))
        #expect(try await pasteboard.types == [.utf8PlainText, .html])
        #expect(try await pasteboard.string() == "Hello again")
        #expect(try await pasteboard.changeCount == 4)

        // writeObjects adds items after those, call after call.
        #expect(try await pasteboard.writeObjects(["b"]))
        #expect(try await pasteboard.writeObjects(["c", "d"]))
        let items = try #require(try await pasteboard.pasteboardItems)
        #expect(items.count == 4)
        #expect(try await items[0].string() == "Hello again")
        #expect(try await pasteboard.loadTransferables(type: String.self) == ["Hello again", "b", "c", "d"])

        // Another object of the same name has not cleared: its writes replace.
        let other = world.pasteboard(.general)
        #expect(try await other.writeObjects(["replaced"]))
        #expect(try await other.pasteboardItems?.count == 1)
        // The first object is no longer the owner: its additions write nothing, as in AppKit,
        // and never bring its earlier contents back.
        let count = try await pasteboard.changeCount
        #expect(try await pasteboard.writeObjects(["late"]) == false)
        #expect(try await pasteboard.setString("late", forType: .html) == false)
        #expect(try await pasteboard.changeCount == count)
        #expect(try await pasteboard.loadTransferables(type: String.self) == ["replaced"])
        // Until it clears again, as in AppKit.
        #expect(try await pasteboard.setString("after") == false)
        #expect(try await pasteboard.changeCount == count)
        try await pasteboard.clearContents()
        #expect(try await pasteboard.setString("after"))
        #expect(try await pasteboard.types == [.utf8PlainText])
    }

    /// A clipboard manager that takes the emptied clipboard back at once (KDE's Klipper does,
    /// by default) changes the pasteboard between an app's clear and its first write. AppKit
    /// would write nothing; here that write takes the place of the manager's change, and what
    /// the app adds next goes to the same item.
    @Test("the first addition after clearContents replaces a change another program made in between")
    func setDataAfterAnotherProgramWrote() async throws {
        let world = try await World()
        let pasteboard = world.pasteboard()
        try await pasteboard.clearContents()
        expectSuccess(try await world.pbctl("copy", input: "restored by a clipboard manager"))
        #expect(try await pasteboard.setString("mine"))
        #expect(try await pasteboard.string() == "mine")
        #expect(try await pasteboard.changeCount == 3)
        #expect(try await pasteboard.setData(Data("<b>mine</b>".utf8), forType: .html))
        #expect(try await pasteboard.types == [.utf8PlainText, .html])
        #expect(try await pasteboard.pasteboardItems?.count == 1)
    }

    /// One object's writes at once (`.general` is the whole process's) each see the other's:
    /// they run one at a time, so that neither undoes the other.
    @Test("additions made at once by one object all arrive")
    func concurrentAdditions() async throws {
        let world = try await World()
        let pasteboard = world.pasteboard()
        for round in 0..<10 {
            try await pasteboard.clearContents()
            async let text = pasteboard.setString("text \(round)")
            async let html = pasteboard.setData(Data("<i>\(round)</i>".utf8), forType: .html)
            async let png = pasteboard.setData(Data([0x89, 0x50, 0x4E, 0x47]), forType: .png)
            #expect(try await [text, html, png] == [true, true, true])
            let types = try #require(try await pasteboard.types)
            #expect(Set(types) == [.utf8PlainText, .html, .png], "\(types)")
            #expect(try await pasteboard.pasteboardItems?.count == 1)
        }
    }

    /// A promised write replaces the contents, and ends what the object had added since a
    /// clear: a later write replaces in turn, and nothing earlier comes back.
    @Test("writePromised ends the write session")
    func promisedWriteEndsTheSession() async throws {
        let world = try await World()
        let pasteboard = world.pasteboard()
        try await pasteboard.clearContents()
        try await pasteboard.setString("earlier")
        try await pasteboard.writePromised([[.png]]) { _, _ in Data([0x89, 0x50, 0x4E, 0x47]) }
        #expect(try await pasteboard.types == [.png])
        try await pasteboard.setString("caption")
        #expect(try await pasteboard.types == [.utf8PlainText])
        #expect(try await pasteboard.string() == "caption")
    }

    /// A read of the whole pasteboard lists the items, then reads with their change count; a
    /// program writing hundreds of times a second changed it in between often, and every such
    /// read failed with `Stale`. It is now read again: each answer is one whole write's.
    @Test("reads of the whole pasteboard outlast another writer's changes")
    func readsOutlastAWriter() async throws {
        let world = try await World()
        let reader = world.pasteboard()
        let writer = try await Self.writeBackToBack(on: world.address, pause: .milliseconds(5))
        defer { writer.cancel() }
        for _ in 0..<50 {
            let value = try #require(try await reader.loadTransferable(type: String.self))
            #expect(value.hasPrefix("w"), "\(value)")
            let all = try await reader.loadTransferables(type: String.self)
            // Both items of one write: never the first of one and the second of another.
            #expect(all.count == 2 && all[0].dropFirst() == all[1].dropFirst(), "\(all)")
        }
    }

    /// A writer with no pause at all between writes changes the pasteboard between nearly every
    /// listing and read: a read of one datum is then made without expecting the listed count
    /// (of whatever generation is current, which still has the type).
    @Test("string and data outlast a writer that writes back to back")
    func singleReadsOutlastABackToBackWriter() async throws {
        let world = try await World()
        let reader = world.pasteboard()
        let writer = try await Self.writeBackToBack(on: world.address, pause: nil)
        defer { writer.cancel() }
        // Few rounds: the writer keeps a core busy for as long as they take.
        for _ in 0..<15 {
            let text = try #require(try await reader.string())
            #expect(text.hasPrefix("w"), "\(text)")
            let data = try #require(try await reader.data(forType: .utf8PlainText))
            #expect(data.first == UInt8(ascii: "w"))
        }
    }

    /// Another program (a connection of its own) writing two text items, `wN` and `xN`, again
    /// and again, with `pause` between writes; returns once the first is written.
    static func writeBackToBack(on address: String, pause: Duration?) async throws -> Task<Void, Never> {
        let writer = try PasteboardProxy.connect(address: address)
        let text = "text/plain;charset=utf-8"
        _ = try await writer.writeItems("general", [[(text, Data("w0".utf8))], [(text, Data("x0".utf8))]])
        return Task {
            var round = 1
            while !Task.isCancelled {
                _ = try? await writer.writeItems("general", [[(text, Data("w\(round)".utf8))], [(text, Data("x\(round)".utf8))]])
                round += 1
                if let pause { try? await Task.sleep(for: pause) }
            }
        }
    }
}

// MARK: - Types for these tests

extension UTType {
    fileprivate static let itemTodo = UTType(exportedAs: "com.example.tests.client.todo", conformingTo: .json)
}

/// A to-do item: JSON under its own type, then its title as text.
private struct ItemTodo: Codable, Equatable, Transferable {
    var title: String

    static var transferRepresentation: some TransferRepresentation {
        CodableRepresentation(contentType: .itemTodo)
        ProxyRepresentation(exporting: \.title)
    }
}
