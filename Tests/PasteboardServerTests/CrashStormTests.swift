import DBus
import Foundation
import Synchronization
import Testing
import TestSupport

extension StressTests {
    /// Crashes and stops in the middle of work: every acknowledged write survives `kill -9`, counts
    /// never go back, and a SIGTERM during a transfer exits cleanly leaving nothing behind.
    struct CrashStormTests {
        static let seed: UInt64 = 0xC4A5_5708_0001
        static let writers = 6
        static let shared = ["general", "storm-shared"]

        /// What a pasteboard holds after a write: items of (type, bytes).
        typealias Contents = [[Harness.Snapshot.Representation]]

        /// The writes of a storm: every one attempted, and those the server acknowledged.
        final class Ledger: Sendable {
            struct Write {
                var id: Int
                var name: String
                var contents: Contents
                /// The count the server replied with; nil when no reply came.
                var count: UInt64?
            }

            private let state = Mutex<(writes: [Write], acknowledged: Int, problems: [String])>(([], 0, []))

            /// Records an attempt before it is sent; returns its id.
            func attempt(_ name: String, _ contents: Contents) -> Int {
                state.withLock {
                    $0.writes.append(Write(id: $0.writes.count, name: name, contents: contents))
                    return $0.writes.count - 1
                }
            }

            func acknowledge(_ id: Int, count: UInt64) {
                state.withLock {
                    $0.writes[id].count = count
                    $0.acknowledged += 1
                }
            }

            func problem(_ text: String) {
                state.withLock { $0.problems.append(text) }
            }

            var acknowledged: Int { state.withLock { $0.acknowledged } }
            var writes: [Write] { state.withLock { $0.writes } }
            var problems: [String] { state.withLock { $0.problems } }
        }

        @Test func acknowledgedWritesSurviveKillNineMidStorm() async throws {
            let h = try await Harness()
            var random = SeededRandom(seed: Self.seed)
            var history: [String: UInt64] = [:]
            for round in 1...2 {
                // Kill once the storm has been acknowledged a random number of writes, a random
                // few milliseconds later: mid-commit, mid-reply or between calls.
                let killAt = Int.random(in: 20...120, using: &random)
                let jitter = Duration.microseconds(Int.random(in: 0...3000, using: &random))
                let label = "seed 0x\(String(Self.seed, radix: 16)) round \(round), kill after \(killAt) acknowledgements + \(jitter)"
                let ledger = Ledger()
                let killed = Flag()
                try await withThrowingTaskGroup(of: Void.self) { group in
                    for writer in 0..<Self.writers {
                        let connection = try h.connect()
                        let writerSeed = random.next()
                        group.addTask { await Self.storm(writer, round: round, seed: writerSeed, h, connection, ledger, killed) }
                    }
                    while ledger.acknowledged < killAt {
                        try await Task.sleep(for: .milliseconds(1))
                    }
                    try await Task.sleep(for: jitter)
                    killed.set()
                    h.server.kill9()
                    try await group.waitForAll()
                }
                for problem in ledger.problems { Issue.record("\(label): \(problem)") }

                try await h.server.restart()
                // Files first, before anything is read: on a shared store, reading data the
                // restart took in from PostgreSQL (a write lost here, kept there) fetches it into
                // a blob file that no row names until the contents change, by design.
                try await expectNoStrayBlobs(h, label)
                try await expectAcknowledgedWritesKept(h, ledger, counts: &history, label)
                #expect(!h.server.log.contains("integrity check") && !h.server.log.contains("lost its") && !h.server.log.contains("could not be opened"), "\(label): \(h.server.log)")
            }
            // The store still takes writes, from the counts it kept.
            for (name, count) in history {
                #expect(try await h.write(text: "after the storms", to: name) == count + 1, "\(name)")
            }
        }

        /// One writer of the storm: replaces contents (small, or large enough for a blob file, by
        /// WriteItems or WriteItemsFd) and clears, on its own pasteboard and shared ones, until the
        /// server dies.
        static func storm(_ writer: Int, round: Int, seed: UInt64, _ h: Harness, _ connection: Connection, _ ledger: Ledger, _ killed: Flag) async {
            var random = SeededRandom(seed: seed)
            var sequence = 0
            while !killed.isSet {
                sequence += 1
                let name = Int.random(in: 0..<3, using: &random) == 0 ? "storm-\(writer)" : shared.randomElement(using: &random)!
                let marker = Array("round \(round) writer \(writer) write \(sequence)".utf8)
                let roll = Int.random(in: 0..<100, using: &random)
                let contents: Contents
                switch roll {
                case 0..<10: contents = []
                case 10..<25:
                    let large = (0..<Int.random(in: 70_000...160_000, using: &random)).map { UInt8(truncatingIfNeeded: $0 &* (writer + 3) &+ sequence) }
                    contents = [[.init(type: "application/x-storm", data: large), .init(type: "text/plain;charset=utf-8", data: marker)]]
                default:
                    contents = [[.init(type: "text/plain;charset=utf-8", data: marker)]]
                }
                let id = ledger.attempt(name, contents)
                do {
                    let count: UInt64
                    if contents.isEmpty {
                        count = try #require(try await h.call("ClearContents", [.string(name)], on: connection).first?.uint64Value)
                    } else if roll % 4 == 0 {
                        let items = try contents.map { item in try item.map { ($0.type, try Descriptors.file($0.data)) } }
                        count = try await h.writeFd(items, to: name, on: connection)
                    } else {
                        count = try await h.write(contents.map { $0.map { ($0.type, $0.data) } }, to: name, on: connection)
                    }
                    ledger.acknowledge(id, count: count)
                } catch {
                    if !killed.isSet { ledger.problem("writer \(writer) write \(sequence) to \(name) failed before the kill: \(error)") }
                    return
                }
            }
        }

        /// For each name: a count no lower than any acknowledged, and the contents of the highest
        /// acknowledged write, or of a later one whose reply the crash swallowed.
        func expectAcknowledgedWritesKept(_ h: Harness, _ ledger: Ledger, counts: inout [String: UInt64], _ label: String) async throws {
            let writes = ledger.writes
            let listed = try await h.listPasteboards()
            for name in Set(writes.map(\.name)).sorted() {
                let attempts = writes.filter { $0.name == name }
                let acknowledged = attempts.filter { $0.count != nil }
                let unacknowledged = attempts.filter { $0.count == nil }
                let highest = acknowledged.max { $0.count! < $1.count! }
                let before = counts[name] ?? 0
                let snapshot = try await h.snapshot(name)
                let found = "\(label): \(name) holds count \(snapshot.count) \(snapshot); highest acknowledged \(highest.map { "#\($0.count!) (write \($0.id))" } ?? "none"), \(unacknowledged.count) unacknowledged"

                #expect(snapshot.count >= (highest?.count ?? before), "\(found)")
                #expect(snapshot.count >= before, "\(found): it was at \(before) before the storm")
                #expect(snapshot.count <= max(before, highest?.count ?? 0) + UInt64(unacknowledged.count), "\(found): more changes than writes")
                if let highest, snapshot.count == highest.count {
                    #expect(snapshot.items == highest.contents, "\(found)")
                } else if snapshot.count > (highest?.count ?? before) {
                    #expect(unacknowledged.contains { $0.contents == snapshot.items }, "\(found): the contents are no write's that was in flight")
                }
                if !acknowledged.isEmpty {
                    #expect(listed.contains(name), "\(found): not listed")
                }
                // Counts of acknowledged writes are each one change.
                let acknowledgedCounts = acknowledged.map { $0.count! }
                #expect(Set(acknowledgedCounts).count == acknowledgedCounts.count, "\(label): \(name) acknowledged one count twice: \(acknowledgedCounts.sorted())")
                counts[name] = snapshot.count
            }
        }

        // MARK: SIGTERM mid-transfer

        @Test func sigtermDuringALargeTransferExitsCleanlyAndLeavesNothingBehind() async throws {
            let h = try await Harness()
            let large = (0..<300_000).map { UInt8(truncatingIfNeeded: $0 &* 13 &+ 5) }
            try await h.write([[("text/plain;charset=utf-8", "before".bytes), ("application/x-large", large)]])
            try await h.writeFd([[("image/png", try Descriptors.file(large))]], to: "find")
            let before = [try await h.snapshot(), try await h.snapshot("find")]
            let blobsBefore = Self.blobFiles(h.server.storeDirectory)
            #expect(blobsBefore.count == 2, "\(blobsBefore)")

            let (transfer, feeder) = try Self.startEndlessTransfer(h)
            #expect(await eventually(timeout: .seconds(10)) { feeder.written > 1 << 20 }, "the server does not read the stream")
            // The server is writing the stream to a blob file by now, one without a name until
            // the transfer completes: none shows in the folder.
            #expect(Self.blobFiles(h.server.storeDirectory) == blobsBefore)

            #expect(await h.server.terminate() == 0, "\(h.server.log)")
            let result = await transfer.result
            #expect(throws: (any Error).self, "the interrupted write succeeded") { try result.get() }
            #expect(await feeder.wait(timeout: .seconds(30)), "the writer still writes")
            // The interrupted transfer wrote to an unnamed file: nothing of it is left.
            #expect(Self.blobFiles(h.server.storeDirectory) == blobsBefore, "a clean stop leaves the interrupted transfer's file behind")

            try await h.server.restart()
            #expect(try await h.snapshot() == before[0])
            #expect(try await h.snapshot("find") == before[1])
            #expect(try await h.listPasteboards().sorted() == ["find", "general"])
            #expect(Self.blobFiles(h.server.storeDirectory) == blobsBefore)
            try await expectNoStrayBlobs(h, "after the restart")
        }

        /// A `WriteItemsFd` from a writer that sends 64 KiB every 10 ms and never ends. Only the
        /// call holds the pipe's read end, so the writer stops once the call is over (EPIPE).
        static func startEndlessTransfer(_ h: Harness) throws -> (Task<UInt64, any Error>, PipeFeeder) {
            let (reader, feeder) = try PipeFeeder.start(count: nil, idleTimeout: .seconds(20)) { index in
                usleep(10_000)
                return [UInt8](repeating: UInt8(truncatingIfNeeded: index), count: 65536)
            }
            let transfer = Task {
                try await h.writeFd([[("application/x-endless", reader)]], timeout: .seconds(30))
            }
            return (transfer, feeder)
        }

        // MARK: Blob files

        /// The files in the server's blob folder.
        static func blobFiles(_ stateDirectory: String) -> Set<String> {
            Set((try? FileManager.default.contentsOfDirectory(atPath: stateDirectory + "/blobs")) ?? [])
        }

        /// Every file in the blob folder is one the store refers to, and every file it refers to
        /// is there (read from the database, with Python's sqlite3, while the server runs).
        func expectNoStrayBlobs(_ h: Harness, _ label: String, sourceLocation: SourceLocation = #_sourceLocation) async throws {
            let state = h.server.storeDirectory
            let database = try #require(
                try FileManager.default.contentsOfDirectory(atPath: state).first { $0.hasSuffix(".sqlite") }, "no database in the state directory",
                sourceLocation: sourceLocation)
            // Every column named `blob` of every table: the current contents and the history.
            let script = """
                import json, sqlite3, sys
                db = sqlite3.connect('file:' + sys.argv[1] + '?mode=ro', uri=True)
                names = set()
                for (table,) in db.execute("SELECT name FROM sqlite_master WHERE type = 'table'"):
                    columns = [row[1] for row in db.execute('PRAGMA table_info("%s")' % table)]
                    if 'blob' in columns:
                        names.update(row[0] for row in db.execute('SELECT blob FROM "%s" WHERE blob IS NOT NULL' % table))
                print(json.dumps(sorted(names)))
                """
            // Asked until the two agree, for up to 10 s: a server on a shared store takes in, after
            // its start, changes it had not recorded before the kill, and the database names a
            // blob file up to the commit log's 100 ms after the file is written. A file left by
            // an interrupted write stays, and fails the test.
            let deadline = ContinuousClock.now + .seconds(10)
            while true {
                let result = try await runProgram(try Paths.executable(named: "python3"), ["-c", script, state + "/" + database], timeout: .seconds(20))
                try #require(result.status == 0, "\(result)", sourceLocation: sourceLocation)
                let referenced = try #require(try JSONSerialization.jsonObject(with: result.stdout) as? [String], sourceLocation: sourceLocation)
                let files = Self.blobFiles(state)
                if files == Set(referenced) { return }
                guard ContinuousClock.now < deadline else {
                    Issue.record("\(label): blob files \(files.sorted()), referenced \(referenced)\n\(h.server.log)", sourceLocation: sourceLocation)
                    return
                }
                try await Task.sleep(for: .milliseconds(200))
            }
        }
    }
}
