import DBus
import Foundation
import ProcessSpawning

#if canImport(Glibc)
import Glibc
#endif

/// The PostgreSQL store: a private PostgreSQL and two servers pointed at it, each on a bus of
/// its own (two "hosts"), against the floor of the main fixture in the same run.
struct SharedFigures {
    let fixture: BusFixture
    let repetitions: Int

    static let payload = [UInt8](repeating: 0x73, count: 100)

    /// The figures, or none when PostgreSQL is not installed (said on stderr).
    func measure() async throws -> [Figure] {
        let cluster: PostgresCluster
        do {
            cluster = try PostgresCluster()
        } catch {
            FileHandle.standardError.write(Data("shared-store figures skipped: \(error)\n".utf8))
            return []
        }
        let a = try await Host.start(fixture: fixture, store: cluster.url, label: "a")
        defer { a.stop() }
        let b = try await Host.start(fixture: fixture, store: cluster.url, label: "b")
        defer { b.stop() }
        let writer = try Connection.connect(address: a.address)
        defer { writer.close() }
        let floorClient = try fixture.connect()
        defer { floorClient.close() }

        var setGet = Sample(), floorSetGet = Sample()
        var sameHost = Sample(), acrossHosts = Sample(), floorSignal = Sample()
        let onA = try await Self.changes(on: writer)
        let listenerB = try Connection.connect(address: b.address)
        defer { listenerB.close() }
        let onB = try await Self.changes(on: listenerB)
        let floorSignals = try await floorClient.signals(matching: MatchRule(interface: EchoFloor.interface, member: EchoFloor.signal))
        var aIterator = onA.makeAsyncIterator(), bIterator = onB.makeAsyncIterator(), floorIterator = floorSignals.makeAsyncIterator()

        for index in 0..<(repetitions + 20) {
            let pasteboard = try await timed {
                _ = try await Self.write(writer)
                _ = try await writer.call(
                    destination: BusFixture.serverName, path: BusFixture.serverPath, interface: BusFixture.serverName, method: "ReadData",
                    arguments: [.string("bench-shared"), .uint32(0), .string(Measurements.type), .uint64(0)])
            }
            _ = await aIterator.next()
            _ = await bIterator.next()
            let floor = try await timed {
                _ = try await floorClient.call(destination: EchoFloor.busName, path: EchoFloor.path, interface: EchoFloor.interface, method: "Set", arguments: [.bytes(Self.payload)])
                _ = try await floorClient.call(destination: EchoFloor.busName, path: EchoFloor.path, interface: EchoFloor.interface, method: "Get")
            }
            // One write, seen on its own host and on the other.
            let start = monotonicNanoseconds()
            _ = try await Self.write(writer)
            _ = await aIterator.next()
            let here = monotonicNanoseconds()
            _ = await bIterator.next()
            let there = monotonicNanoseconds()
            let floorStart = monotonicNanoseconds()
            _ = try await floorClient.call(destination: EchoFloor.busName, path: EchoFloor.path, interface: EchoFloor.interface, method: "Emit")
            _ = await floorIterator.next()
            let floorEnd = monotonicNanoseconds()
            guard index >= 20 else { continue }
            setGet.add(pasteboard.micros)
            floorSetGet.add(floor.micros)
            sameHost.add(Double(here - start) / 1_000)
            acrossHosts.add(Double(there - start) / 1_000)
            floorSignal.add(Double(floorEnd - floorStart) / 1_000)
        }
        return [
            Figure("PostgreSQL: 100 B WriteItems + ReadData", unit: "µs", setGet, floor: floorSetGet, floorName: "Set+Get", goal: .informational),
            Figure("PostgreSQL: write → Changed, same host", unit: "µs", sameHost, floor: floorSignal, floorName: "Emit→signal", goal: .informational),
            Figure("PostgreSQL: write on A → Changed on B", unit: "µs", acrossHosts, floor: floorSignal, floorName: "Emit→signal", goal: .below(5000)),
        ]
    }

    private static func write(_ connection: Connection) async throws -> [DBusValue] {
        let item = DBusValue.dictionary(key: "s", value: "ay", [(.string(Measurements.type), .bytes(payload))])
        return try await connection.call(
            destination: BusFixture.serverName, path: BusFixture.serverPath, interface: BusFixture.serverName, method: "WriteItems",
            arguments: [.string("bench-shared"), .array(element: "a{say}", [item]), Measurements.noOptions])
    }

    private static func changes(on connection: Connection) async throws -> AsyncStream<Message> {
        try await connection.signals(matching: MatchRule(interface: BusFixture.serverName, member: "Changed", arg0: "bench-shared"))
    }

    /// A bus of its own with a server on the shared store.
    private struct Host {
        let address: String
        let pids: [pid_t]

        static func start(fixture: BusFixture, store: String, label: String) async throws -> Host {
            let directory = fixture.directory + "/shared-" + label
            try FileManager.default.createDirectory(atPath: directory + "/state", withIntermediateDirectories: true)
            let address = "unix:path=\(directory)/bus"
            let daemon = try Spawn.start(try BusFixture.executable(named: "dbus-daemon"), ["--config-file=\(fixture.busConfig)", "--nofork", "--address=\(address)"])
            var probe: Connection?
            let deadline = monotonicNanoseconds() + 10_000_000_000
            while probe == nil, monotonicNanoseconds() < deadline {
                probe = try? Connection.connect(address: address)
                if probe == nil { usleep(2_000) }
            }
            guard let probe else { throw BenchError("dbus-daemon did not listen on \(address)") }
            defer { probe.close() }
            let server = try Spawn.start(
                fixture.products + "/pasteboardd",
                ["--address", address, "--state-dir", directory + "/state", "--desktop", "off", "--store", store],
                output: directory + "/pasteboardd.log")
            let host = Host(address: address, pids: [server, daemon])
            while try await probe.nameOwner(BusFixture.serverName) == nil {
                guard monotonicNanoseconds() < deadline else {
                    host.stop()
                    throw BenchError("the server on the shared store did not start (log: \(directory)/pasteboardd.log)")
                }
                try await Task.sleep(for: .milliseconds(2))
            }
            return host
        }

        func stop() {
            for pid in pids {
                kill(pid, SIGTERM)
                Spawn.wait(pid)
            }
        }
    }
}
