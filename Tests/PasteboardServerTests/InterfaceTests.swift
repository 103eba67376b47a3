import DBus
import Foundation
#if canImport(FoundationXML)
import FoundationXML
#endif
import Testing
import TestSupport

/// The interface as `dbus/org.pasteboardd.Pasteboard1.xml` declares it, against what the server
/// returns from `Introspect` and what it accepts.
struct InterfaceTests {
    static let xmlPath = Paths.repository + "/dbus/org.pasteboardd.Pasteboard1.xml"

    /// Methods the server refuses for now (with `InvalidArgument`), whatever the arguments.
    static let notYetSupported: Set<String> = []

    /// Section 4 of the contract: every method's in and out signature.
    static let contract: [String: (in: String, out: String)] = [
        "ListPasteboards": ("", "as"),
        "ChangeCount": ("s", "t"),
        "ClearContents": ("s", "t"),
        "WriteItems": ("saa{say}a{sv}", "t"),
        "WriteItemsFd": ("saa{sh}a{sv}", "t"),
        "Types": ("s", "tas"),
        "Items": ("s", "taa{sv}"),
        "AvailableType": ("sas", "s"),
        "CanRead": ("sas", "b"),
        "ReadData": ("sust", "tay"),
        "ReadBest": ("suast", "tsay"),
        "ReadFd": ("sust", "th"),
        "WritePromised": ("saasa{sv}", "t"),
        "CreateUnique": ("", "s"),
        "Remove": ("s", ""),
        "History": ("su", "a(txas)"),
        "Restore": ("st", "t"),
    ]

    @Test func introspectReturnsTheInterfaceFileByteForByte() async throws {
        let h = try await Harness()
        let file = try Data(contentsOf: URL(fileURLWithPath: Self.xmlPath))
        let reply = try await h.call("Introspect", interface: "org.freedesktop.DBus.Introspectable")
        let xml = try #require(reply.first?.stringValue)
        #expect(Array(xml.utf8) == Array(file))
        // And without naming the interface.
        #expect(try await h.call("Introspect", interface: nil).first?.stringValue == xml)
    }

    @Test func parentPathsLeadToTheObject() async throws {
        let h = try await Harness()
        var path = ""
        for component in ["org", "pasteboardd", "Pasteboard1"] {
            let message = try Message.methodCall(destination: Harness.busName, path: path.isEmpty ? "/" : path, interface: "org.freedesktop.DBus.Introspectable", method: "Introspect")
            let xml = try #require(try await h.client.call(message, timeout: .seconds(10)).arguments().first?.stringValue)
            #expect(xml.contains("<node name=\"\(component)\"/>"), "\(path.isEmpty ? "/" : path) does not list \(component)")
            path += "/" + component
        }
    }

    @Test func theFileDeclaresTheContractsSignatures() throws {
        let interface = try InterfaceDescription(contentsOf: Self.xmlPath, interface: Harness.interface)
        #expect(Set(interface.methods.map(\.name)) == Set(Self.contract.keys))
        for method in interface.methods {
            #expect(method.inSignature == Self.contract[method.name]?.in, "\(method.name) in")
            #expect(method.outSignature == Self.contract[method.name]?.out, "\(method.name) out")
        }
        #expect(interface.signals.map(\.name) == ["Changed", "Removed"])
        #expect(interface.signals.map(\.signature) == ["stas", "s"])
        // The contract's properties, then the additions (Desktop: what the bridge joins).
        #expect(interface.properties.map(\.name) == ["Version", "Pasteboards", "Limits", "Desktop"])
        #expect(interface.properties.map(\.type) == ["s", "as", "a{st}", "a{ss}"])
        #expect(interface.properties.allSatisfy { $0.access == "read" })
    }

    @Test func everyMethodAcceptsExactlyItsDeclaredSignature() async throws {
        let h = try await Harness()
        let interface = try InterfaceDescription(contentsOf: Self.xmlPath, interface: Harness.interface)
        #expect(interface.methods.count == Self.contract.count)
        try await h.write(text: "stored")
        let stored = try await h.snapshot()

        // Every wrong signature is refused before anything happens.
        for method in interface.methods {
            for wrong in try SampleArguments.wrongVariants(of: method) {
                let error = await h.expectFailure("InvalidArgument", method.name, wrong)
                if let error, !Self.notYetSupported.contains(method.name) {
                    #expect(error.message.contains(method.name), "the message names the method: \(error.message)")
                }
            }
        }
        #expect(try await h.snapshot() == stored)

        // The declared signature gets past the check, and the reply has the declared signature.
        for method in interface.methods {
            let arguments = try SampleArguments.values(for: method)
            do {
                let reply = try await h.reply(method.name, arguments)
                #expect(!Self.notYetSupported.contains(method.name), "\(method.name) succeeded")
                #expect(reply.signature == method.outSignature, "\(method.name) replied '\(reply.signature)'")
            } catch where method.name == "Restore" && error.name == Harness.errorPrefix + "NoSuchItem" {
                // Past the signature check: the sample count is not in the (removed) history.
            } catch {
                #expect(Self.notYetSupported.contains(method.name), "\(method.name)(\(method.inSignature)) failed: \(error)")
                #expect(error.name == Harness.errorPrefix + "InvalidArgument")
                #expect(error.message.contains("not supported"), "\(method.name): \(error.message)")
            }
        }
    }

    @Test func standardInterfacesCheckTheirSignatures() async throws {
        let h = try await Harness()
        let properties = "org.freedesktop.DBus.Properties"
        await h.expectFailure("org.freedesktop.DBus.Error.InvalidArgs", "Get", [.string(Harness.interface)], interface: properties)
        await h.expectFailure("org.freedesktop.DBus.Error.InvalidArgs", "GetAll", [.uint32(1)], interface: properties)
        await h.expectFailure("org.freedesktop.DBus.Error.InvalidArgs", "Set", [.string(Harness.interface), .string("Version")], interface: properties)
        await h.expectFailure("org.freedesktop.DBus.Error.InvalidArgs", "Introspect", [.string("x")], interface: "org.freedesktop.DBus.Introspectable")
        // The object's other interfaces have no properties; an interface it lacks is unknown.
        for other in ["org.freedesktop.DBus.Peer", "org.freedesktop.DBus.Introspectable", properties] {
            let all = try await h.call("GetAll", [.string(other)], interface: properties)
            #expect(all == [.dictionary(key: "s", value: "v", [])], "GetAll(\(other))")
        }
        await h.expectFailure("org.freedesktop.DBus.Error.UnknownInterface", "GetAll", [.string("org.example.Nope")], interface: properties)
    }
}

// MARK: - The interface file

/// The methods, signals and properties of one interface of an introspection document.
struct InterfaceDescription {
    struct Method {
        var name: String
        var inArguments: [(name: String, type: String)] = []
        var outSignature = ""
        var inSignature: String { inArguments.map(\.type).joined() }
    }
    struct Signal { var name: String; var signature = "" }
    struct Property { var name: String; var type: String; var access: String }

    var methods: [Method] = []
    var signals: [Signal] = []
    var properties: [Property] = []

    private init() {}

    init(contentsOf path: String, interface: String) throws {
        let parser = XMLParser(data: try Data(contentsOf: URL(fileURLWithPath: path)))
        let reader = Reader(interface: interface)
        parser.delegate = reader
        guard parser.parse() else { throw TestSupportError("\(path) is not well-formed XML: \(String(describing: parser.parserError))") }
        self = reader.result
    }

    private final class Reader: NSObject, XMLParserDelegate {
        let interface: String
        var inside = false
        var result: InterfaceDescription
        private var member: (kind: String, name: String)?

        init(interface: String) {
            self.interface = interface
            result = InterfaceDescription()
        }

        func parser(_ parser: XMLParser, didStartElement element: String, namespaceURI: String?, qualifiedName: String?, attributes: [String: String] = [:]) {
            switch element {
            case "interface":
                inside = attributes["name"] == interface
            case "method" where inside:
                result.methods.append(Method(name: attributes["name"] ?? ""))
                member = ("method", attributes["name"] ?? "")
            case "signal" where inside:
                result.signals.append(Signal(name: attributes["name"] ?? ""))
                member = ("signal", attributes["name"] ?? "")
            case "property" where inside:
                result.properties.append(Property(name: attributes["name"] ?? "", type: attributes["type"] ?? "", access: attributes["access"] ?? ""))
            case "arg" where inside:
                let type = attributes["type"] ?? ""
                switch member?.kind {
                case "method":
                    if attributes["direction"] == "out" {
                        result.methods[result.methods.count - 1].outSignature += type
                    } else {
                        result.methods[result.methods.count - 1].inArguments.append((attributes["name"] ?? "", type))
                    }
                case "signal":
                    result.signals[result.signals.count - 1].signature += type
                default:
                    break
                }
            default:
                break
            }
        }

        func parser(_ parser: XMLParser, didEndElement element: String, namespaceURI: String?, qualifiedName: String?) {
            switch element {
            case "interface": inside = false
            case "method", "signal": member = nil
            default: break
            }
        }
    }
}

// MARK: - Arguments for any signature of the interface

/// Plausible arguments for each method of the interface, and wrong ones.
enum SampleArguments {
    /// One valid value per argument, by its name in the interface file: the pasteboard
    /// `general`, item 0, type `text/plain`, no options.
    static func values(for method: InterfaceDescription.Method) throws -> [DBusValue] {
        try method.inArguments.map { argument throws -> DBusValue in
            switch (argument.name, argument.type) {
            case ("name", "s"): return .string("general")
            case ("type", "s"): return .string("text/plain")
            case ("types", "as"): return .strings(["text/plain"])
            case ("item", "u"), ("limit", "u"): return .uint32(0)
            case ("expect", "t"): return .uint64(0)
            case ("count", "t"): return .uint64(1)
            case ("itemTypes", "aas"): return .array(element: "as", [.strings(["text/plain"])])
            case ("items", "aa{say}"): return Harness.inlineItems([[("text/plain", "sample".bytes)]])
            case ("items", "aa{sh}"): return Harness.descriptorItems([[("text/plain", try Descriptors.pipe(holding: "sample".bytes))]])
            case ("options", "a{sv}"): return Harness.options([])
            default: throw TestSupportError("no sample value for \(method.name)'s argument \(argument.type) \(argument.name)")
            }
        }
    }

    /// Argument lists that differ from the method's signature: one argument short, one too
    /// many, and each argument replaced by another type (for containers, also by another
    /// element type).
    static func wrongVariants(of method: InterfaceDescription.Method) throws -> [[DBusValue]] {
        let right = try values(for: method)
        var variants: [[DBusValue]] = []
        if !right.isEmpty {
            variants.append(Array(right.dropLast()))
        }
        variants.append(right + [.string("extra")])
        variants.append(right + [.uint32(0)])
        for (index, type) in method.inArguments.map(\.type).enumerated() {
            var changed = right
            changed[index] = type == "s" ? .uint32(7) : .string("general")
            variants.append(changed)
            if let other = otherElementType(type) {
                changed[index] = other
                variants.append(changed)
            }
            if type == "s" {
                changed[index] = .objectPath("/general")
                variants.append(changed)
                changed[index] = .variant(right[index])
                variants.append(changed)
            }
        }
        return variants
    }

    private static func otherElementType(_ type: String) -> DBusValue? {
        switch type {
        case "as": .array(element: "u", [.uint32(1)])
        case "aas": .strings(["text/plain"])
        case "aa{say}": .array(element: "a{ss}", [.dictionary(key: "s", value: "s", [(.string("text/plain"), .string("x"))])])
        case "aa{sh}": Harness.inlineItems([[("text/plain", [1])]])
        case "a{sv}": .dictionary(key: "s", value: "s", [(.string("append"), .string("true"))])
        case "u": .int32(0)
        case "t": .int64(0)
        default: nil
        }
    }
}
