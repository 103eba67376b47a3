import DBus
import Foundation
import Testing
import TestSupport

/// One test's world: a private bus, a real `pasteboardd` on it (unless asked for none), and
/// the built `pbctl` pointed at that bus with `--address`.
///
/// ```swift
/// let world = try await PbctlHarness()
/// expect(try await world.pbctl("copy", input: "hello"), status: 0)
/// expect(try await world.pbctl("paste"), stdout: "hello")
/// ```
final class PbctlHarness: Sendable {
    /// Inside ``gate`` for as long as the value lives (nil: the test holds a pass itself).
    private let pass: Gate.Pass?
    let bus: TestBus
    /// Nil when the harness was made with `server: false`.
    let server: TestServer?

    /// - Parameters:
    ///   - server: whether to start `pasteboardd` on the bus.
    ///   - limits: `KEY=VALUE` settings for the server's `--limit`.
    ///   - desktop: the display the server's desktop bridge joins; none when nil.
    ///   - store: the server's `--store`; the default when nil.
    ///   - gated: whether to wait for a pass of the gate; a test that makes two worlds takes one
    ///     pass for both (``pass()``), or tests holding one each would wait for each other.
    ///   - environment: variables added to the server's environment.
    init(
        server: Bool = true, limits: [String] = [], desktop: DesktopDisplay? = nil, store: String? = nil, gated: Bool = true,
        environment: [String: String] = [:]
    ) async throws {
        pass = gated ? await Self.gate.pass() : nil
        bus = try await TestBus()
        self.server = server ? try await TestServer(bus: bus, limits: limits, desktop: desktop, store: store, environment: environment) : nil
    }

    /// Swift Testing starts every test at once; a few worlds at a time get through sooner than
    /// dozens of servers starting together on a small machine.
    private static let gate = Gate(width: max(4, 2 * ProcessInfo.processInfo.activeProcessorCount))

    /// A pass of the gate, for a test that makes several worlds with `gated: false`.
    static func pass() async -> Gate.Pass {
        await gate.pass()
    }

    /// Runs `pbctl --address BUS ARGUMENTS...` with `input` on stdin.
    func pbctl(_ arguments: String..., input: Data = Data(), environment: [String: String] = [:]) async throws -> Outcome {
        try await runPbctl(["--address", bus.address] + arguments, input: input, environment: environment)
    }

    /// Runs `pbctl --address BUS ARGUMENTS...` with `input` on stdin.
    func pbctl(_ arguments: [String], input: Data = Data(), environment: [String: String] = [:]) async throws -> Outcome {
        try await runPbctl(["--address", bus.address] + arguments, input: input, environment: environment)
    }

    /// Runs `pbctl --address BUS ARGUMENTS...` with the UTF-8 of `input` on stdin.
    func pbctl(_ arguments: String..., input: String) async throws -> Outcome {
        try await runPbctl(["--address", bus.address] + arguments, input: Data(input.utf8))
    }

    /// Writes items straight through `WriteItems` (pbctl writes only one item): each item is its
    /// types, in order, with their bytes.
    func writeItems(_ name: String = "general", _ items: [[(type: String, data: Data)]], options: [(String, DBusValue)] = []) async throws {
        let connection = try Connection.connect(address: bus.address)
        defer { connection.close() }
        let encoded: [DBusValue] = items.map { item in
            .dictionary(key: "s", value: "ay", item.map { (.string($0.type), .bytes(Array($0.data))) })
        }
        _ = try await connection.call(
            destination: "org.pasteboardd.Pasteboard1", path: "/org/pasteboardd/Pasteboard1", interface: "org.pasteboardd.Pasteboard1",
            method: "WriteItems", arguments: [
                .string(name), .array(element: "a{say}", encoded),
                .dictionary(key: "s", value: "v", options.map { (.string($0.0), .variant($0.1)) }),
            ],
            timeout: .seconds(10))
    }
}

extension PbctlHarness {
    /// Waits until the change count of `name` passes `count`, and returns it.
    func waitForCount(of name: String = "general", above count: UInt64, timeout: Duration = .seconds(20)) async throws -> UInt64 {
        let deadline = ContinuousClock.now + timeout
        while true {
            let now = try await changeCount(name)
            if now > count { return now }
            guard ContinuousClock.now < deadline else { throw TestSupportError("'\(name)' stayed at change \(now) for \(timeout)") }
            try await Task.sleep(for: .milliseconds(20))
        }
    }

    /// Calls a method of the server's interface on a connection of the test's.
    func call(_ method: String, _ arguments: [DBusValue]) async throws(DBusError) -> [DBusValue] {
        let connection = try Connection.connect(address: bus.address)
        defer { connection.close() }
        return try await connection.call(
            destination: "org.pasteboardd.Pasteboard1", path: "/org/pasteboardd/Pasteboard1", interface: "org.pasteboardd.Pasteboard1",
            method: method, arguments: arguments, timeout: .seconds(20))
    }

    /// Waits until `pbctl info` says the server's bridge has joined a desktop of `kind`
    /// (`X11`, `Wayland`). On a loaded machine a display that has just started may still lack
    /// what the bridge needs when the server first looks, and the bridge joins at its retry a
    /// second later; every desktop test starts from a joined bridge.
    func waitUntilBridged(to kind: String) async throws {
        let deadline = ContinuousClock.now + .seconds(20)
        while !(try await pbctl("info").out.contains("desktop: \(kind)")) {
            guard ContinuousClock.now < deadline else { throw TestSupportError("the bridge did not join the \(kind) desktop: \(server?.log ?? "")") }
            try await Task.sleep(for: .milliseconds(50))
        }
    }
}

/// Runs the built `pbctl` with exactly `arguments` (no `--address` added).
func runPbctl(_ arguments: [String], input: Data = Data(), environment: [String: String] = [:]) async throws -> Outcome {
    try await runProgram(try Paths.product("pbctl"), arguments, input: input, environment: environment)
}

/// Records an issue for each part of `result` that differs from what is given; parts left nil
/// are not checked.
func expect(
    _ result: Outcome, status: Int32? = nil, stdout: String? = nil, stderr: String? = nil,
    sourceLocation: SourceLocation = #_sourceLocation
) {
    if let status {
        #expect(result.status == status, "exit status; \(result)", sourceLocation: sourceLocation)
    }
    if let stdout {
        #expect(result.out == stdout, "stdout; \(result)", sourceLocation: sourceLocation)
    }
    if let stderr {
        #expect(result.err == stderr, "stderr; \(result)", sourceLocation: sourceLocation)
    }
}

/// Records an issue unless `result` succeeded silently on stderr with exactly `stdout`.
func expectSuccess(_ result: Outcome, stdout: String = "", sourceLocation: SourceLocation = #_sourceLocation) {
    expect(result, status: 0, stdout: stdout, stderr: "", sourceLocation: sourceLocation)
}

/// `count` bytes of random data, starting with bytes no file signature begins with: random
/// data may otherwise look like an MPEG audio frame (1 time in a few thousand) and be copied
/// as `audio/aac`.
func randomBytes(_ count: Int) -> Data {
    var generator = SystemRandomNumberGenerator()
    var bytes: [UInt8] = [0x00, 0xFE, 0x00, 0xFE]
    bytes.reserveCapacity(count + 8)
    while bytes.count < count {
        withUnsafeBytes(of: generator.next()) { bytes.append(contentsOf: $0) }
    }
    return Data(bytes.prefix(count))
}

/// A temporary file holding `data`, deleted by the caller.
func temporaryFile(_ data: Data, _ label: String = "pbctl-test") throws -> String {
    let path = FileManager.default.temporaryDirectory.appendingPathComponent("\(label)-\(UUID().uuidString)").path
    guard FileManager.default.createFile(atPath: path, contents: data) else {
        throw TestSupportError("cannot create \(path)")
    }
    return path
}
