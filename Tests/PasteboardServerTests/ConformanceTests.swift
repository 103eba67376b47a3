import DBus
import Testing
import TestSupport

/// Type matching: conformance for `AvailableType`, `CanRead` and `ReadBest`; any spelling of
/// the same type for `ReadData` and `ReadFd`.
struct ConformanceTests {
    @Test func htmlSatisfiesARequestForPlainText() async throws {
        let h = try await Harness()
        try await h.write([[("text/html", "<i>x</i>".bytes)]])
        #expect(try await h.canRead(["text/plain"]) == true)
        #expect(try await h.availableType(["image/png", "text/plain"]) == "text/plain")
        #expect(try await h.readBest(["text/plain"]) == (1, "text/html", "<i>x</i>".bytes))
        // ReadData matches exactly.
        await h.expectFailure("NoSuchType", "ReadData", [.string("general"), .uint32(0), .string("text/plain"), .uint64(0)])
        // Conformance goes one way only.
        try await h.write([[("text/plain", "x".bytes)]], to: "plain")
        #expect(try await h.canRead(["text/html"], in: "plain") == false)
        #expect(try await h.availableType(["text/html"], in: "plain") == "")
    }

    @Test func appleIdentifiersAreAliases() async throws {
        let h = try await Harness()
        let png: [UInt8] = [0x89, 0x50, 0x4E, 0x47, 0x0D, 0x0A, 0x1A, 0x0A]
        try await h.write([[("image/png", png), ("public.utf8-plain-text", "hi".bytes)]])
        #expect(try await h.readData("public.png") == (1, png))
        #expect(try await h.readData("image/png") == (1, png))
        #expect(try await h.readData("IMAGE/PNG") == (1, png))
        #expect(try await h.readFdBytes("public.png") == (1, png))
        #expect(try await h.readData("text/plain;charset=utf-8") == (1, "hi".bytes))
        #expect(try await h.readData("text/plain; charset=UTF-8") == (1, "hi".bytes))
        #expect(try await h.types().types == ["image/png", "text/plain;charset=utf-8"])
        #expect(try await h.canRead(["public.png"]) == true)
        #expect(try await h.canRead(["public.jpeg"]) == false)
        #expect(try await h.readBest(["public.plain-text"]) == (1, "text/plain;charset=utf-8", "hi".bytes))
    }

    /// The MIME database's aliases are other names of one type: an exact read by one finds
    /// data written under another (`public.rtf` is `text/rtf`, an alias of `application/rtf`).
    @Test func aliasesOfTheMIMEDatabaseAreSpellingsToo() async throws {
        let h = try await Harness()
        let rtf = Array("{\\rtf1 x}".utf8)
        try await h.write([[("public.rtf", rtf), ("application/x-pdf", [1])]])
        #expect(try await h.readData("application/rtf") == (1, rtf))
        #expect(try await h.readFdBytes("application/rtf") == (1, rtf))
        #expect(try await h.readData("text/rtf") == (1, rtf))
        #expect(try await h.readData("application/pdf") == (1, [1]))
        #expect(try await h.readData("com.adobe.pdf") == (1, [1]))
        try await h.write([[("application/rtf", rtf)]], to: "other")
        #expect(try await h.readData("public.rtf", in: "other") == (1, rtf))
        // Not a conformance: an alias of a parent is not the child's spelling.
        await h.expectFailure("NoSuchType", "ReadData", [.string("other"), .uint32(0), .string("text/plain"), .uint64(0)])
    }

    /// "Any image": a media type's wildcard (`image/*`, as GIO's `g_content_type_is_a` reads
    /// one) and Apple's abstract `public.image`, `public.audio` and `public.movie`, which map to
    /// them, match every type of that media type; `*/*` matches anything.
    @Test func wildcardsAndAbstractAppleTypesMatchAMediaType() async throws {
        let h = try await Harness()
        let png: [UInt8] = [0x89, 0x50, 0x4E, 0x47, 0x0D, 0x0A, 0x1A, 0x0A]
        try await h.write([[("text/html", "<b>x</b>".bytes), ("image/jpeg", [0xFF, 0xD8]), ("image/png", png)]])
        #expect(try await h.canRead(["image/*"]) == true)
        #expect(try await h.canRead(["public.image"]) == true)
        #expect(try await h.canRead(["audio/*"]) == false)
        #expect(try await h.canRead(["public.movie"]) == false)
        #expect(try await h.availableType(["public.audio", "public.image", "text/plain"]) == "public.image")
        #expect(try await h.availableType(["*/*"]) == "*/*")
        // The item's richest image: its first.
        #expect(try await h.readBest(["image/*"]) == (1, "image/jpeg", [0xFF, 0xD8]))
        #expect(try await h.readBest(["public.image"]) == (1, "image/jpeg", [0xFF, 0xD8]))
        #expect(try await h.readBest(["text/*"]) == (1, "text/html", "<b>x</b>".bytes))
        // A wildcard is a request, not a type the item has: an exact read finds nothing.
        await h.expectFailure("NoSuchType", "ReadData", [.string("general"), .uint32(0), .string("image/*"), .uint64(0)])
        try await h.write([[("audio/ogg", [1])]], to: "sound")
        #expect(try await h.availableType(["public.image", "public.audio"], in: "sound") == "public.audio")
        #expect(try await h.canRead(["image/*"], in: "sound") == false)
        // Written, an abstract type is kept as written: no bytes are "an image" of no format.
        try await h.write([[("public.image", [9])]], to: "abstract")
        #expect(try await h.types("abstract").types == ["public.image"])
        #expect(try await h.readData("public.image", in: "abstract") == (1, [9]))
        #expect(try await h.canRead(["image/*"], in: "abstract") == false)
    }

    @Test func availableTypeAnswersTheRequestedEntryAsGiven() async throws {
        let h = try await Harness()
        try await h.write([[("image/png", [1]), ("text/plain;charset=utf-8", "x".bytes)]])
        #expect(try await h.availableType(["public.png"]) == "public.png")
        #expect(try await h.availableType(["public.jpeg", "text/plain ; charset=UTF-8"]) == "text/plain ; charset=UTF-8")
        #expect(try await h.availableType(["com.example.none", "Text/Plain"]) == "Text/Plain")
        #expect(try await h.availableType(["public.utf8-plain-text", "image/png"]) == "public.utf8-plain-text")
    }

    @Test func availableTypeSearchesEveryItem() async throws {
        let h = try await Harness()
        try await h.write([[("text/plain", "a".bytes)], [("image/jpeg", [1])], [("application/pdf", [2])]])
        #expect(try await h.availableType(["application/pdf", "image/jpeg"]) == "application/pdf")
        #expect(try await h.availableType(["image/gif", "image/jpeg"]) == "image/jpeg")
        #expect(try await h.canRead(["com.adobe.pdf"]) == true)
    }

    @Test func readBestPicksTheClosestType() async throws {
        let h = try await Harness()
        try await h.write([[
            ("text/html", "<b>x</b>".bytes), ("text/plain;charset=utf-8", "utf8".bytes), ("text/plain", "plain".bytes),
        ]])
        // An exact match beats a richer type listed first.
        #expect(try await h.readBest(["text/plain"]) == (1, "text/plain", "plain".bytes))
        #expect(try await h.readBest(["text/plain;charset=utf-8"]) == (1, "text/plain;charset=utf-8", "utf8".bytes))
        #expect(try await h.readBest(["public.utf8-plain-text"]) == (1, "text/plain;charset=utf-8", "utf8".bytes))
        // The first satisfiable entry decides, not the best overall.
        #expect(try await h.readBest(["image/png", "text/html", "text/plain"]) == (1, "text/html", "<b>x</b>".bytes))
        // A parameter the item does not have is not satisfied.
        await h.expectFailure("NoSuchType", "ReadBest", [.string("general"), .uint32(0), .strings(["text/plain;charset=iso-8859-1"]), .uint64(0)])
    }

    @Test func octetStreamMatchesAnything() async throws {
        let h = try await Harness()
        try await h.write([[("com.example.todo", [7])], [("image/png", [8]), ("text/plain", [9])]])
        #expect(try await h.canRead(["application/octet-stream"]) == true)
        #expect(try await h.availableType(["application/octet-stream"]) == "application/octet-stream")
        #expect(try await h.readBest(["application/octet-stream"], item: 1) == (1, "image/png", [8]))
        #expect(try await h.readBest(["text/plain", "application/octet-stream"], item: 1) == (1, "text/plain", [9]))
        // Every type, inode/* ones too (which shared-mime-info does not count as streams).
        try await h.write([[("inode/directory", [1])]], to: "folder")
        #expect(try await h.canRead(["application/octet-stream"], in: "folder") == true)
        #expect(try await h.readBest(["public.data"], in: "folder") == (1, "inode/directory", [1]))
    }

    @Test func identifiersMatchOnlyThemselves() async throws {
        let h = try await Harness()
        try await h.write([[("com.example.todo", [1])]])
        #expect(try await h.readData("com.example.todo") == (1, [1]))
        #expect(try await h.readData("COM.EXAMPLE.TODO") == (1, [1]))
        #expect(try await h.canRead(["com.example.other"]) == false)
        #expect(try await h.canRead(["text/plain"]) == false)
        #expect(try await h.availableType(["com.example.todo"]) == "com.example.todo")
    }

    @Test func subclassesOfTextConformToPlainText() async throws {
        let h = try await Harness()
        try await h.write([[("text/csv", "a,b".bytes)], [("application/json", "{}".bytes)]])
        #expect(try await h.readBest(["text/plain"], item: 0) == (1, "text/csv", "a,b".bytes))
        #expect(try await h.canRead(["public.comma-separated-values-text"]) == true)
        #expect(try await h.readBest(["public.json"], item: 1) == (1, "application/json", "{}".bytes))
    }
}
