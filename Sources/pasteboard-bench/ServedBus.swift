import DBus
import Foundation
import ProcessSpawning

#if canImport(Glibc)
import Glibc
#endif

/// A private bus of its own with a `pasteboardd` on it, for figures that need a server other
/// than the fixture's (bridged to a display, on a shared store): started together, stopped
/// together.
struct ServedBus {
    let address: String
    let pids: [pid_t]

    /// Starts `dbus-daemon` in `directory` and the server with `arguments` (after `--address`
    /// and `--state-dir`) and `environment`, and waits until it owns its name.
    static func start(
        products: String, busConfig: String, directory: String, arguments: [String], environment: [String: String] = [:]
    ) async throws -> ServedBus {
        try FileManager.default.createDirectory(atPath: directory + "/state", withIntermediateDirectories: true)
        let address = "unix:path=\(directory)/bus"
        let daemon = try Spawn.start(try BusFixture.executable(named: "dbus-daemon"), ["--config-file=\(busConfig)", "--nofork", "--address=\(address)"])
        var probe: Connection?
        let deadline = monotonicNanoseconds() + 10_000_000_000
        while probe == nil, monotonicNanoseconds() < deadline {
            probe = try? Connection.connect(address: address)
            if probe == nil { usleep(2_000) }
        }
        guard let probe else {
            kill(daemon, SIGKILL)
            Spawn.wait(daemon)
            throw BenchError("dbus-daemon did not listen on \(address)")
        }
        defer { probe.close() }
        let server = try spawn(
            products + "/pasteboardd", ["--address", address, "--state-dir", directory + "/state"] + arguments,
            standardInput: .open("/dev/null", flags: O_RDONLY, mode: 0), standardOutput: .open("/dev/null", flags: O_WRONLY, mode: 0),
            standardError: .open(directory + "/pasteboardd.log", flags: O_WRONLY | O_CREAT | O_APPEND, mode: 0o644), environment: environment)
        let served = ServedBus(address: address, pids: [server, daemon])
        while try await probe.nameOwner(BusFixture.serverName) == nil {
            guard monotonicNanoseconds() < deadline, kill(server, 0) == 0 else {
                served.stop()
                throw BenchError("pasteboardd \(arguments.joined(separator: " ")) did not start (log: \(directory)/pasteboardd.log)")
            }
            try await Task.sleep(for: .milliseconds(2))
        }
        return served
    }

    func stop() {
        for pid in pids {
            kill(pid, SIGTERM)
            Spawn.wait(pid)
        }
    }
}
