import DBus
import Foundation
import Synchronization
import Testing
import TestSupport

/// The stress tests (fuzzing, load, crash storms), one at a time: each keeps the cores of a
/// small machine busy, and together they would starve the suite's timing-sensitive tests.
@Suite(.serialized) struct StressTests {}

extension StressTests {
    /// Many clients at once: every change gets its own count, each client sees counts only go up,
    /// and `Changed` reports every change once, in order, with no gaps.
    struct LoadTests {
        static let clients = 16
        static let callsPerClient = 200
        static let shared = ["general", "shared-a", "shared-b"]
        static let seed: UInt64 = 0x10AD_5EED

        /// One reply that carried a change count.
        struct Observation {
            var name: String
            var count: UInt64
            var method: String
            /// Whether the call changed the pasteboard (its count is that change's).
            var isChange: Bool
            /// For a write that replaced the contents, the types `Changed` must carry.
            var types: [String]?
        }

        /// What one client did and saw.
        struct ClientLog: Sendable {
            var observations: [Observation] = []
            var removes: [String: Int] = [:]
            var problems: [String] = []
        }

        @Test func concurrentClientsGetUniqueIncreasingCountsAndGaplessSignals() async throws {
            let h = try await Harness()
            let recorder = try await h.recordSignals(on: try h.connect())

            let logs = try await withThrowingTaskGroup(of: ClientLog.self) { group in
                for client in 0..<Self.clients {
                    let connection = try h.connect()
                    group.addTask { await Self.runClient(client, h, connection) }
                }
                var logs: [ClientLog] = []
                for try await log in group { logs.append(log) }
                return logs
            }

            let names = Self.shared + (0..<Self.clients).map(Self.ownName)
            var changes: [String: [UInt64: Observation]] = [:]
            var removes: [String: Int] = [:]
            for log in logs {
                for problem in log.problems { Issue.record(Comment(rawValue: problem)) }
                removes.merge(log.removes, uniquingKeysWith: +)
                for observation in log.observations where observation.isChange {
                    if let other = changes[observation.name]?[observation.count] {
                        Issue.record("\(observation.name): \(observation.method) and \(other.method) both got count \(observation.count)")
                    }
                    changes[observation.name, default: [:]][observation.count] = observation
                }
            }
            #expect(changes.values.reduce(0) { $0 + $1.count } > Self.clients * Self.callsPerClient / 3, "too few changes to mean anything")

            // Every change has been announced once the last one has.
            var finals: [String: UInt64] = [:]
            for name in names { finals[name] = try await h.changeCount(name) }
            let arrived = await eventually(timeout: .seconds(10)) {
                let last = Dictionary(recorder.announcements.map { ($0.name, $0.count) }, uniquingKeysWith: { max($0, $1) })
                return names.allSatisfy { (last[$0] ?? 0) == finals[$0] }
            }
            #expect(arrived, "not every change was announced")

            let signals = recorder.signals
            for name in names {
                let final = try #require(finals[name])
                let announced = signals.enumerated().compactMap { index, signal in
                    signal.changed.flatMap { $0.name == name ? (index, $0.count, $0.types) : nil }
                }
                let counts = announced.map(\.1)
                // Strictly increasing, no gaps, from the first change to the last.
                #expect(counts == (final == 0 ? [] : Array(1...final)), "\(name): Changed counts \(counts), final count \(final)")
                #expect(counts.last == final, "\(name): final count \(final), last Changed \(String(describing: counts.last))")
                // Each change a client was told of is announced with its types; every other
                // announced change is a Remove, followed at once by `Removed`.
                var unclaimed = 0
                for (index, count, types) in announced {
                    if let change = changes[name]?[count] {
                        if let written = change.types {
                            #expect(types == written, "\(name) #\(count) (\(change.method)): Changed says \(types), written \(written)")
                        }
                    } else {
                        unclaimed += 1
                        #expect(types.isEmpty, "\(name) #\(count): an unclaimed change with types \(types)")
                        let next = index + 1 < signals.count ? signals[index + 1] : nil
                        #expect(next?.member == "Removed" && next?.arguments == [.string(name)], "\(name) #\(count): not followed by Removed but \(String(describing: next))")
                    }
                }
                for count in changes[name, default: [:]].keys {
                    #expect(counts.contains(count), "\(name): the change to \(count) was never announced")
                }
                #expect(unclaimed <= removes[name, default: 0], "\(name): \(unclaimed) changes nobody made")
                let removed = signals.filter { $0.member == "Removed" && $0.arguments == [.string(name)] }.count
                #expect(removed == unclaimed, "\(name): \(removed) Removed signals for \(unclaimed) removals")
            }
            #expect(h.server.processIdentifier != nil)
        }

        static func ownName(_ client: Int) -> String {
            "client-\(client)"
        }

        /// ~200 mixed calls from one connection, checking each reply against what this client
        /// knows: counts never go backwards, and its own pasteboard holds what it last wrote.
        static func runClient(_ client: Int, _ h: Harness, _ connection: Connection) async -> ClientLog {
            var random = SeededRandom(seed: seed &+ UInt64(client) &* 0x9E37_79B9_7F4A_7C15)
            var log = ClientLog()
            var seen: [String: UInt64] = [:]
            let own = ownName(client)
            // What this client last left on its own pasteboard (nobody else writes it).
            var ownItems: [[(String, [UInt8])]] = []

            func observe(_ name: String, _ count: UInt64, _ method: String, change: Bool, types: [String]? = nil) {
                let previous = seen[name] ?? 0
                if change ? count <= previous : count < previous {
                    log.problems.append("client \(client): \(method) on \(name) replied count \(count) after \(previous)")
                }
                seen[name] = max(previous, count)
                log.observations.append(Observation(name: name, count: count, method: method, isChange: change, types: types))
            }

            for call in 0..<callsPerClient {
                let isOwn = Int.random(in: 0..<2, using: &random) == 0
                let name = isOwn ? own : shared.randomElement(using: &random)!
                let text = Array("client \(client) call \(call)".utf8)
                let roll = Int.random(in: 0..<100, using: &random)
                let label = "client \(client) call \(call) on \(name)"
                do {
                    switch roll {
                    case 0..<30:
                        let items: [[(String, [UInt8])]] = Int.random(in: 0..<3, using: &random) == 0
                            ? [[("text/plain;charset=utf-8", text), ("text/html", Array("<p>\(client)</p>".utf8))], [("image/png", [0x89, UInt8(call & 0xFF)])]]
                            : [[("text/plain;charset=utf-8", text)]]
                        let count = try await h.write(items, to: name, on: connection)
                        observe(name, count, "WriteItems", change: true, types: Self.types(of: items))
                        if isOwn { ownItems = items }
                    case 30..<35:
                        let items = [[("application/x-appended", text)]]
                        let count = try await h.write(items, to: name, options: [("append", .boolean(true))], on: connection)
                        observe(name, count, "WriteItems(append)", change: true)
                        if isOwn { ownItems += items }
                    case 35..<39:
                        let items = [[("text/plain;charset=utf-8", try Descriptors.pipe(holding: text))]]
                        let count = try await h.writeFd(items, to: name, on: connection)
                        observe(name, count, "WriteItemsFd", change: true, types: ["text/plain;charset=utf-8"])
                        if isOwn { ownItems = [[("text/plain;charset=utf-8", text)]] }
                    case 39..<44:
                        let reply = try await h.call("ClearContents", [.string(name)], on: connection)
                        observe(name, reply.first?.uint64Value ?? 0, "ClearContents", change: true, types: [])
                        if isOwn { ownItems = [] }
                    case 44..<46:
                        let reply = try await h.call("Remove", [.string(name)], on: connection)
                        if !reply.isEmpty { log.problems.append("\(label): Remove replied \(reply)") }
                        log.removes[name, default: 0] += 1
                        if isOwn { ownItems = [] }
                    case 46..<60:
                        let reply = try await h.call("ChangeCount", [.string(name)], on: connection)
                        observe(name, reply.first?.uint64Value ?? 0, "ChangeCount", change: false)
                    case 60..<70:
                        let reply = try await h.call("Types", [.string(name)], on: connection)
                        observe(name, reply.first?.uint64Value ?? 0, "Types", change: false)
                        if isOwn, reply.last?.stringArrayValue != Self.types(of: ownItems) {
                            log.problems.append("\(label): Types \(reply), wrote \(Self.types(of: ownItems))")
                        }
                    case 70..<80:
                        let reply = try await h.call("Items", [.string(name)], on: connection)
                        observe(name, reply.first?.uint64Value ?? 0, "Items", change: false)
                        if isOwn, reply.last?.arrayValue?.count != ownItems.count {
                            log.problems.append("\(label): Items \(reply), wrote \(ownItems.count) items")
                        }
                    default:
                        // A read of the first item's text; only another client's Clear or Remove
                        // makes it fail, and only on a shared pasteboard.
                        let best = roll >= 90
                        let reply = best
                            ? try await h.call("ReadBest", [.string(name), .uint32(0), .strings(["text/plain", "application/octet-stream"]), .uint64(0)], on: connection)
                            : try await h.call("ReadData", [.string(name), .uint32(0), .string("text/plain;charset=utf-8"), .uint64(0)], on: connection)
                        observe(name, reply.first?.uint64Value ?? 0, best ? "ReadBest" : "ReadData", change: false)
                        if isOwn {
                            let type = best ? reply[1].stringValue : "text/plain;charset=utf-8"
                            let expected = ownItems.first?.first { $0.0 == type }?.1
                            if expected == nil || reply.last?.bytesValue != expected {
                                log.problems.append("\(label): read \(reply), the first item written was \(String(describing: ownItems.first))")
                            }
                        }
                    }
                } catch let error as DBusError {
                    let ownHasText = ownItems.first?.first?.0 == "text/plain;charset=utf-8"
                    let isRead = roll >= 80
                    let expected = isRead && (!isOwn || !ownHasText)
                        && [Harness.errorPrefix + "NoSuchItem", Harness.errorPrefix + "NoSuchType"].contains(error.name)
                    if !expected { log.problems.append("\(label): \(error)") }
                } catch {
                    log.problems.append("\(label): \(error)")
                }
            }
            return log
        }

        /// The types `Types` and `Changed` list for these items: every type of every item, first
        /// item first, no repeats.
        static func types(of items: [[(String, [UInt8])]]) -> [String] {
            var types: [String] = []
            for item in items {
                for (type, _) in item where !types.contains(type) { types.append(type) }
            }
            return types
        }
    }
}
