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
        let a = try await ServedBus.start(
            products: fixture.products, busConfig: fixture.busConfig, directory: fixture.directory + "/shared-a",
            arguments: ["--desktop", "off", "--store", cluster.url])
        defer { a.stop() }
        let b = try await ServedBus.start(
            products: fixture.products, busConfig: fixture.busConfig, directory: fixture.directory + "/shared-b",
            arguments: ["--desktop", "off", "--store", cluster.url])
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
}
