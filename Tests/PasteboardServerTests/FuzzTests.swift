import DBus
import Foundation
import Testing
import TestSupport

extension StressTests {
    /// Random and mistyped calls never crash the server, never touch a pasteboard they do not
    /// name, and fail only with the contract's error names; oversized input is refused with the
    /// documented error.
    ///
    /// The fuzzer is seeded: the same seed sends the same calls (their interleaving over the lanes
    /// aside). Every failure message names the seed and the call; set `PASTEBOARDD_FUZZ_SEED` to
    /// replay another seed.
    struct FuzzTests {
        /// The seed of this run: `PASTEBOARDD_FUZZ_SEED` (decimal or 0x-hex) when set.
        static let seed: UInt64 = {
            guard let text = ProcessInfo.processInfo.environment["PASTEBOARDD_FUZZ_SEED"] else { return 0x5EED_CAFE_F00D_0001 }
            return text.hasPrefix("0x") ? UInt64(text.dropFirst(2), radix: 16) ?? 1 : UInt64(text) ?? 1
        }()

        static let pasteboardErrors: Set<String> = Set(
            ["InvalidName", "InvalidType", "InvalidArgument", "NoSuchItem", "NoSuchType", "Stale", "Conflict", "TooLarge", "QuotaExceeded", "AccessDenied", "ProviderFailed"]
                .map { Harness.errorPrefix + $0 })
        static let unknownMethod = "org.freedesktop.DBus.Error.UnknownMethod"
        static let unknownInterface = "org.freedesktop.DBus.Error.UnknownInterface"

        /// The pasteboard the fuzzer never names.
        static let kept = "keep"

        @Test func randomCallsLeaveTheServerAndOtherPasteboardsIntact() async throws {
            // Short transfer and provider timeouts: a fuzzed descriptor that never ends, or a
            // promise nobody provides, costs a fraction of a second.
            let h = try await Harness(limits: ["transfer-idle-timeout-ms=300", "provider-timeout-ms=300"])
            let serverPID = try #require(h.server.processIdentifier)
            let serverName = try #require(h.server.uniqueName)

            // Contents the fuzzer must not touch: inline and file-backed data, and a history.
            let large = (0..<150_000).map { UInt8(truncatingIfNeeded: $0 &* 7 &+ 1) }
            try await h.write([[("text/plain;charset=utf-8", "first".bytes)]], to: Self.kept)
            try await h.write([[("text/plain;charset=utf-8", "kept".bytes), ("text/html", "<b>kept</b>".bytes)], [("application/x-kept", large)]], to: Self.kept)
            try await h.writeFd([[("image/png", try Descriptors.file(large))]], to: Self.kept, options: [("append", .boolean(true))])
            let before = try await h.snapshot(Self.kept)
            let historyBefore = try await h.call("History", [.string(Self.kept), .uint32(0)])
            #expect(before.count == 3)

            let lanes = 4
            let callsPerLane = 500
            let reports = try await withThrowingTaskGroup(of: FuzzReport.self) { group in
                for lane in 0..<lanes {
                    let connection = try h.connect()
                    group.addTask {
                        var fuzzer = Fuzzer(seed: Self.seed &+ UInt64(lane) &* 0x9E37_79B9_7F4A_7C15, lane: lane)
                        return await fuzzer.run(callsPerLane, on: connection)
                    }
                }
                var reports: [FuzzReport] = []
                for try await report in group { reports.append(report) }
                return reports
            }

            let seed = "seed 0x\(String(Self.seed, radix: 16))"
            var outcomes: [String: Int] = [:]
            for report in reports {
                for problem in report.problems { Issue.record("\(seed): \(problem)") }
                outcomes.merge(report.outcomes, uniquingKeysWith: +)
            }
            let total = outcomes.values.reduce(0, +)
            #expect(total == lanes * callsPerLane, "\(seed): \(outcomes)")
            // The fuzzer reached past the argument checks, and through them.
            #expect((outcomes["success"] ?? 0) >= total / 10, "\(seed): \(outcomes)")
            #expect(outcomes.keys.filter { $0.hasPrefix(Harness.errorPrefix) }.count >= 5, "\(seed): \(outcomes)")

            // The same process still runs, still owns the name, and answers.
            #expect(Self.isRunning(serverPID), "\(seed): the server died:\n\(h.server.log)")
            #expect(h.server.processIdentifier == serverPID)
            #expect(try await h.client.nameOwner(Harness.busName) == serverName, "\(seed)")
            _ = try await h.call("Ping", interface: "org.freedesktop.DBus.Peer")
            #expect(try await h.listPasteboards().contains(Self.kept), "\(seed)")

            // And the pasteboard nobody named is exactly as it was.
            #expect(try await h.changeCount(Self.kept) == before.count, "\(seed)")
            #expect(try await h.snapshot(Self.kept) == before, "\(seed)")
            #expect(try await h.call("History", [.string(Self.kept), .uint32(0)]) == historyBefore, "\(seed)")
            #expect(!h.server.log.contains("Fatal error"), "\(seed): \(h.server.log)")
        }

        /// Whether `pid` is alive and not a zombie (without reaping it: the ``TestServer`` does).
        static func isRunning(_ pid: Int32) -> Bool {
            guard kill(pid, 0) == 0, let state = processState(pid) else { return false }
            return state != "Z" && state != "X"
        }

        // MARK: Oversize inputs

        @Test func oversizeInputsAreRefusedWithTheDocumentedErrors() async throws {
            let h = try await Harness(limits: ["max-item-bytes=64K"])
            let limits = try #require(try await h.property("Limits").dictionaryEntries)
            let limit = { (key: String) in limits.first { $0.key == .string(key) }?.value.uint64Value }
            #expect(limit("max-items") == 1024)
            #expect(limit("max-types-per-item") == 64)
            #expect(limit("max-item-bytes") == 65536)

            try await h.write([[("text/plain;charset=utf-8", "stored".bytes)], [("application/x-stored", [UInt8](repeating: 9, count: 65536))]])
            let stored = try await h.snapshot()
            let noOptions = Harness.options([])

            // A 256-byte name, wherever a name is taken.
            let longName = String(repeating: "n", count: 256)
            for (method, arguments) in try HostileInputTests.callsNaming(longName) {
                await h.expectFailure("InvalidName", method, arguments)
            }
            await h.expectFailure("InvalidName", "WritePromised", [.string(longName), .array(element: "as", [.strings(["text/plain"])]), noOptions])
            await h.expectFailure("InvalidName", "History", [.string(longName), .uint32(0)])
            await h.expectFailure("InvalidName", "Restore", [.string(longName), .uint64(1)])

            // A 256-byte type, wherever a type is taken.
            let longType = "application/" + String(repeating: "x", count: 244)
            #expect(longType.utf8.count == 256)
            for (method, arguments) in try HostileInputTests.callsWithType(longType) {
                await h.expectFailure("InvalidType", method, arguments)
            }
            await h.expectFailure("InvalidType", "WritePromised", [.string("general"), .array(element: "as", [.strings([longType])]), noOptions])

            // 2,000 items, with max-items at 1024; the limit itself is fine.
            let tooMany = (0..<2000).map { [("text/plain", [UInt8(truncatingIfNeeded: $0)])] }
            let error = await h.expectFailure("QuotaExceeded", "WriteItems", [.string("general"), Harness.inlineItems(tooMany), noOptions])
            #expect(error?.message.contains("max-items") == true, "\(String(describing: error))")
            await h.expectFailure("QuotaExceeded", "WriteItems", [.string("general"), Harness.inlineItems(tooMany), Harness.options([("append", .boolean(true))])])
            await h.expectFailure("QuotaExceeded", "WritePromised", [.string("general"), .array(element: "as", (0..<2000).map { _ in .strings(["text/plain"]) }), noOptions])
            #expect(try await h.write(Array(tooMany.prefix(1024)), to: "full") == 1)
            await h.expectFailure("QuotaExceeded", "WriteItems", [.string("full"), Harness.inlineItems([[("text/plain", [1])]]), Harness.options([("append", .boolean(true))])])
            #expect(try await h.items("full").items.count == 1024)

            // 65 types in one item; 64 is fine.
            let types = (0..<65).map { "application/x-type-\($0)" }
            let error65 = await h.expectFailure("TooLarge", "WriteItems", [.string("general"), Harness.inlineItems([types.map { ($0, [1]) }]), noOptions])
            #expect(error65?.message.contains("max-types-per-item") == true, "\(String(describing: error65))")
            await h.expectFailure("TooLarge", "WritePromised", [.string("general"), .array(element: "as", [.strings(types)]), noOptions])
            #expect(try await h.write([types.prefix(64).map { ($0, [1]) }], to: "wide") == 1)

            // An item over max-item-bytes (64 KiB here), by WriteItems and by WriteItemsFd, in one
            // type or summed over several.
            let over = [UInt8](repeating: 7, count: 65537)
            let errorBytes = await h.expectFailure("TooLarge", "WriteItems", [.string("general"), Harness.inlineItems([[("application/x-big", over)]]), noOptions])
            #expect(errorBytes?.message.contains("max-item-bytes") == true, "\(String(describing: errorBytes))")
            await h.expectFailure("TooLarge", "WriteItems", [.string("general"), Harness.inlineItems([[("text/plain", Array(over.prefix(40000))), ("text/html", Array(over.prefix(30000)))]]), noOptions])
            await h.expectFailure("TooLarge", "WriteItemsFd", [.string("general"), Harness.descriptorItems([[("application/x-big", try Descriptors.file(over))]]), noOptions])
            let (reader, feeder) = try PipeFeeder.start(count: 2) { _ in [UInt8](repeating: 3, count: 40000) }
            await h.expectFailure("TooLarge", "WriteItemsFd", [.string("general"), Harness.descriptorItems([[("application/x-big", reader)]]), noOptions])
            _ = await feeder.wait(timeout: .seconds(5))

            // Nothing refused changed anything.
            #expect(try await h.snapshot() == stored)
            #expect(try await h.listPasteboards().sorted() == ["full", "general", "wide"])
            #expect(h.server.processIdentifier.map(Self.isRunning) == true)
        }
    }
}

// MARK: - The fuzzer

/// What one lane of the fuzzer saw: how many calls ended how, and what broke the rules.
struct FuzzReport: Sendable {
    var outcomes: [String: Int] = [:]
    var problems: [String] = []
}

/// One lane of calls: well-typed calls with hostile contents, calls with random argument
/// lists, unknown methods and unknown interfaces.
struct Fuzzer {
    /// The methods of `org.pasteboardd.Pasteboard1` and their input signatures, per the contract.
    static let methods: [(name: String, input: String, output: String)] = [
        ("ListPasteboards", "", "as"), ("ChangeCount", "s", "t"), ("ClearContents", "s", "t"),
        ("WriteItems", "saa{say}a{sv}", "t"), ("WriteItemsFd", "saa{sh}a{sv}", "t"), ("Types", "s", "tas"),
        ("Items", "s", "taa{sv}"), ("AvailableType", "sas", "s"), ("CanRead", "sas", "b"),
        ("ReadData", "sust", "tay"), ("ReadBest", "suast", "tsay"), ("ReadFd", "sust", "th"),
        ("WritePromised", "saasa{sv}", "t"), ("CreateUnique", "", "s"), ("Remove", "s", ""),
        ("History", "su", "a(txas)"), ("Restore", "st", "t"),
    ]

    static let unknownMethods = ["Frobnicate", "writeItems", "WriteItem", "ReadDataFd", "Clear", "Delete", "GetAll2", "X", "ListPasteboards2", "Provide"]
    static let unknownInterfaces = ["org.example.Nope", "org.pasteboardd.Pasteboard2", "org.pasteboardd.Provider1", "com.example.Pasteboard1"]

    /// The names the fuzzer writes to: a small set (so calls meet each other's contents), bad
    /// names, and random ones, but never ``StressTests/FuzzTests/kept``.
    static let names = ["general", "find", "drag", "fuzz", "keep ", " keep", "Keep", "keep2", String(repeating: "m", count: 255), "emoji 📋"]
    static let invalidNames = ["", String(repeating: "n", count: 256), String(repeating: "é", count: 128), "tab\there", "new\nline", "\u{7F}", "\u{85}"]

    static let types = [
        "text/plain", "text/plain;charset=utf-8", "text/html", "image/png", "image/jpeg", "application/octet-stream",
        "public.utf8-plain-text", "public.png", "public.html", "com.example.todo", "application/json",
        "TEXT/PLAIN ; CHARSET=UTF-8", "text/plain ; charset=utf-8 ; format=flowed", "application/x-fuzz",
    ]
    static let invalidTypes = [
        "", " ", "text/ plain", "text /plain", "text plain", "/", "text/", "/plain", "text/plaïn", "テキスト", "text/pl\tain",
        "text/plain\n", "a;b", ";", "text/plain;", "application/" + String(repeating: "x", count: 244), "com.example todo",
    ]

    static let optionKeys = ["if-change-count", "expires-in-ms", "concealed", "transient", "owner-only", "append", "unknown", "", "Append", "expires-in-ms "]

    let seed: UInt64
    let lane: Int
    private var random: SeededRandom
    /// Descriptors a call may still carry (the bus refuses a message with too many).
    private var descriptorBudget = 0
    /// Write ends of pipes kept open until the lane ends (a writer that never finishes).
    private var openWriters: [UnixFileDescriptor] = []

    init(seed: UInt64, lane: Int) {
        self.seed = seed
        self.lane = lane
        random = SeededRandom(seed: seed)
    }

    /// Where a call goes.
    enum Target {
        case method(name: String, output: String)
        case unknownMethod(String)
        case unknownInterface(interface: String, method: String)
    }

    mutating func run(_ count: Int, on connection: Connection) async -> FuzzReport {
        var report = FuzzReport()
        for index in 0..<count {
            descriptorBudget = 6
            let (target, interface, arguments) = nextCall()
            let method: String
            switch target {
            case .method(let name, _), .unknownMethod(let name): method = name
            case .unknownInterface(_, let name): method = name
            }
            let label = "lane \(lane) call \(index): \(interface ?? "(no interface)").\(method)(\(Self.describe(arguments)))"
            let message: Message
            do {
                message = try Message.methodCall(destination: Harness.busName, path: Harness.path, interface: interface, method: method, arguments: arguments)
            } catch {
                // D-Bus itself cannot carry it; nothing was sent.
                report.problems.append("\(label) could not be built: \(error)")
                continue
            }
            do {
                let reply = try await connection.call(message, timeout: .seconds(10))
                report.outcomes["success", default: 0] += 1
                switch target {
                case .method(_, let output):
                    if reply.signature != output {
                        report.problems.append("\(label) replied '\(reply.signature)', not '\(output)'")
                    }
                case .unknownMethod, .unknownInterface:
                    report.problems.append("\(label) succeeded")
                }
            } catch {
                report.outcomes[error.name, default: 0] += 1
                let allowed: Bool
                switch target {
                case .method: allowed = StressTests.FuzzTests.pasteboardErrors.contains(error.name)
                case .unknownMethod: allowed = error.name == StressTests.FuzzTests.unknownMethod
                case .unknownInterface: allowed = error.name == StressTests.FuzzTests.unknownInterface
                }
                if !allowed { report.problems.append("\(label) failed with \(error)") }
                if error.message.isEmpty { report.problems.append("\(label) failed with \(error.name) and no message") }
            }
        }
        openWriters.removeAll()
        return report
    }

    // MARK: Calls

    private mutating func nextCall() -> (Target, String?, [DBusValue]) {
        let roll = Int.random(in: 0..<100, using: &random)
        switch roll {
        case 0..<70:
            // A method of the interface, with its own signature and hostile contents.
            let method = Self.methods.randomElement(using: &random)!
            return (.method(name: method.name, output: method.output), interfaceForKnownMethod(), wellTypedArguments(method.name))
        case 70..<90:
            // A method of the interface with a random argument list.
            let method = Self.methods.randomElement(using: &random)!
            let arguments = randomArguments()
            let target: Target = .method(name: method.name, output: method.output)
            return (target, interfaceForKnownMethod(), arguments)
        case 90..<95:
            let method = Self.unknownMethods.randomElement(using: &random)!
            return (.unknownMethod(method), chance(3) ? nil : Harness.interface, randomArguments())
        default:
            let interface = Self.unknownInterfaces.randomElement(using: &random)!
            let method = chance(2) ? Self.methods.randomElement(using: &random)!.name : Self.unknownMethods.randomElement(using: &random)!
            return (.unknownInterface(interface: interface, method: method), interface, randomArguments())
        }
    }

    /// Mostly the interface; sometimes no interface at all, which the object must route the same.
    private mutating func interfaceForKnownMethod() -> String? {
        chance(10) ? nil : Harness.interface
    }

    private mutating func wellTypedArguments(_ method: String) -> [DBusValue] {
        switch method {
        case "ListPasteboards", "CreateUnique": return []
        case "ChangeCount", "ClearContents", "Types", "Items", "Remove": return [name()]
        case "WriteItems": return [name(), inlineItems(), options()]
        case "WriteItemsFd": return [name(), descriptorItems(), options()]
        case "AvailableType", "CanRead": return [name(), typeList()]
        case "ReadData", "ReadFd": return [name(), itemIndex(), type(), count()]
        case "ReadBest": return [name(), itemIndex(), typeList(), count()]
        case "WritePromised": return [name(), .array(element: "as", (0..<Int.random(in: 0...3, using: &random)).map { _ in typeList() }), options()]
        case "History": return [name(), .uint32(chance(2) ? UInt32.random(in: 0...4, using: &random) : random.next())]
        case "Restore": return [name(), count()]
        default: return randomArguments()
        }
    }

    private mutating func chance(_ oneIn: Int) -> Bool {
        Int.random(in: 0..<oneIn, using: &random) == 0
    }

    private mutating func name() -> DBusValue {
        if chance(8) {
            let text = randomString()
            return .string(text == StressTests.FuzzTests.kept ? "not-" + text : text)
        }
        return .string((chance(5) ? Self.invalidNames : Self.names).randomElement(using: &random)!)
    }

    private mutating func type() -> DBusValue {
        .string(chance(8) ? randomString() : (chance(5) ? Self.invalidTypes : Self.types).randomElement(using: &random)!)
    }

    private mutating func typeList() -> DBusValue {
        .array(element: "s", (0..<Int.random(in: 0...4, using: &random)).map { _ in type() })
    }

    private mutating func itemIndex() -> DBusValue {
        .uint32(chance(2) ? UInt32.random(in: 0...3, using: &random) : [UInt32.max, UInt32(Int32.max), 1024, random.next()].randomElement(using: &random)!)
    }

    private mutating func count() -> DBusValue {
        .uint64(chance(2) ? UInt64.random(in: 0...6, using: &random) : [UInt64.max, UInt64(Int64.max), 1 << 32, random.next()].randomElement(using: &random)!)
    }

    private mutating func bytes() -> [UInt8] {
        let size: Int
        switch Int.random(in: 0..<1000, using: &random) {
        case 0..<5: size = Int.random(in: 65_536...200_000, using: &random)  // a blob file
        case 5: size = (4 << 20) + 1  // over max-inline-bytes
        default: size = Int.random(in: 0...64, using: &random)
        }
        var bytes = [UInt8](repeating: 0, count: size)
        for index in stride(from: 0, to: size, by: 8) {
            let word = random.next()
            for offset in 0..<min(8, size - index) { bytes[index + offset] = UInt8(truncatingIfNeeded: word >> (offset * 8)) }
        }
        return bytes
    }

    private mutating func inlineItems() -> DBusValue {
        .array(element: "a{say}", (0..<Int.random(in: 0...4, using: &random)).map { _ in
            .dictionary(key: "s", value: "ay", (0..<Int.random(in: 0...4, using: &random)).map { _ in (type(), .bytes(bytes())) })
        })
    }

    private mutating func descriptorItems() -> DBusValue {
        .array(element: "a{sh}", (0..<Int.random(in: 0...3, using: &random)).map { _ in
            .dictionary(key: "s", value: "h", (0..<Int.random(in: 0...2, using: &random)).compactMap { _ in
                descriptor().map { (type(), .unixFD($0)) }
            })
        })
    }

    /// A descriptor of one of the kinds a client might pass, nil when the call has enough.
    private mutating func descriptor() -> UnixFileDescriptor? {
        guard descriptorBudget > 0 else { return nil }
        descriptorBudget -= 1
        switch Int.random(in: 0..<100, using: &random) {
        case 0..<40:
            return try? Descriptors.pipe(holding: Array(bytes().prefix(65536)))
        case 40..<55:
            let fd = open("/dev/null", O_RDONLY | O_CLOEXEC)
            return fd >= 0 ? UnixFileDescriptor(owning: fd) : nil
        case 55..<65:
            // The write end: refused.
            return try? Descriptors.pipe().write
        case 65..<75:
            let fd = open("/dev/null", O_WRONLY | O_CLOEXEC)
            return fd >= 0 ? UnixFileDescriptor(owning: fd) : nil
        case 75..<90:
            return try? Descriptors.file(bytes())
        case 90..<97:
            // An empty pipe already closed.
            return try? Descriptors.pipe().read
        default:
            // A writer that never finishes: the transfer idle timeout ends it.
            guard let (reader, writer) = try? Descriptors.pipe() else { return nil }
            openWriters.append(writer)
            return reader
        }
    }

    private mutating func options() -> DBusValue {
        var entries: [(DBusValue, DBusValue)] = []
        for _ in 0..<Int.random(in: 0...3, using: &random) {
            let key = Self.optionKeys.randomElement(using: &random)!
            let value: DBusValue
            if chance(4) {
                value = randomValue(depth: 1)  // mostly the wrong type
            } else {
                switch key {
                case "if-change-count": value = count()
                case "expires-in-ms": value = .uint64([0, 1, 50, 1000, UInt64.max, UInt64(Int64.max), random.next()].randomElement(using: &random)!)
                default: value = .boolean(chance(2))
                }
            }
            entries.append((.string(key), .variant(value)))
        }
        return .dictionary(key: "s", value: "v", entries)
    }

    // MARK: Values of any type

    /// A D-Bus type, never an empty struct.
    indirect enum FuzzType {
        case basic(Character)
        case array(FuzzType)
        case dictionary(Character, FuzzType)
        case structure([FuzzType])
        case variant

        var signature: String {
            switch self {
            case .basic(let code): String(code)
            case .array(let element): "a" + element.signature
            case .dictionary(let key, let value): "a{" + String(key) + value.signature + "}"
            case .structure(let fields): "(" + fields.map(\.signature).joined() + ")"
            case .variant: "v"
            }
        }
    }

    /// Basic types for random values; descriptors (`h`) only come from ``randomArguments()``,
    /// which keeps their number per message under the bus's limit.
    static let basicCodes: [Character] = ["y", "b", "n", "q", "i", "u", "x", "t", "d", "s", "s", "s", "o", "g"]

    private mutating func randomType(depth: Int) -> FuzzType {
        let roll = Int.random(in: 0..<10, using: &random)
        guard depth > 0, roll >= 6 else { return .basic(Self.basicCodes.randomElement(using: &random)!) }
        switch roll {
        case 6: return .array(randomType(depth: depth - 1))
        case 7: return .dictionary(["s", "u", "y", "x", "o"].randomElement(using: &random)!, randomType(depth: depth - 1))
        case 8: return .structure((0..<Int.random(in: 1...3, using: &random)).map { _ in randomType(depth: depth - 1) })
        default: return .variant
        }
    }

    private mutating func randomValue(depth: Int) -> DBusValue {
        value(of: randomType(depth: depth), depth: depth)
    }

    private mutating func value(of type: FuzzType, depth: Int) -> DBusValue {
        switch type {
        case .basic(let code): return basicValue(code)
        case .array(.basic("y")): return .bytes(bytes())
        case .array(let element):
            return .array(element: element.signature, (0..<Int.random(in: 0...3, using: &random)).map { _ in value(of: element, depth: depth - 1) })
        case .dictionary(let key, let valueType):
            return .dictionary(key: String(key), value: valueType.signature, (0..<Int.random(in: 0...3, using: &random)).map { _ in
                (basicValue(key), value(of: valueType, depth: depth - 1))
            })
        case .structure(let fields): return .structure(fields.map { value(of: $0, depth: depth - 1) })
        case .variant: return .variant(randomValue(depth: max(0, depth - 1)))
        }
    }

    private mutating func basicValue(_ code: Character) -> DBusValue {
        switch code {
        case "y": return .byte(UInt8.random(in: 0...255, using: &random))
        case "b": return .boolean(chance(2))
        case "n": return .int16(Int16(truncatingIfNeeded: random.next()))
        case "q": return .uint16(UInt16(truncatingIfNeeded: random.next()))
        case "i": return .int32([0, -1, Int32.min, Int32.max, Int32(truncatingIfNeeded: random.next())].randomElement(using: &random)!)
        case "u": return .uint32([0, 1, UInt32.max, UInt32(truncatingIfNeeded: random.next())].randomElement(using: &random)!)
        case "x": return .int64([0, -1, Int64.min, Int64.max, Int64(bitPattern: random.next())].randomElement(using: &random)!)
        case "t": return count()
        case "d": return .double([0, -0.0, .nan, .infinity, -.infinity, .greatestFiniteMagnitude, Double(bitPattern: random.next() & 0x7FEF_FFFF_FFFF_FFFF)].randomElement(using: &random)!)
        case "o": return .objectPath(["/", "/org/pasteboardd/Pasteboard1", "/a/b_c/D9"].randomElement(using: &random)!)
        case "g": return .signature(["", "s", "a{sv}", "aa{say}", "(txas)", "h"].randomElement(using: &random)!)
        default: return chance(2) ? name() : type()
        }
    }

    private mutating func randomArguments() -> [DBusValue] {
        (0..<Int.random(in: 0...5, using: &random)).map { _ in
            switch Int.random(in: 0..<20, using: &random) {
            case 0: descriptor().map { .unixFD($0) } ?? .uint32(0)
            case 1: .array(element: "h", (0..<Int.random(in: 0...2, using: &random)).compactMap { _ in descriptor().map { .unixFD($0) } })
            case 2: descriptorItems()
            default: randomValue(depth: 3)
            }
        }
    }

    /// A string of random length and alphabet: empty, huge, with control characters, or with
    /// the characters of type syntax in the wrong places. Never NUL, which D-Bus cannot carry.
    private mutating func randomString() -> String {
        let alphabets: [[Character]] = [
            Array("abcdefghijklmnopqrstuvwxyz"),
            Array("text/plain;charset=utf-8 "),
            Array("/;= .+-*\"\\'"),
            (1...31).map { Character(Unicode.Scalar($0)!) } + ["\u{7F}", "\u{85}", "\u{9F}"],
            Array("éü東京📋\u{301}\u{200B}\u{FEFF}"),
        ]
        let alphabet = alphabets.randomElement(using: &random)!
        let length: Int
        switch Int.random(in: 0..<100, using: &random) {
        case 0..<10: length = 0
        case 10..<13: length = Int.random(in: 250...260, using: &random)
        case 13: length = Int.random(in: 10_000...300_000, using: &random)
        default: length = Int.random(in: 1...40, using: &random)
        }
        var text = ""
        text.reserveCapacity(length)
        for _ in 0..<length { text.append(alphabet.randomElement(using: &random)!) }
        return text
    }

    /// Arguments for a failure message, with long data abbreviated.
    static func describe(_ arguments: [DBusValue]) -> String {
        let text = arguments.map { describe($0) }.joined(separator: ", ")
        return text.count > 600 ? String(text.prefix(600)) + "…" : text
    }

    private static func describe(_ value: DBusValue) -> String {
        switch value {
        case .string(let text): return text.utf8.count > 40 ? "\"\(text.prefix(20).debugDescription.dropFirst().dropLast())…\" (\(text.utf8.count) bytes)" : text.debugDescription
        case .bytes(let bytes): return "ay[\(bytes.count)]"
        case .array(let element, let elements): return "a\(element)[" + elements.map { describe($0) }.joined(separator: ", ") + "]"
        case .dictEntry(let key, let value): return describe(key) + ": " + describe(value)
        case .structure(let fields): return "(" + fields.map { describe($0) }.joined(separator: ", ") + ")"
        case .variant(let inner): return "<" + describe(inner) + ">"
        default: return "\(value)"
        }
    }
}
