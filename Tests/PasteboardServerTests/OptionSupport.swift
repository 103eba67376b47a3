import DBus
import Foundation
import Testing
import TestSupport

// Helpers for the tests of the write options `expires-in-ms`, `concealed`, `transient` and
// `owner-only`: what a server keeps on disk, what it announces, and reads from other processes.

/// What one `Changed` signal said.
struct Announcement: Equatable, CustomStringConvertible {
    var name: String
    var count: UInt64
    var types: [String]

    init(_ name: String, _ count: UInt64, _ types: [String]) {
        self.name = name
        self.count = count
        self.types = types
    }

    var description: String { "Changed(\(name), \(count), \(types))" }
}

extension SignalRecorder {
    /// The `Changed` signals received so far.
    var announcements: [Announcement] {
        signals.compactMap { $0.changed.map { Announcement($0.name, $0.count, $0.types) } }
    }

    /// Waits until at least `count` `Changed` signals have arrived (or `timeout` has passed),
    /// and returns them all.
    func announcements(_ count: Int, timeout: Duration = .seconds(20)) async -> [Announcement] {
        let deadline = ContinuousClock.now + timeout
        while announcements.count < count, ContinuousClock.now < deadline {
            try? await Task.sleep(for: .milliseconds(5))
        }
        return announcements
    }
}

/// The bytes a server keeps under its state directory.
enum StateFiles {
    /// Every regular file under `directory`, at any depth, with its bytes (a file deleted
    /// while the folder is read is left out).
    static func all(under directory: String) -> [(path: String, bytes: Data)] {
        guard let walker = FileManager.default.enumerator(atPath: directory) else { return [] }
        var files: [(String, Data)] = []
        while let relative = walker.nextObject() as? String {
            let path = directory + "/" + relative
            var isDirectory: ObjCBool = false
            guard FileManager.default.fileExists(atPath: path, isDirectory: &isDirectory), !isDirectory.boolValue,
                  let bytes = FileManager.default.contents(atPath: path) else { continue }
            files.append((relative, bytes))
        }
        return files
    }

    /// The files under `directory` (relative paths) whose bytes contain `marker`.
    static func holding(_ marker: String, under directory: String) -> [String] {
        let needle = Data(marker.utf8)
        return all(under: directory).filter { $0.bytes.range(of: needle) != nil }.map(\.path)
    }

    /// Records an issue for every file under the server's state directory that holds
    /// `marker`, and one if its log does; `when` says at which point of the test.
    static func expectAbsent(_ marker: String, from server: TestServer, _ when: String, sourceLocation: SourceLocation = #_sourceLocation) {
        let files = all(under: server.stateDirectory)
        #expect(files.contains { $0.path.hasSuffix(".sqlite") }, "\(when): the state directory holds no database: \(files.map(\.path))", sourceLocation: sourceLocation)
        let holding = holding(marker, under: server.stateDirectory)
        #expect(holding.isEmpty, "\(when): the secret is on disk in \(holding)", sourceLocation: sourceLocation)
        #expect(!server.log.contains(marker), "\(when): the secret is in the server's log", sourceLocation: sourceLocation)
    }
}

/// A string no test writes by accident.
func uniqueMarker(_ label: String) -> String {
    "\(label)-\(UUID().uuidString)"
}

/// `count` bytes of `marker` repeated, newline-separated, so that every copy of the data
/// holds the marker many times over (and any piece of it at least once).
func payload(repeating marker: String, count: Int) -> [UInt8] {
    let line = Array((marker + "\n").utf8)
    var bytes: [UInt8] = []
    bytes.reserveCapacity(count + line.count)
    while bytes.count < count { bytes.append(contentsOf: line) }
    return Array(bytes.prefix(count))
}

/// Clients that are not the test process.
enum OtherProcess {
    /// `gdbus call` of a method of the interface, as another process.
    static func gdbusCall(_ h: Harness, _ method: String, _ arguments: String...) async throws -> Outcome {
        try await runProgram(
            try Paths.executable(named: "gdbus"),
            ["call", "--address", h.bus.address, "--dest", Harness.busName, "--object-path", Harness.path, "--method", "\(Harness.interface).\(method)"] + arguments,
            timeout: .seconds(20))
    }

    /// The built `pbctl` on the harness's bus.
    static func pbctl(_ h: Harness, _ arguments: String...) async throws -> Outcome {
        try await runProgram(try Paths.product("pbctl"), ["--address", h.bus.address] + arguments, timeout: .seconds(20))
    }

    /// A dbus-python script, after ``IndependentClientTests/pythonPrelude`` (`pb` is the
    /// interface, `error_name(call)` the error a call fails with); returns its JSON output.
    static func python(_ h: Harness, _ script: String) async throws -> [String: Any] {
        try await IndependentClientTests().python(h, IndependentClientTests.pythonPrelude + script)
    }
}
