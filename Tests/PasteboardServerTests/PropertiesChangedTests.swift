import DBus
import Foundation
import Testing
import TestSupport

/// `PropertiesChanged` for `Pasteboards`: a proxy that caches properties (GDBus, zbus) hears
/// when the listing changes, and only then.
struct PropertiesChangedTests {
    /// Every signal from the server's path, of any interface, in arrival order.
    private static func recordEverySignal(_ h: Harness) async throws -> SignalRecorder {
        let recorder = SignalRecorder(h.client, try await h.client.signals(matching: MatchRule(path: Harness.path)))
        // A round trip after the match is in place: what the server sends from now on arrives.
        _ = try await h.changeCount()
        return recorder
    }

    private static let invalidatesListing: [DBusValue] = [
        .string(Harness.interface), .dictionary(key: "s", value: "v", []), .strings(["Pasteboards"]),
    ]

    @Test("Listing or unlisting a name is followed by PropertiesChanged invalidating Pasteboards, after its Changed and Removed; other changes send none")
    func listingChangesInvalidatePasteboards() async throws {
        let h = try await Harness()
        let signals = try await Self.recordEverySignal(h)
        // Listed by its first write.
        #expect(try await h.write(text: "one", to: "fresh") == 1)
        var received = await signals.wait(for: 2)
        #expect(received.map(\.member) == ["Changed", "PropertiesChanged"])
        #expect(received.last?.arguments == Self.invalidatesListing)
        #expect(try await h.listPasteboards() == ["fresh"])

        // Written again and cleared: still listed, so nothing about the listing.
        #expect(try await h.write(text: "two", to: "fresh") == 2)
        #expect(try await h.clear("fresh") == 3)
        received = await signals.wait(for: 4)
        #expect(received.dropFirst(2).map(\.member) == ["Changed", "Changed"])

        // Unlisted by Remove: after its Changed and Removed.
        try await h.remove("fresh")
        received = await signals.wait(for: 7)
        #expect(received.dropFirst(4).map(\.member) == ["Changed", "Removed", "PropertiesChanged"])
        #expect(received.last?.arguments == Self.invalidatesListing)
        #expect(try await h.listPasteboards() == [])

        // Removing again changes nothing, and a failed write sends nothing; the next write
        // lists the name again.
        try await h.remove("fresh")
        await h.expectFailure("InvalidType", "WriteItems", [.string("other"), Harness.inlineItems([[("not a type", [1])]]), Harness.options([])])
        #expect(try await h.write(text: "three", to: "fresh") == 5)
        received = await signals.wait(for: 9)
        try await Task.sleep(for: .milliseconds(100))
        #expect(signals.signals.dropFirst(7).map(\.member) == ["Changed", "PropertiesChanged"])
        #expect(try await h.listPasteboards() == ["fresh"])
    }

    @Test("Pasteboards announces its changes in the interface's introspection, and Version and Limits are constant")
    func introspectionSaysWhichPropertiesChange() async throws {
        let h = try await Harness()
        let xml = try #require(try await h.call("Introspect", [], interface: "org.freedesktop.DBus.Introspectable").first?.stringValue)
        let annotation = "org.freedesktop.DBus.Property.EmitsChangedSignal"
        for (property, value) in [("Pasteboards", "invalidates"), ("Desktop", "invalidates"), ("Version", "const"), ("Limits", "const")] {
            let start = try #require(xml.range(of: "<property name=\"\(property)\""), "\(property) not introspected")
            let end = try #require(xml.range(of: "</property>", range: start.upperBound..<xml.endIndex))
            #expect(xml[start.upperBound..<end.lowerBound].contains("name=\"\(annotation)\" value=\"\(value)\""), "\(property)")
        }
    }
}
