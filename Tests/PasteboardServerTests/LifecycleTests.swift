import DBus
import Foundation
import Synchronization
import Testing
import TestSupport

/// Durability across crashes and restarts, clean shutdown, and one server per bus and per
/// state directory.
struct LifecycleTests {
    /// Writes inline and file-backed data (by `WriteItems` and by `WriteItemsFd`) to several
    /// names, and returns what they hold.
    func fill(_ h: Harness) async throws -> [String: Harness.Snapshot] {
        let large = (0..<300_000).map { UInt8(truncatingIfNeeded: $0 &* 131) }
        let fromFile = (0..<150_000).map { UInt8(truncatingIfNeeded: $0 &* 17 &+ 3) }
        try await h.write(text: "first")
        try await h.write([[("text/html", "<b>hi</b>".bytes), ("text/plain;charset=utf-8", "hi".bytes)], [("application/x-large", large)]])
        try await h.writeFd([[("image/png", try Descriptors.file(fromFile)), ("text/plain", try Descriptors.pipe(holding: "piped".bytes))]], to: "find")
        try await h.write(text: "gone", to: "removed")
        try await h.remove("removed")
        try await h.clear("cleared")
        try await h.write([[("text/plain", [1])]], to: "appended")
        try await h.write([[("text/plain", [2])]], to: "appended", options: [("append", .boolean(true))])
        var snapshots: [String: Harness.Snapshot] = [:]
        for name in ["general", "find", "removed", "cleared", "appended", "never"] {
            snapshots[name] = try await h.snapshot(name)
        }
        #expect(snapshots["general"]?.count == 2)
        #expect(snapshots["removed"]?.count == 2)
        #expect(snapshots["find"]?.items.first?.first?.data == fromFile)
        return snapshots
    }

    func expectIntact(_ h: Harness, _ snapshots: [String: Harness.Snapshot], sourceLocation: SourceLocation = #_sourceLocation) async throws {
        for (name, snapshot) in snapshots {
            #expect(try await h.snapshot(name) == snapshot, "\(name)", sourceLocation: sourceLocation)
        }
        #expect(try await h.listPasteboards().sorted() == ["appended", "cleared", "find", "general"], sourceLocation: sourceLocation)
    }

    @Test func contentsSurviveKillNine() async throws {
        let h = try await Harness()
        let snapshots = try await fill(h)
        h.server.kill9()
        try await h.server.restart()
        try await expectIntact(h, snapshots)
        // And the next change continues from the stored counts.
        #expect(try await h.write(text: "next") == 3)
        #expect(try await h.write(text: "back", to: "removed") == 3)
    }

    @Test func contentsSurviveRepeatedCrashesMidStream() async throws {
        let h = try await Harness()
        var expected: [UInt8] = []
        for round in 1...3 {
            // Every write that returned is kept, whatever came after it.
            expected = Array("round \(round)".utf8)
            #expect(try await h.write([[("text/plain", expected)]]) == UInt64(round))
            h.server.kill9()
            try await h.server.restart()
            #expect(try await h.readData("text/plain") == (UInt64(round), expected))
        }
    }

    @Test func sigtermStopsCleanlyAndKeepsEverything() async throws {
        let h = try await Harness()
        let snapshots = try await fill(h)
        #expect(await h.server.terminate() == 0)
        #expect(try await h.client.nameOwner(Harness.busName) == nil)
        try await h.server.restart()
        try await expectIntact(h, snapshots)
        #expect(await h.server.terminate() == 0)
        #expect(!h.server.log.contains("error"), "\(h.server.log)")
    }

    /// A stop answers every change it makes: writers calling without a pause while SIGTERM
    /// comes find, after a restart, each of their names holding the last write that was
    /// answered, never one whose caller heard only that the server left without a reply.
    /// A stop used to go on taking calls (and ending transfers) while it waited for the
    /// queue, and some were made after their answers could no longer leave.
    @Test(.timeLimit(.minutes(3)))
    func aStopMakesNoChangeItDoesNotAnswer() async throws {
        let h = try await Harness()
        for round in 0..<4 {
            // Half write inline, half through a pipe (a transfer that may end during the stop).
            let writing = Writers()
            let answered = try await withThrowingTaskGroup(of: (String, UInt64, [UInt8])?.self) { group in
                for writer in 0..<6 {
                    let connection = try h.connect()
                    group.addTask {
                        defer { connection.close() }
                        let name = "stop-\(writer)"
                        var last: (UInt64, [UInt8])? = nil
                        for index in 0... {
                            let bytes = Array("round \(round) write \(index)".utf8)
                            do {
                                let count = writer % 2 == 0
                                    ? try await h.write([[("text/plain", bytes)]], to: name, on: connection)
                                    : try await h.writeFd([[("text/plain", try Descriptors.pipe(holding: bytes))]], to: name, on: connection)
                                if last == nil { writing.started.withLock { $0 += 1 } }
                                last = (count, bytes)
                            } catch {
                                break
                            }
                        }
                        return last.map { (name, $0.0, $0.1) }
                    }
                }
                // Every writer under way, however loaded the machine, then a while longer.
                #expect(await eventually { writing.started.withLock { $0 } == 6 })
                try await Task.sleep(for: .milliseconds(50 + 50 * round))
                #expect(await h.server.terminate() == 0)
                var answered: [(String, UInt64, [UInt8])] = []
                for try await last in group { if let last { answered.append(last) } }
                return answered
            }
            #expect(answered.count == 6, "every writer had a write answered before the stop")
            try await h.server.restart()
            for (name, count, bytes) in answered {
                let stored = try await h.readData("text/plain", in: name)
                #expect(stored.count == count && stored.data == bytes,
                        "round \(round), \(name): \(stored.count) \(String(decoding: stored.data, as: UTF8.self)) stored, \(count) \(String(decoding: bytes, as: UTF8.self)) last answered")
            }
        }
    }

    /// How many writers of ``aStopMakesNoChangeItDoesNotAnswer()`` have had a write answered.
    final class Writers: Sendable {
        let started = Mutex(0)
    }

    @Test func sigtermAsSoonAsReadyStopsCleanly() async throws {
        // Ready means owning the name: from then on SIGTERM is a clean stop.
        let bus = try await TestBus()
        for _ in 0..<3 {
            let server = try await TestServer(bus: bus)
            #expect(await server.terminate() == 0)
        }
    }

    /// With a state directory of its own, or with the first one's (as two servers started
    /// with the default have): the name is what it reports.
    @Test func aSecondServerOnTheSameBusExitsSayingTheNameIsTaken() async throws {
        let h = try await Harness()
        try await h.write(text: "first server")
        let state = try Paths.temporaryDirectory()
        defer { try? FileManager.default.removeItem(atPath: state) }
        for directory in [state, h.server.stateDirectory] {
            let result = try await runProgram(try Paths.product("pasteboardd"), ["--address", h.bus.address, "--state-dir", directory], timeout: .seconds(10))
            #expect(result.status != 0)
            #expect(result.err.contains("already taken"), "\(result)")
            #expect(result.err.contains(Harness.busName), "\(result)")
        }
        // The first one still owns the name and serves.
        #expect(try await h.client.nameOwner(Harness.busName) == h.server.uniqueName)
        #expect(try await h.readData("text/plain;charset=utf-8") == (1, "first server".bytes))
    }

    @Test func aSecondServerOnTheSameStateDirectoryExits() async throws {
        let h = try await Harness()
        try await h.write(text: "first server")
        let otherBus = try await TestBus()
        let result = try await runProgram(try Paths.product("pasteboardd"), ["--address", otherBus.address, "--state-dir", h.server.stateDirectory], timeout: .seconds(10))
        #expect(result.status != 0)
        #expect(result.err.contains(h.server.stateDirectory), "\(result)")
        // It did not take the name on its bus, and left the first one's data alone.
        let probe = try Connection.connect(address: otherBus.address)
        #expect(try await probe.nameOwner(Harness.busName) == nil)
        #expect(try await h.readData("text/plain;charset=utf-8") == (1, "first server".bytes))
        h.server.kill9()
        try await h.server.restart()
        #expect(try await h.readData("text/plain;charset=utf-8") == (1, "first server".bytes))
    }

    /// The lock is the directory's own too (one no other user may open, as the default is):
    /// deleting its `lock` file, which a lock on the file alone did not survive, lets no second
    /// server in to hand out the same counts.
    @Test func aSecondServerOnTheSameStateDirectoryExitsWhenTheLockFileIsGone() async throws {
        let bus = try await TestBus()
        let state = try Paths.temporaryDirectory()
        defer { try? FileManager.default.removeItem(atPath: state) }
        chmod(state, 0o700)
        let server = try await TestServer(bus: bus, stateDirectory: state)
        try FileManager.default.removeItem(atPath: state + "/lock")
        let otherBus = try await TestBus()
        let result = try await runProgram(try Paths.product("pasteboardd"), ["--address", otherBus.address, "--state-dir", state], timeout: .seconds(10))
        #expect(result.status == 69, "\(result)")
        #expect(result.err.contains("another pasteboardd is using it"), "\(result)")
        let probe = try Connection.connect(address: otherBus.address)
        #expect(try await probe.nameOwner(Harness.busName) == nil)
        #expect(await server.terminate() == 0)
    }

    /// A state directory others may write to is refused, saying why, and left as it is; one
    /// they may only read is taken (what they can list are the store's own names).
    @Test func aStateDirectoryOthersMayWriteToIsRefused() async throws {
        let bus = try await TestBus()
        let state = try Paths.temporaryDirectory()
        defer { try? FileManager.default.removeItem(atPath: state) }
        for mode: mode_t in [0o777, 0o1777, 0o770] {
            chmod(state, mode)
            let result = try await runProgram(try Paths.product("pasteboardd"), ["--address", bus.address, "--state-dir", state], timeout: .seconds(10))
            #expect(result.status == 69, "\(result)")
            #expect(result.err.contains("other users may write to it (mode \(String(mode, radix: 8)))"), "\(result)")
            var info = stat()
            #expect(stat(state, &info) == 0 && info.st_mode & 0o7777 == mode)
        }
        chmod(state, 0o755)
        let server = try await TestServer(bus: bus, stateDirectory: state)
        #expect(await server.terminate() == 0)
    }

    /// A display that takes the connection and never answers does not hold the server's start,
    /// and so not the stop SIGTERM asks for (which waited for the start to end: ignored, it was
    /// killed after `terminate()`'s 10 s).
    @Test func aHungCompositorDoesNotHoldTheStop() async throws {
        let compositor = try HungCompositor()
        let bus = try await TestBus()
        let server = try await TestServer(bus: bus, desktop: DesktopDisplay(mode: "wayland", environment: compositor.environment))
        #expect(await server.terminate() == 0)
    }

    @Test func noBusMeansANonZeroExitNamingTheAddress() async throws {
        let state = try Paths.temporaryDirectory()
        defer { try? FileManager.default.removeItem(atPath: state) }
        let address = "unix:path=" + state + "/no-such-socket"
        let result = try await runProgram(try Paths.product("pasteboardd"), ["--address", address, "--state-dir", state], timeout: .seconds(10))
        #expect(result.status != 0)
        #expect(result.err.contains("no-such-socket"), "\(result)")
    }
}
