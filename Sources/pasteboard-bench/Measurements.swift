import DBus
import Foundation

#if canImport(Glibc)
import Glibc
#endif

/// How many times each figure is measured.
struct Repetitions: Sendable {
    var roundTrips: Int
    var signals: Int
    var concurrentRuns: Int
    var callsPerClient: Int
    var transfers: Int
    var largeTransfers: Int
    var coldStarts: Int
    var processStarts = 20
    var warmUp = 20

    static let quick = Repetitions(roundTrips: 1000, signals: 500, concurrentRuns: 5, callsPerClient: 200, transfers: 5, largeTransfers: 0, coldStarts: 3)
    static let full = Repetitions(roundTrips: 3000, signals: 1000, concurrentRuns: 9, callsPerClient: 400, transfers: 10, largeTransfers: 3, coldStarts: 7)
}

/// The benchmark figures, each measured against its floor in the same run, server and floor
/// alternating so that the machine's noise falls on both alike.
struct Measurements {
    let fixture: BusFixture
    let repetitions: Repetitions

    static let type = "application/octet-stream"
    static let noOptions = DBusValue.dictionary(key: "s", value: "v", [])
    static let mebibyte = 1 << 20

    // MARK: Calls

    static func server(_ connection: Connection, _ method: String, _ arguments: [DBusValue]) async throws -> [DBusValue] {
        try await connection.call(
            destination: BusFixture.serverName, path: BusFixture.serverPath, interface: BusFixture.serverName,
            method: method, arguments: arguments)
    }

    /// A call to the server, built but not sent.
    static func serverCall(_ method: String, _ arguments: [DBusValue]) throws -> Message {
        try Message.methodCall(
            destination: BusFixture.serverName, path: BusFixture.serverPath, interface: BusFixture.serverName,
            method: method, arguments: arguments)
    }

    /// A call to a floor: the one on the project's `DBus` module, or (`c`) the one in C.
    private func echo(_ connection: Connection, _ method: String, _ arguments: [DBusValue] = [], c: Bool = false) async throws -> [DBusValue] {
        try await connection.call(
            destination: c ? EchoFloor.cBusName : EchoFloor.busName, path: EchoFloor.path, interface: EchoFloor.interface,
            method: method, arguments: arguments)
    }

    private static func writeItems(_ connection: Connection, _ name: String, _ bytes: [UInt8]) async throws {
        let item = DBusValue.dictionary(key: "s", value: "ay", [(.string(type), .bytes(bytes))])
        _ = try await server(connection, "WriteItems", [.string(name), .array(element: "a{say}", [item]), noOptions])
    }

    private static func readData(_ connection: Connection, _ name: String) async throws -> [UInt8] {
        let reply = try await server(connection, "ReadData", [.string(name), .uint32(0), .string(type), .uint64(0)])
        return reply.dropFirst().first?.bytesValue ?? []
    }

    // MARK: 1. Round trip

    /// A 100-byte `WriteItems` + `ReadData` against the floor's `Set` + `Get`.
    func roundTrip() async throws -> [Figure] {
        let client = try fixture.connect()
        defer { client.close() }
        let payload = [UInt8](repeating: 0x61, count: 100)
        try await Self.writeItems(client, "bench-round-trip", payload)
        guard try await Self.readData(client, "bench-round-trip") == payload else { throw BenchError("ReadData returned other bytes than written") }
        let serverPair = {
            try await Self.writeItems(client, "bench-round-trip", payload)
            _ = try await Self.readData(client, "bench-round-trip")
        }
        let cFloorPair = {
            _ = try await echo(client, "Set", [.bytes(payload)], c: true)
            _ = try await echo(client, "Get", c: true)
        }
        var server = Sample(), floor = Sample(), cFloor = Sample()
        for index in 0..<(repetitions.warmUp + repetitions.roundTrips) {
            let pasteboard = try await timed(serverPair)
            let floorTime = try await timed {
                _ = try await echo(client, "Set", [.bytes(payload)])
                _ = try await echo(client, "Get")
            }
            let cFloorTime = try await timed(cFloorPair)
            guard index >= repetitions.warmUp else { continue }
            server.add(pasteboard.micros)
            floor.add(floorTime.micros)
            cFloor.add(cFloorTime.micros)
        }
        // Where the time goes, measured after the timed rounds so as not to disturb them: the
        // CPU each process spends per pair, in a block of pairs to each service.
        let pairs = max(repetitions.roundTrips / 3, 100)
        let serverCPU = try await CPUShare.measure(rounds: pairs, service: fixture.serverPID, bus: fixture.daemonPID) {
            for _ in 0..<pairs { try await serverPair() }
        }
        let cFloorCPU = try await CPUShare.measure(rounds: pairs, service: fixture.cFloorPID, bus: fixture.daemonPID) {
            for _ in 0..<pairs { try await cFloorPair() }
        }
        return [
            Figure("100 B WriteItems + ReadData", unit: "µs", server, floor: floor, floorName: "Set+Get", goal: .ratioAtMost(1.25)),
            Figure("100 B WriteItems + ReadData", unit: "µs", server, floor: cFloor, floorName: "C Set+Get", goal: .ratioAtMost(1.15)),
        ] + serverCPU.figures(per: "pair", against: cFloorCPU, floorName: "C Set+Get", count: pairs)
    }

    // MARK: 2. Signal latency

    /// The pasteboard the signal figure writes, which the listener process watches.
    static let signalPasteboard = "bench-signal"

    /// A write until a second process receives `Changed`, against `Emit` until it receives
    /// `Pinged`. The listener prints the monotonic time it received each signal.
    func signalLatency() async throws -> [Figure] {
        let writer = try fixture.connect()
        let listener = try fixture.startListener()
        defer {
            writer.close()
            kill(listener.pid, SIGTERM)
            Spawn.wait(listener.pid)
        }
        let payload = [UInt8](repeating: 0x62, count: 100)
        var server = Sample(), floor = Sample(), cFloor = Sample()
        for index in 0..<(repetitions.warmUp + repetitions.signals) {
            let pasteboardStart = monotonicNanoseconds()
            try await Self.writeItems(writer, Self.signalPasteboard, payload)
            let pasteboard = try Self.received("C", after: pasteboardStart, from: listener.lines)
            let floorStart = monotonicNanoseconds()
            _ = try await echo(writer, "Emit")
            let floorTime = try Self.received("P", after: floorStart, from: listener.lines)
            let cFloorStart = monotonicNanoseconds()
            _ = try await echo(writer, "Emit", c: true)
            let cFloorTime = try Self.received("P", after: cFloorStart, from: listener.lines)
            guard index >= repetitions.warmUp else { continue }
            server.add(pasteboard)
            floor.add(floorTime)
            cFloor.add(cFloorTime)
        }
        return [
            Figure("write → Changed in another process", unit: "µs", server, floor: floor, floorName: "Emit→signal", goal: .ratioAtMost(1.25)),
            Figure("write → Changed in another process", unit: "µs", server, floor: cFloor, floorName: "C Emit→signal", goal: .ratioAtMost(1.15)),
        ]
    }

    /// Microseconds from `start` until the listener's next line, which must be of `kind`.
    private static func received(_ kind: String, after start: UInt64, from lines: LineReader) throws -> Double {
        guard let line = lines.next() else { throw BenchError("the listener process stopped") }
        let parts = line.split(separator: " ")
        guard parts.count == 2, parts[0] == kind, let time = UInt64(parts[1]) else {
            throw BenchError("the listener printed '\(line)' where a \(kind) signal was expected")
        }
        return Double(Int64(bitPattern: time &- start)) / 1_000
    }

    // MARK: 3. Sixteen clients

    /// 16 clients each making mixed calls (WriteItems, ReadData, Types, ChangeCount in turn)
    /// against 16 clients alternating the floor's Set and Get.
    func concurrentClients(_ count: Int = 16) async throws -> [Figure] {
        let clients = try (0..<count).map { _ in try fixture.connect() }
        defer { clients.forEach { $0.close() } }
        let payload = [UInt8](repeating: 0x63, count: 100)
        for (index, client) in clients.enumerated() {
            try await Self.writeItems(client, "bench-mixed-\(index)", payload)
        }
        let calls = repetitions.callsPerClient
        var serverRate = Sample(), floorRate = Sample(), cFloorRate = Sample(), serverLatency = Sample(), floorLatency = Sample()
        var serverErrors = 0, floorErrors = 0
        let mixedCall: @Sendable (Connection, Int, Int) async throws -> Void = { client, index, call in
            let name = "bench-mixed-\(index)"
            switch call % 4 {
            case 0: try await Self.writeItems(client, name, payload)
            case 1: _ = try await Self.readData(client, name)
            case 2: _ = try await Self.server(client, "Types", [.string(name)])
            default: _ = try await Self.server(client, "ChangeCount", [.string(name)])
            }
        }
        let cFloorCall: @Sendable (Connection, Int, Int) async throws -> Void = { [self] client, _, call in
            _ = try await call % 2 == 0 ? self.echo(client, "Set", [.bytes(payload)], c: true) : self.echo(client, "Get", c: true)
        }
        // One pair of runs first, not counted: the server's first run after a pause was
        // measured 10–15% slower than the runs after it, the floor's not.
        for run in 0...repetitions.concurrentRuns {
            let pasteboard = try await Self.together(clients, calls: calls, mixedCall)
            let floorRun = try await Self.together(clients, calls: calls) { [self] client, _, call in
                _ = try await call % 2 == 0 ? self.echo(client, "Set", [.bytes(payload)]) : self.echo(client, "Get")
            }
            let cFloorRun = try await Self.together(clients, calls: calls, cFloorCall)
            serverErrors += pasteboard.errors
            floorErrors += floorRun.errors + cFloorRun.errors
            guard run > 0 else { continue }
            serverRate.add(Double(count * calls) / pasteboard.seconds)
            floorRate.add(Double(count * calls) / floorRun.seconds)
            cFloorRate.add(Double(count * calls) / cFloorRun.seconds)
            pasteboard.latencies.forEach { serverLatency.add($0) }
            floorRun.latencies.forEach { floorLatency.add($0) }
        }
        if floorErrors > 0 { throw BenchError("the floor failed \(floorErrors) calls") }
        // Where the time goes, after the timed runs: on two busy cores the throughput follows
        // the CPU each call costs the three processes together.
        let serverCPU = try await CPUShare.measure(rounds: count * calls, service: fixture.serverPID, bus: fixture.daemonPID) {
            _ = try await Self.together(clients, calls: calls, mixedCall)
        }
        let cFloorCPU = try await CPUShare.measure(rounds: count * calls, service: fixture.cFloorPID, bus: fixture.daemonPID) {
            _ = try await Self.together(clients, calls: calls, cFloorCall)
        }
        return [
            Figure("\(count) clients mixed: throughput", unit: "calls/s", median: serverRate.median, p99: serverRate.percentile(0.01),
                   count: serverRate.count, floor: (floorRate.median, floorRate.percentile(0.01)), floorName: "Set/Get",
                   goal: .ratioAtLeast(0.8), errors: serverErrors),
            Figure("\(count) clients mixed: throughput", unit: "calls/s", median: serverRate.median, p99: serverRate.percentile(0.01),
                   count: serverRate.count, floor: (cFloorRate.median, cFloorRate.percentile(0.01)), floorName: "C Set/Get",
                   goal: .ratioAtLeast(0.9), errors: serverErrors),
            Figure("\(count) clients mixed: call latency", unit: "µs", serverLatency, floor: floorLatency, floorName: "Set/Get",
                   goal: .informational, errors: serverErrors),
        ] + serverCPU.figures(per: "call", against: cFloorCPU, floorName: "C Set/Get", count: count * calls)
    }

    private struct Concurrent: Sendable {
        var seconds: Double
        var latencies: [Double]
        var errors: Int
    }

    /// Every client making `calls` calls at once; the wall time, each call's latency, the failures.
    private static func together(
        _ clients: [Connection], calls: Int,
        _ body: @escaping @Sendable (Connection, Int, Int) async throws -> Void
    ) async throws -> Concurrent {
        let start = monotonicNanoseconds()
        var total = Concurrent(seconds: 0, latencies: [], errors: 0)
        await withTaskGroup(of: ([Double], Int).self) { group in
            for (index, client) in clients.enumerated() {
                group.addTask {
                    var latencies: [Double] = [], errors = 0
                    latencies.reserveCapacity(calls)
                    for call in 0..<calls {
                        let begin = monotonicNanoseconds()
                        do { try await body(client, index, call) } catch { errors += 1 }
                        latencies.append(Double(monotonicNanoseconds() - begin) / 1_000)
                    }
                    return (latencies, errors)
                }
            }
            for await (latencies, errors) in group {
                total.latencies += latencies
                total.errors += errors
            }
        }
        total.seconds = Double(monotonicNanoseconds() - start) / 1_000_000_000
        return total
    }

    // MARK: 6. Whole processes

    /// `pbctl copy` + `pbctl paste` of 100 bytes against two starts of `/bin/true`.
    func pbctlProcesses() async throws -> Figure {
        let pbctl = fixture.products + "/pbctl"
        guard FileManager.default.isExecutableFile(atPath: pbctl) else { throw BenchError("\(pbctl) is missing: run `swift build -c release`") }
        let input = fixture.directory + "/hundred-bytes"
        try Data(repeating: 0x64, count: 100).write(to: URL(fileURLWithPath: input))
        let truePath = FileManager.default.isExecutableFile(atPath: "/bin/true") ? "/bin/true" : try BusFixture.executable(named: "true")
        var server = Sample(), floor = Sample()
        for index in 0..<(repetitions.processStarts + 2) {
            let pair = try await timed {
                let copy = try Spawn.run(pbctl, ["--address", fixture.address, "copy"], input: input)
                let paste = try Spawn.run(pbctl, ["--address", fixture.address, "paste"])
                guard copy == 0, paste == 0 else { throw BenchError("pbctl copy/paste exited \(copy)/\(paste)") }
            }
            let trues = try await timed {
                _ = try Spawn.run(truePath, [])
                _ = try Spawn.run(truePath, [])
            }
            guard index >= 2 else { continue }
            server.add(pair.micros / 1_000)
            floor.add(trues.micros / 1_000)
        }
        return Figure("pbctl copy + paste, 100 B", unit: "ms", server, floor: floor, floorName: "2× /bin/true", goal: .ratioAtMost(3))
    }

    // MARK: 7 and 8. Many small pasteboards: memory and cold start

    /// Writes `count` distinct pasteboards of 100 bytes each through `connections` concurrent
    /// clients, then reads the server's resident memory holding them.
    func smallPasteboards(_ count: Int = 10_000, connections: Int = 4) async throws -> Figure {
        let clients = try (0..<connections).map { _ in try fixture.connect() }
        defer { clients.forEach { $0.close() } }
        let payload = [UInt8](repeating: 0x65, count: 100)
        let written = try await Self.together(clients, calls: count / connections) { client, index, call in
            try await Self.writeItems(client, "bench-small-\(index)-\(call)", payload)
        }
        guard written.errors == 0 else { throw BenchError("\(written.errors) of \(count) small writes failed") }
        let resident = Double(try fixture.serverResidentBytes()) / Double(Self.mebibyte)
        return Figure("server RSS, \(count) × 100 B pasteboards", unit: "MiB", median: resident, p99: resident, count: 1,
                      floor: nil, floorName: nil, goal: .below(64))
    }

    /// SIGTERM and a new start of the server on the state left by ``smallPasteboards(_:connections:)``,
    /// timed from the spawn to the bus name owned; checks afterwards that a pasteboard survived.
    func coldStart(stored: Int = 10_000) async throws -> Figure {
        var starts = Sample()
        for _ in 0..<repetitions.coldStarts {
            starts.add(try await fixture.restartServer())
        }
        let client = try fixture.connect()
        defer { client.close() }
        guard try await Self.readData(client, "bench-small-0-0").count == 100 else {
            throw BenchError("a small pasteboard did not survive the restarts")
        }
        return Figure("cold start to name owned, \(stored) stored", unit: "ms", starts, floor: nil, floorName: nil, goal: .below(100))
    }
}
