import DBus
import PasteboardInterface
import PasteboardModel

#if canImport(Glibc)
import Glibc
#endif

/// The methods of `org.pasteboardd.Pasteboard1` that pbctl calls, straight over the D-Bus
/// binding.
///
/// The `Pasteboard` library's `PasteboardProxy` is the same thing for apps, but that library
/// is built on Foundation, and linked with Foundation every `pbctl` start loaded and relocated
/// Foundation and ICU, most of what it cost (see Package.swift). Data here is `[UInt8]`;
/// every method throws `PasteboardError` for the server's answers and ``Unreachable`` when
/// there is no server to answer.
final class Server: Sendable {

    private let connection: Connection

    /// The bus address in use.
    var address: String { connection.address }

    private init(connection: Connection) {
        self.connection = connection
    }

    /// Connects to the bus at `address`, or to the session bus.
    static func connect(address: String?) throws(Unreachable) -> Server {
        do {
            // pbctl never needs its unique name: Hello's answer is not waited for (one round
            // trip to the bus fewer per run). The main thread drives the connection while it
            // waits (see MainThreadExecutor): no thread to start, no hop to it and back.
            let connection = try Connection.connect(address: address, awaitingName: false, drivenByCaller: true)
            MainThreadExecutor.shared.drive(connection)
            return Server(connection: connection)
        } catch {
            throw Unreachable(address: address ?? Connection.sessionBusAddress(), reason: error.message)
        }
    }

    // MARK: Methods

    func listPasteboards() async throws -> [String] {
        try await call("ListPasteboards").first?.stringArrayValue ?? []
    }

    func changeCount(_ name: String) async throws -> UInt64 {
        try await call("ChangeCount", [.string(name)]).first?.uint64Value ?? 0
    }

    func clearContents(_ name: String) async throws {
        _ = try await call("ClearContents", [.string(name)])
    }

    func remove(_ name: String) async throws {
        _ = try await call("Remove", [.string(name)])
    }

    /// Replaces the contents with one item offering `data` under each of `types`.
    func writeItem(_ name: String, types: [String], data: [UInt8], options: PasteboardWriteOptions) async throws {
        let item = DBusValue.dictionary(key: "s", value: "ay", types.map { (.string($0), .bytes(data)) })
        _ = try await call("WriteItems", [.string(name), .array(element: "a{say}", [item]), options.encoded])
    }

    /// Replaces the contents with one item whose data the server reads from `fd` (to its end),
    /// offered under each of `types`. The caller keeps `fd`.
    func writeItemFd(_ name: String, types: [String], fd: Int32, options: PasteboardWriteOptions) async throws {
        var entries: [(DBusValue, DBusValue)] = []
        for type in types {
            entries.append((.string(type), .unixFD(try PasteboardInterface.descriptor(sending: fd))))
        }
        let item = DBusValue.dictionary(key: "s", value: "h", entries)
        let arguments: [DBusValue] = [.string(name), .array(element: "a{sh}", [item]), options.encoded]
        try await whileTheServerAnswers { _ = try await self.call("WriteItemsFd", arguments) }
    }

    /// Every type of every item, with the change count they belong to.
    func types(_ name: String) async throws -> (count: UInt64, types: [String]) {
        let reply = try await call("Types", [.string(name)])
        return (reply.first?.uint64Value ?? 0, reply.dropFirst().first?.stringArrayValue ?? [])
    }

    func items(_ name: String) async throws -> (count: UInt64, items: [PasteboardItemInfo]) {
        PasteboardItemInfo.decode(try await call("Items", [.string(name)]))
    }

    /// The item's type that best satisfies the first satisfiable entry of `types`, and its
    /// data; `TooLarge` above the server's inline limit.
    func readBest(_ name: String, item: UInt32, types: [String], expect: UInt64) async throws -> (type: String, data: [UInt8]) {
        let reply = try await call("ReadBest", [.string(name), .uint32(item), .strings(types), .uint64(expect)])
        guard reply.count == 3 else { return ("", []) }
        return (reply[1].stringValue ?? "", reply[2].bytesValue ?? [])
    }

    /// The data of exactly `type` as a descriptor the caller owns and must close.
    func readFd(_ name: String, item: UInt32, type: String, expect: UInt64) async throws -> Int32 {
        let reply = try await call("ReadFd", [.string(name), .uint32(item), .string(type), .uint64(expect)])
        guard let fd = try PasteboardInterface.receivedDescriptor(reply) else {
            throw Unreachable(address: address, reason: "the server sent no descriptor")
        }
        return fd
    }

    /// What the desktop bridge joins `name` to ("X11 display :0 clipboard"), or nil when it is
    /// not joined (or the server predates the bridge).
    func desktop(of name: String) async -> String? {
        guard let entries = try? await property("Desktop") else { return nil }
        return entries.first { $0.key.stringValue == name }?.value.stringValue
    }

    /// The server's limit `key` (`max-item-bytes`), nil when it names no such limit. Asking
    /// also finds out whether the server is there at all (``Unreachable`` when not), or
    /// starts it when the bus activates it.
    func limit(_ key: String) async throws -> UInt64? {
        try await property("Limits").first { $0.key.stringValue == key }?.value.uint64Value
    }

    /// The entries of a dictionary property of the interface (`Desktop`, `Limits`).
    private func property(_ name: String) async throws -> [(key: DBusValue, value: DBusValue)] {
        let reply: Message
        do {
            let message = try Message.methodCall(
                destination: PasteboardInterface.busName, path: PasteboardInterface.objectPath,
                interface: "org.freedesktop.DBus.Properties", method: "Get", arguments: [.string(PasteboardInterface.name), .string(name)])
            reply = try await connection.call(message, timeout: Self.answerTimeout)
        } catch {
            throw translate(error)
        }
        return reply.arguments().first?.variantValue?.dictionaryEntries ?? []
    }

    typealias HistoryEntry = PasteboardHistoryEntry

    func history(_ name: String, limit: UInt32) async throws -> [HistoryEntry] {
        let reply = try await call("History", [.string(name), .uint32(limit)])
        return HistoryEntry.decode(reply)
    }

    /// Makes the generation `count` current again; returns the new change count.
    func restore(_ name: String, count: UInt64) async throws -> UInt64 {
        try await call("Restore", [.string(name), .uint64(count)]).first?.uint64Value ?? 0
    }

    /// How often a call that may rightly take long asks whether the server still answers.
    static let livenessInterval: Duration = .seconds(10)

    /// Runs `work`, a call without a timeout (`WriteItemsFd` waits for the whole input), while
    /// asking the server every ``livenessInterval`` whether it still answers (`Peer.Ping`,
    /// which its bus thread answers while its queue reads the input): a server stopped or hung
    /// meanwhile ends it with ``Unreachable`` after ``answerTimeout``, as any other call does,
    /// rather than pbctl waiting for ever.
    private func whileTheServerAnswers(_ work: @escaping @Sendable () async throws -> Void) async throws {
        try await withThrowingTaskGroup(of: Void.self) { group in
            group.addTask { try await work() }
            group.addTask {
                while true {
                    try await Task.sleep(for: Self.livenessInterval)
                    try await self.ping()
                }
            }
            defer { group.cancelAll() }
            // The first to end: the work, or the ping that found no server.
            try await group.next()
        }
    }

    private func ping() async throws {
        do {
            let message = try Message.methodCall(
                destination: PasteboardInterface.busName, path: PasteboardInterface.objectPath,
                interface: "org.freedesktop.DBus.Peer", method: "Ping")
            message.setAutoStart(false)
            _ = try await connection.call(message, timeout: Self.answerTimeout)
        } catch {
            throw translate(error)
        }
    }

    // MARK: Signals

    typealias Change = PasteboardChangedSignal

    /// The `Changed` signals of `name`, or of every pasteboard when `name` is nil, from the
    /// moment this returns; they end when the connection is lost.
    func changes(of name: String?) async throws -> some AsyncSequence<Change, Never> & Sendable {
        let rule = MatchRule(sender: PasteboardInterface.busName, path: PasteboardInterface.objectPath, interface: PasteboardInterface.name, member: "Changed", arg0: name)
        return try await signals(matching: rule).compactMap { @Sendable signal -> Change? in
            Change(signal)
        }
    }

    /// One element each time pasteboardd takes its name on the bus (started again, say), from
    /// the moment this returns: the changes made while it was away were never signalled.
    func restarts() async throws -> some AsyncSequence<Void, Never> & Sendable {
        let rule = MatchRule(sender: "org.freedesktop.DBus", path: "/org/freedesktop/DBus", interface: "org.freedesktop.DBus", member: "NameOwnerChanged", arg0: PasteboardInterface.busName)
        return try await signals(matching: rule).compactMap { @Sendable signal -> Void? in
            let arguments = signal.arguments()
            return arguments.count == 3 && !(arguments[2].stringValue ?? "").isEmpty ? () : nil
        }
    }

    // MARK: Plumbing

    private func signals(matching rule: MatchRule) async throws -> AsyncStream<Message> {
        do {
            return try await connection.signals(matching: rule)
        } catch {
            throw translate(error)
        }
    }

    /// How long a call may go unanswered before pbctl gives up on the server (D-Bus's usual
    /// 25 s): a server that holds its name but does not answer (stopped, hung) must not hang
    /// a script for ever. `WriteItemsFd` has none: its answer comes once the server has read
    /// the whole input, which a slow producer (`tar c / | pbctl copy`) may take hours to give.
    static let answerTimeout: Duration = .seconds(25)

    private func call(_ method: String, _ arguments: [DBusValue] = []) async throws -> [DBusValue] {
        do {
            let timeout = method == "WriteItemsFd" ? nil : Self.answerTimeout
            return try await connection.call(try PasteboardInterface.call(method, arguments), timeout: timeout).arguments()
        } catch {
            throw translate(error)
        }
    }

    /// The contract's errors as `PasteboardError`; anything else means the server is not there
    /// to answer.
    private func translate(_ error: DBusError) -> any Error {
        if let contract = PasteboardInterface.contractError(error) {
            return contract
        }
        if error.name == DBusError.noReplyName {
            return Unreachable(address: address, reason: "pasteboardd did not answer (\(error.message)); if it is stopped or hung, restart it")
        }
        return Unreachable(address: address, reason: PasteboardInterface.unansweredReason(error))
    }
}

/// The server could not be reached: no bus, no server on it, or the connection was lost.
struct Unreachable: Error, CustomStringConvertible {
    /// The bus address that was tried, or nil when none could be found.
    let address: String?
    let reason: String

    var description: String {
        "cannot reach pasteboardd on the bus \(address ?? "(none: DBUS_SESSION_BUS_ADDRESS is not set)"): \(reason)"
    }
}
