import Foundation
import PasteboardModel
import Testing

@Suite("PasteboardError")
struct PasteboardErrorTests {
    /// The contract's error names, written out so a renamed case cannot go unnoticed.
    static let contractNames: [(PasteboardError.Code, String)] = [
        (.invalidName, "org.pasteboardd.Error.InvalidName"),
        (.invalidType, "org.pasteboardd.Error.InvalidType"),
        (.invalidArgument, "org.pasteboardd.Error.InvalidArgument"),
        (.noSuchItem, "org.pasteboardd.Error.NoSuchItem"),
        (.noSuchType, "org.pasteboardd.Error.NoSuchType"),
        (.stale, "org.pasteboardd.Error.Stale"),
        (.conflict, "org.pasteboardd.Error.Conflict"),
        (.tooLarge, "org.pasteboardd.Error.TooLarge"),
        (.quotaExceeded, "org.pasteboardd.Error.QuotaExceeded"),
        (.accessDenied, "org.pasteboardd.Error.AccessDenied"),
        (.providerFailed, "org.pasteboardd.Error.ProviderFailed"),
    ]

    @Test("every code has the contract's D-Bus name and reads back from it", arguments: contractNames)
    func dbusNameRoundTrip(code: PasteboardError.Code, name: String) {
        #expect(code.dbusErrorName == name)
        #expect(PasteboardError.Code(dbusErrorName: name) == code)
        #expect(PasteboardError(code, "m").dbusErrorName == name)
    }

    @Test("the contract lists every code and no other")
    func allCodesAreInTheContract() {
        #expect(PasteboardError.Code.allCases.count == Self.contractNames.count)
        #expect(Set(PasteboardError.Code.allCases) == Set(Self.contractNames.map(\.0)))
    }

    @Test(
        "names that are not the pasteboard's errors do not parse",
        arguments: [
            "org.freedesktop.DBus.Error.Failed",
            "org.pasteboardd.Error.Bogus",
            "org.pasteboardd.Error.",
            "org.pasteboardd.Error.invalidName",
            "InvalidName",
            "org.pasteboardd.Error.InvalidName.Extra",
            "",
        ])
    func foreignNames(name: String) {
        #expect(PasteboardError.Code(dbusErrorName: name) == nil)
        #expect(PasteboardError(dbusErrorName: name, message: "x") == nil)
    }

    @Test("an error rebuilt from a D-Bus reply equals the one sent")
    func errorRoundTrip() {
        let sent = PasteboardError.stale("The pasteboard changed; read it again.")
        let received = PasteboardError(dbusErrorName: sent.dbusErrorName, message: sent.message)
        #expect(received == sent)
    }

    @Test("each helper makes its code")
    func helpers() {
        let made: [PasteboardError] = [
            .invalidName("m"), .invalidType("m"), .invalidArgument("m"), .noSuchItem("m"),
            .noSuchType("m"), .stale("m"), .conflict("m"), .tooLarge("m"), .quotaExceeded("m"),
            .accessDenied("m"), .providerFailed("m"),
        ]
        #expect(made.map(\.code) == Self.contractNames.map(\.0))
        #expect(made.allSatisfy { $0.message == "m" })
    }

    @Test("description is the code's name, then the message")
    func description() {
        let error = PasteboardError(.tooLarge, "The data is 9 MB; the limit is 8 MB.")
        #expect(error.description == "TooLarge: The data is 9 MB; the limit is 8 MB.")
    }

    @Test("typed throws carry the code to the catch site")
    func typedThrows() {
        var caught: PasteboardError.Code?
        do throws(PasteboardError) {
            _ = try PasteboardName(validating: "")
        } catch where error.code == .invalidType {
            caught = .invalidType
        } catch {
            caught = error.code
        }
        #expect(caught == .invalidName)
    }
}

@Suite("PasteboardError with Foundation")
struct PasteboardErrorFoundationTests {
    @Test("localizedDescription is the message")
    func localizedDescription() {
        let error: any Error = PasteboardError.noSuchItem("The pasteboard has 2 items; item 5 does not exist.")
        #expect(error.localizedDescription == "The pasteboard has 2 items; item 5 does not exist.")
    }
}
