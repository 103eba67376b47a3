import DBus
import Foundation
import ProcessSpawning

#if canImport(Glibc)
import Glibc
#endif

/// The desktop bridge against the X11 clipboard alone: a private Xvfb, a second private bus
/// and a `pasteboardd --desktop x11` on it, with `xclip` as the desktop app. The floor is the
/// same copy and paste through `xclip` alone (`xclip -i` then `xclip -o`), in the same run.
struct DesktopFigures {
    let products: String
    let directory: String
    let busConfig: String
    let repetitions: Int
    /// The main fixture's bus, whose server (not bridged) `pbctl` is timed against the X11
    /// clipboard tools.
    let mainAddress: String

    /// Both figures, or none when Xvfb or xclip is not installed (said on stderr).
    func measure() async throws -> [Figure] {
        guard let xvfb = try? BusFixture.executable(named: "Xvfb"), let xclip = try? BusFixture.executable(named: "xclip") else {
            FileHandle.standardError.write(Data("desktop figures skipped: Xvfb and xclip are needed (scripts/install-deps installs them)\n".utf8))
            return []
        }
        let world = try await World.start(xvfb: xvfb, products: products, directory: directory + "/desktop", busConfig: busConfig)
        defer { world.stop() }
        let client = try Connection.connect(address: world.address)
        defer { client.close() }
        let changes = try await client.signals(matching: MatchRule(interface: BusFixture.serverName, member: "Changed", arg0: "general"))
        var iterator = changes.makeAsyncIterator()
        let environment = ["DISPLAY": world.display]
        let input = world.directory + "/copied", output = world.directory + "/pasted"

        var copyToChanged = Sample(), pbctlToXclip = Sample(), floor = Sample()
        for round in 0..<(repetitions + 2) {
            let text = "round \(round) " + String(repeating: "x", count: 90)
            // The floor: a copy and a paste through the X server alone. (pasteboardd takes
            // that copy in too: its Changed is awaited, untimed.)
            try Data((text + "a").utf8).write(to: URL(fileURLWithPath: input))
            let alone = try await timed {
                try run(xclip, ["-selection", "clipboard", "-i", input], environment: environment)
                try await paste(xclip, expecting: text + "a", output: output, environment: environment)
            }
            _ = await iterator.next()
            // An app's copy, until pasteboardd announces it.
            try Data((text + "b").utf8).write(to: URL(fileURLWithPath: input))
            let announced = try await timed {
                try run(xclip, ["-selection", "clipboard", "-i", input], environment: environment)
                _ = await iterator.next()
            }
            // pbctl copy, until an app's paste gets it; then its own Changed.
            try Data((text + "c").utf8).write(to: URL(fileURLWithPath: input))
            let pasted = try await timed {
                try run(products + "/pbctl", ["--address", world.address, "copy", input], environment: [:])
                try await paste(xclip, expecting: text + "c", output: output, environment: environment)
            }
            _ = await iterator.next()
            guard round >= 2 else { continue }
            floor.add(alone.micros / 1_000)
            copyToChanged.add(announced.micros / 1_000)
            pbctlToXclip.add(pasted.micros / 1_000)
        }
        var figures = [
            Figure("X11 copy (xclip -i) → Changed", unit: "ms", copyToChanged, floor: floor, floorName: "xclip -i + xclip -o", goal: .ratioAtMost(1.5)),
            Figure("pbctl copy → xclip -o output", unit: "ms", pbctlToXclip, floor: floor, floorName: "xclip -i + xclip -o", goal: .ratioAtMost(1.5)),
        ]
        figures += try await commandLines(against: world, xclip: xclip, input: input, output: output)
        return figures
    }

    /// `pbctl copy` + `pbctl paste` of 100 bytes (on the main fixture's server) against the same
    /// through the X11 clipboard tools, `xsel` (when installed) and `xclip`, round by round.
    private func commandLines(against world: World, xclip: String, input: String, output: String) async throws -> [Figure] {
        let xsel = try? BusFixture.executable(named: "xsel")
        let environment = ["DISPLAY": world.display]
        var pbctl = Sample(), xselPair = Sample(), xclipPair = Sample()
        for round in 0..<(repetitions + 2) {
            let text = "line \(round) " + String(repeating: "y", count: 90)
            try Data(text.utf8).write(to: URL(fileURLWithPath: input))
            let ours = try await timed {
                try run(products + "/pbctl", ["--address", mainAddress, "copy", input], environment: [:])
                try run(products + "/pbctl", ["--address", mainAddress, "paste"], environment: [:])
            }
            let theirs = try await timed {
                try run(xclip, ["-selection", "clipboard", "-i", input], environment: environment)
                try await paste(xclip, expecting: text, output: output, environment: environment)
            }
            var selected: (value: Void, micros: Double)?
            if let xsel {
                selected = try await timed {
                    try run(xsel, ["--clipboard", "--input"], environment: environment, input: input)
                    try run(xsel, ["--clipboard", "--output"], environment: environment)
                }
            }
            guard round >= 2 else { continue }
            pbctl.add(ours.micros / 1_000)
            xclipPair.add(theirs.micros / 1_000)
            if let selected { xselPair.add(selected.micros / 1_000) }
        }
        var figures = [Figure("pbctl copy + paste, 100 B", unit: "ms", pbctl, floor: xclipPair, floorName: "xclip -i + xclip -o", goal: .ratioAtMost(1))]
        if xsel != nil {
            figures.append(Figure("pbctl copy + paste, 100 B", unit: "ms", pbctl, floor: xselPair, floorName: "xsel -i + xsel -o", goal: .ratioAtMost(1)))
        }
        return figures
    }

    private func run(_ executable: String, _ arguments: [String], environment: [String: String], input: String = "/dev/null") throws {
        let pid: pid_t
        do {
            pid = try spawn(
                executable, arguments, standardInput: .open(input, flags: O_RDONLY, mode: 0),
                standardOutput: .open("/dev/null", flags: O_WRONLY, mode: 0), standardError: .open("/dev/null", flags: O_WRONLY, mode: 0),
                environment: environment)
        } catch {
            throw BenchError("\(error)")
        }
        let status = Spawn.wait(pid)
        guard status == 0 else { throw BenchError("\(executable) \(arguments.joined(separator: " ")) exited \(status)") }
    }

    /// Runs `xclip -o` until it prints `expected` (the new owner may not have it yet).
    private func paste(_ xclip: String, expecting expected: String, output: String, environment: [String: String]) async throws {
        let deadline = monotonicNanoseconds() + 10_000_000_000
        while true {
            let pid = try spawn(
                xclip, ["-selection", "clipboard", "-o"], standardInput: .open("/dev/null", flags: O_RDONLY, mode: 0),
                standardOutput: .open(output, flags: O_WRONLY | O_CREAT | O_TRUNC, mode: 0o600), standardError: .open("/dev/null", flags: O_WRONLY, mode: 0),
                environment: environment)
            Spawn.wait(pid)
            if let data = FileManager.default.contents(atPath: output), String(decoding: data, as: UTF8.self) == expected { return }
            guard monotonicNanoseconds() < deadline else { throw BenchError("xclip -o never printed the copied text") }
        }
    }

    /// Xvfb, a bus and a bridged server, stopped together.
    private struct World {
        let directory: String
        let display: String
        let address: String
        let pids: [pid_t]

        static func start(xvfb: String, products: String, directory: String, busConfig: String) async throws -> World {
            try? FileManager.default.removeItem(atPath: directory)
            try FileManager.default.createDirectory(atPath: directory + "/state", withIntermediateDirectories: true)
            var fds: [Int32] = [0, 0]
            guard pipe(&fds) == 0 else { throw BenchError("pipe: \(String(cString: strerror(errno)))") }
            let xvfbPID = try spawn(
                xvfb, ["-displayfd", "1", "-nolisten", "tcp", "-noreset"], standardInput: .open("/dev/null", flags: O_RDONLY, mode: 0),
                standardOutput: .duplicate(fds[1]), standardError: .open(directory + "/xvfb.log", flags: O_WRONLY | O_CREAT, mode: 0o644))
            close(fds[1])
            let number = LineReader(fd: fds[0]).next() ?? ""
            guard !number.isEmpty else {
                kill(xvfbPID, SIGKILL)
                throw BenchError("Xvfb did not start (log: \(directory)/xvfb.log)")
            }
            let served: ServedBus
            do {
                served = try await ServedBus.start(
                    products: products, busConfig: busConfig, directory: directory, arguments: ["--desktop", "x11"],
                    environment: ["DISPLAY": ":" + number])
            } catch {
                kill(xvfbPID, SIGKILL)
                Spawn.wait(xvfbPID)
                throw error
            }
            let world = World(directory: directory, display: ":" + number, address: served.address, pids: served.pids + [xvfbPID])
            do {
                try await world.waitUntilBridged()
            } catch {
                world.stop()
                throw error
            }
            return world
        }

        /// The server joins the display after it owns its name: the figures start once its
        /// `Desktop` property says it has.
        private func waitUntilBridged() async throws {
            let connection = try Connection.connect(address: address)
            defer { connection.close() }
            let deadline = ContinuousClock.now + .seconds(20)
            while ContinuousClock.now < deadline {
                let reply = try await connection.call(
                    destination: BusFixture.serverName, path: "/org/pasteboardd/Pasteboard1", interface: "org.freedesktop.DBus.Properties",
                    method: "Get", arguments: [.string(BusFixture.serverName), .string("Desktop")])
                if reply.first?.variantValue?.dictionaryEntries?.isEmpty == false { return }
                try await Task.sleep(for: .milliseconds(20))
            }
            throw BenchError("the server did not join the X display \(display) within 20 s (log: \(directory)/pasteboardd.log)")
        }

        func stop() {
            for pid in pids {
                kill(pid, SIGKILL)
                Spawn.wait(pid)
            }
        }
    }
}
