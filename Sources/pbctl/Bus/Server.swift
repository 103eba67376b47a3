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
            // Replies and `Changed` are taken only from the server, not from another client of
            // the bus in its place; this waits for nothing (see `Connection.followOwner(of:)`).
            connection.followOwner(of: PasteboardInterface.busName)
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
        // One descriptor per type; a message carrying more than the bus takes would cost the
        // connection.
        guard types.count <= Message.maximumDescriptors else {
            throw PasteboardError.invalidArgument(
                "data this large travels by file descriptor, one per type, and a D-Bus message carries at most \(Message.maximumDescriptors): give at most \(Message.maximumDescriptors) types (-t) for it")
        }
        var entries: [(DBusValue, DBusValue)] = []
        for type in types {
            entries.append((.string(type), .unixFD(try PasteboardInterface.descriptor(sending: fd))))
        }
        let item = DBusValue.dictionary(key: "s", value: "h", entries)
        _ = try await call("WriteItemsFd", [.string(name), .array(element: "a{sh}", [item]), options.encoded])
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
        let message: Message
        do {
            message = try Message.methodCall(
                destination: PasteboardInterface.busName, path: PasteboardInterface.objectPath,
                interface: "org.freedesktop.DBus.Properties", method: "Get", arguments: [.string(PasteboardInterface.name), .string(name)])
        } catch {
            throw translate(error)
        }
        return try await reply(to: message, within: Self.answerTimeout).arguments().first?.variantValue?.dictionaryEntries ?? []
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

    /// How often a call not yet answered asks whether the server still answers.
    static let livenessInterval: Duration = .seconds(10)

    /// The server's reply to `message`, however long it takes (a paste waits for the app that
    /// promised the data, a copy's `WriteItemsFd` for the whole input), as long as the server
    /// still answers: every ``livenessInterval`` without a reply, it is asked `Peer.Ping`,
    /// which its bus thread answers whatever its queue is doing. A server stopped or hung
    /// (holding its name, answering nothing) ends the call with ``Unreachable`` once a ping
    /// goes unanswered for ``answerTimeout``, rather than pbctl waiting for ever; a quick
    /// answer costs no ping at all.
    private func answer(to message: Message) async throws -> Message {
        try await withThrowingTaskGroup(of: Message?.self) { group in
            group.addTask { try await self.reply(to: message, within: nil) }
            group.addTask {
                while true {
                    try await Task.sleep(for: Self.livenessInterval)
                    try await self.ping()
                }
            }
            defer { group.cancelAll() }
            // The first to end: the call, or the ping that found no server.
            guard let reply = try await group.next() ?? nil else { throw CancellationError() }
            return reply
        }
    }

    private func ping() async throws {
        let message: Message
        do {
            message = try Message.methodCall(
                destination: PasteboardInterface.busName, path: PasteboardInterface.objectPath,
                interface: "org.freedesktop.DBus.Peer", method: "Ping", autoStart: false)
        } catch {
            throw translate(error)
        }
        _ = try await reply(to: message, within: Self.answerTimeout)
    }

    /// The reply to `message`, waited for at most `timeout` (nil: for ever); the server's
    /// errors as ``translate(_:)`` makes them.
    private func reply(to message: Message, within timeout: Duration?) async throws -> Message {
        do throws(DBusError) {
            return try await connection.call(message, timeout: timeout)
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
        let rule = MatchRule.ownerChanges(of: PasteboardInterface.busName)
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

    /// How long pbctl waits for an answer before it gives up on the server (D-Bus's usual
    /// 25 s): for a call the server answers at once, and for a `Peer.Ping`.
    static let answerTimeout: Duration = .seconds(25)

    /// Whether `method` is a read whose answer may wait on someone else: the app that promised
    /// the data, which the server asks first (for as long as its limits allow).
    static func isPatient(_ method: String) -> Bool {
        method == "ReadBest" || method == "ReadData" || method == "ReadFd"
    }

    /// Calls `method`, and gives up on a server that no longer answers (stopped, or hung while
    /// holding its name) rather than waiting for ever.
    ///
    /// Most calls are answered at once: they get ``answerTimeout``. `WriteItemsFd`'s answer
    /// rightly waits for the whole input: it is watched by ``answer(to:)``. A read that may
    /// wait on a provider gets ``livenessInterval``, and when that passes is asked again under
    /// ``answer(to:)`` (a read changes nothing; the server keeps what the provider gave, so
    /// the second asking takes it up where the first left it): a quick read starts no timer of
    /// the runtime's, whose thread would cost a paste more than the rest of it.
    private func call(_ method: String, _ arguments: [DBusValue] = []) async throws -> [DBusValue] {
        if method == "WriteItemsFd" { return try await answer(to: try message(method, arguments)).arguments() }
        guard Self.isPatient(method) else { return try await reply(to: try message(method, arguments), within: Self.answerTimeout).arguments() }
        do throws(DBusError) {
            return try await connection.call(try PasteboardInterface.call(method, arguments), timeout: Self.livenessInterval).arguments()
        } catch {
            guard error.name == DBusError.noReplyName else { throw translate(error) }
        }
        // A message leaves once: the read is asked again with a new one.
        return try await answer(to: try message(method, arguments)).arguments()
    }

    private func message(_ method: String, _ arguments: [DBusValue]) throws -> Message {
        do throws(DBusError) {
            return try PasteboardInterface.call(method, arguments)
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
        return Unreachable(address: address, reason: PasteboardInterface.unansweredReason(error, onBus: address))
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
