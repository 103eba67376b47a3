import DBus
import Foundation
import Testing
import TestSupport

/// What the server and `pbctl` do without `--address` and `--state-dir`: the session bus from
/// `DBUS_SESSION_BUS_ADDRESS`, the state under `$XDG_STATE_HOME/pasteboardd`; and the installed
/// activation files naming the same bus name.
struct DefaultsTests {
    @Test func theSessionBusAndTheStateHomeAreTheDefaults() async throws {
        let bus = try await TestBus()
        let stateHome = try Paths.temporaryDirectory("pasteboardd-xdg-state")
        defer { try? FileManager.default.removeItem(atPath: stateHome) }
        // Spawned programs run without the test's DBUS_SESSION_BUS_ADDRESS; this one is given back.
        let environment = ["DBUS_SESSION_BUS_ADDRESS": bus.address, "XDG_STATE_HOME": stateHome]

        func startServer() async throws -> ChildProcess {
            let server = try ChildProcess(try Paths.product("pasteboardd"), [], environment: environment)
            server.send(Data())
            let watcher = try Connection.connect(address: bus.address)
            defer { watcher.close() }
            // The default 20 s: with every suite running on two cores a start can take seconds.
            let owns = try await eventually {
                guard server.exitStatus == nil else { return true }
                guard let owner = try await watcher.nameOwner(TestServer.busName) else { return false }
                return (try? await watcher.unixProcessID(of: owner)) == UInt32(server.pid)
            }
            guard owns, server.exitStatus == nil else {
                throw TestSupportError("pasteboardd did not own \(TestServer.busName) on the session bus: status \(String(describing: server.exitStatus))\n\(String(decoding: server.stderr, as: UTF8.self))")
            }
            return server
        }

        func pbctl(_ arguments: String..., input: String = "") async throws -> Outcome {
            try await runProgram(try Paths.product("pbctl"), arguments, input: Data(input.utf8), environment: ["DBUS_SESSION_BUS_ADDRESS": bus.address])
        }

        var server = try await startServer()
        let database = stateHome + "/pasteboardd/pasteboards.sqlite"

        // pbctl finds the server through DBUS_SESSION_BUS_ADDRESS alone.
        let copied = try await pbctl("copy", input: "by default")
        #expect(copied.status == 0 && copied.err.isEmpty, "\(copied)")
        let pasted = try await pbctl("paste")
        #expect(pasted.status == 0 && pasted.out == "by default", "\(pasted)")

        // The write landed under XDG_STATE_HOME ...
        let attributes = try FileManager.default.attributesOfItem(atPath: database)
        #expect((attributes[.size] as? NSNumber)?.intValue ?? 0 > 0, "\(attributes)")

        // ... and is read back from there by the next server.
        server.kill()
        server = try await startServer()
        let again = try await pbctl("paste")
        #expect(again.status == 0 && again.out == "by default", "\(again)")
        server.kill()
    }

    @Test func theActivationFilesNameTheServersBusName() throws {
        let service = try Self.keys(in: "dbus/org.pasteboardd.Pasteboard1.service")
        #expect(service["D-BUS Service"]?["Name"] == TestServer.busName, "\(service)")
        #expect(service["D-BUS Service"]?["SystemdService"] == "pasteboardd.service", "\(service)")

        let unit = try Self.keys(in: "dbus/pasteboardd.service")
        #expect(unit["Service"]?["BusName"] == TestServer.busName, "\(unit)")
        #expect(unit["Service"]?["Type"] == "dbus", "\(unit)")
        // The sandbox lets the server reach what may be on another host: a PostgreSQL store,
        // an X display over TCP.
        let families = Set((unit["Service"]?["RestrictAddressFamilies"] ?? "").split(separator: " ").map(String.init))
        #expect(families.isSuperset(of: ["AF_UNIX", "AF_INET", "AF_INET6"]), "\(families)")
    }

    /// The `KEY=VALUE` lines of an ini-style file by section (comments and blank lines left out).
    static func keys(in path: String) throws -> [String: [String: String]] {
        let text = try String(contentsOfFile: Paths.repository + "/" + path, encoding: .utf8)
        var sections: [String: [String: String]] = [:]
        var section = ""
        for line in text.split(separator: "\n").map({ $0.trimmingCharacters(in: .whitespaces) }) {
            if line.isEmpty || line.hasPrefix("#") || line.hasPrefix(";") { continue }
            if line.hasPrefix("["), line.hasSuffix("]") {
                section = String(line.dropFirst().dropLast())
                continue
            }
            guard let equals = line.firstIndex(of: "=") else { continue }
            let key = line[..<equals].trimmingCharacters(in: .whitespaces)
            let value = line[line.index(after: equals)...].trimmingCharacters(in: .whitespaces)
            sections[section, default: [:]][key] = value
        }
        return sections
    }
}
