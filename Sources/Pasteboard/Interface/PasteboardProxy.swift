import DBus
import Foundation
@_exported import PasteboardInterface
@_exported import PasteboardModel
import Synchronization

/// The `org.pasteboardd.Pasteboard1` interface, method for method, for clients that want the
/// bus calls themselves (`pbctl` is one). Most Swift code wants ``Pasteboard`` instead.
///
/// ```swift
/// let proxy = try PasteboardProxy.connect()
/// let count = try await proxy.writeItems("general", [[("text/plain;charset=utf-8", Data("hi".utf8))]])
/// let (_, type, data) = try await proxy.readBest("general", item: 0, types: ["text/plain"])
/// ```
///
/// Every method throws `PasteboardError` for the server's answers (with the contract's error
/// names) and ``PasteboardConnectionError`` when the server cannot be reached.
public final class PasteboardProxy: Sendable {
    /// The server's well-known bus name.
    public static let busName = PasteboardInterface.busName
    /// The path of the server's object.
    public static let objectPath = PasteboardInterface.objectPath
    /// The interface of the server's methods and signals.
    public static let interface = PasteboardInterface.name
    /// The write options of the contract.
    public typealias WriteOptions = PasteboardWriteOptions
    /// One item as `Items` describes it.
    public typealias ItemInfo = PasteboardItemInfo
    /// One entry of `History`.
    public typealias HistoryEntry = PasteboardHistoryEntry
    /// One `Changed` signal.
    public typealias Change = PasteboardChangedSignal

    let connection: Connection
    /// This connection's `org.pasteboardd.Provider1` object, once a promise has exported it.
    let dataProviders = Mutex<DataProviders?>(nil)

    /// The bus address in use.
    public var address: String { connection.address }

    /// From here on, a reply to a call is taken only from the server, not from another client
    /// of the bus answering in its place (the bus lets any client send a reply with any
    /// serial, and one watching the bus sees the serials go by), and `Changed` only from the
    /// server (the bus lets anyone send a signal to this connection by name). Nothing waits
    /// for it (see `Connection.followOwner(of:)`).
    init(connection: Connection) {
        self.connection = connection
        connection.followOwner(of: Self.busName)
    }

    /// Connects to the bus at `address`, or to the session bus.
    public static func connect(address: String? = nil) throws(PasteboardConnectionError) -> PasteboardProxy {
        do {
            return PasteboardProxy(connection: try Connection.connect(address: address))
        } catch {
            throw PasteboardConnectionError(address: address ?? Connection.sessionBusAddress(), reason: error.message, dbusErrorName: error.name)
        }
    }

    // MARK: Methods

    /// `ListPasteboards`: every name written and not removed since.
    public func listPasteboards() async throws -> [String] {
        try await listPasteboards(autoStart: true)
    }

    /// ``listPasteboards()``; with `autoStart` false, a stopped server is not started by bus
    /// activation (the call fails instead).
    func listPasteboards(autoStart: Bool) async throws -> [String] {
        try await call("ListPasteboards", autoStart: autoStart).first?.stringArrayValue ?? []
    }

    /// `ChangeCount`: the pasteboard's change count, 0 for a name never written.
    public func changeCount(_ name: String) async throws -> UInt64 {
        try await call("ChangeCount", [.string(name)]).first?.uint64Value ?? 0
    }

    /// `ClearContents`: empties the pasteboard and returns the new change count.
    @discardableResult
    public func clearContents(_ name: String) async throws -> UInt64 {
        try await call("ClearContents", [.string(name)]).first?.uint64Value ?? 0
    }

    /// Replaces (or appends to) the contents with items whose data travels inline.
    @discardableResult
    public func writeItems(_ name: String, _ items: [[(type: String, data: Data)]], options: WriteOptions = WriteOptions()) async throws -> UInt64 {
        let encoded: [DBusValue] = items.map { item in
            .dictionary(key: "s", value: "ay", item.map { (.string($0.type), .bytes(Array($0.data))) })
        }
        return try await call("WriteItems", [.string(name), .array(element: "a{say}", encoded), options.encoded]).first?.uint64Value ?? 0
    }

    /// Replaces (or appends to) the contents with items whose data the server reads from
    /// descriptors, each to its end. Pass the same descriptor for several types to offer the
    /// same bytes under each.
    @discardableResult
    public func writeItemsFd(_ name: String, _ items: [[(type: String, fd: Int32)]], options: WriteOptions = WriteOptions()) async throws -> UInt64 {
        var encoded: [DBusValue] = []
        for item in items {
            var entries: [(DBusValue, DBusValue)] = []
            for (type, fd) in item {
                // Marshalling duplicates the descriptor; the caller keeps its own.
                entries.append((.string(type), .unixFD(try PasteboardInterface.descriptor(sending: fd))))
            }
            encoded.append(.dictionary(key: "s", value: "h", entries))
        }
        return try await call("WriteItemsFd", [.string(name), .array(element: "a{sh}", encoded), options.encoded]).first?.uint64Value ?? 0
    }

    /// `Types`: every type of every item, first item first, no repeats, with the change count
    /// they belong to.
    public func types(_ name: String) async throws -> (count: UInt64, types: [String]) {
        try await types(name, autoStart: true)
    }

    /// ``types(_:)``; with `autoStart` false, a stopped server is not started by bus activation
    /// (the call fails instead).
    func types(_ name: String, autoStart: Bool) async throws -> (count: UInt64, types: [String]) {
        let reply = try await call("Types", [.string(name)], autoStart: autoStart)
        return (reply.first?.uint64Value ?? 0, reply.dropFirst().first?.stringArrayValue ?? [])
    }

    /// `Items`: each item's types and sizes, with the change count they belong to.
    public func items(_ name: String) async throws -> (count: UInt64, items: [ItemInfo]) {
        PasteboardItemInfo.decode(try await call("Items", [.string(name)]))
    }

    /// The first of `types` some item satisfies, or nil.
    public func availableType(_ name: String, from types: [String]) async throws -> String? {
        let type = try await call("AvailableType", [.string(name), .strings(types)]).first?.stringValue ?? ""
        return type.isEmpty ? nil : type
    }

    /// `CanRead`: whether some item offers a type conforming to one of `types`.
    public func canRead(_ name: String, types: [String]) async throws -> Bool {
        try await call("CanRead", [.string(name), .strings(types)]).first?.boolValue ?? false
    }

    /// `ReadData`: the data of exactly `type` (any spelling) of item `item`; fails with `Stale`
    /// unless the change count is `expect` (0: any), and with `TooLarge` above
    /// `max-inline-bytes` (read such data with ``readFd(_:item:type:expect:)``).
    public func readData(_ name: String, item: UInt32, type: String, expect: UInt64 = 0) async throws -> (count: UInt64, data: Data) {
        let reply = try await call("ReadData", [.string(name), .uint32(item), .string(type), .uint64(expect)])
        return (reply.first?.uint64Value ?? 0, Data(reply.dropFirst().first?.bytesValue ?? []))
    }

    /// `ReadBest`: the item's own type that best satisfies the first satisfiable entry of
    /// `types` (by conformance), and its data.
    public func readBest(_ name: String, item: UInt32, types: [String], expect: UInt64 = 0) async throws -> (count: UInt64, type: String, data: Data) {
        let reply = try await call("ReadBest", [.string(name), .uint32(item), .strings(types), .uint64(expect)])
        guard reply.count == 3 else { return (0, "", Data()) }
        return (reply[0].uint64Value ?? 0, reply[1].stringValue ?? "", Data(reply[2].bytesValue ?? []))
    }

    /// The data as a descriptor the caller owns and must close.
    public func readFd(_ name: String, item: UInt32, type: String, expect: UInt64 = 0) async throws -> (count: UInt64, fd: Int32) {
        let reply = try await call("ReadFd", [.string(name), .uint32(item), .string(type), .uint64(expect)])
        guard let fd = try PasteboardInterface.receivedDescriptor(reply) else {
            throw PasteboardConnectionError(address: address, reason: "the server sent no descriptor", dbusErrorName: "org.freedesktop.DBus.Error.InvalidSignature")
        }
        return (reply[0].uint64Value ?? 0, fd)
    }

    /// `CreateUnique`: a pasteboard name no one has used.
    public func createUnique() async throws -> String {
        try await call("CreateUnique").first?.stringValue ?? ""
    }

    /// `Remove`: drops the pasteboard's contents and history; does nothing for a name that
    /// holds nothing.
    public func remove(_ name: String) async throws {
        _ = try await call("Remove", [.string(name)])
    }

    /// `History`: the current contents, then earlier ones, newest first (`limit` 0: up to
    /// `history-depth`).
    public func history(_ name: String, limit: UInt32 = 0) async throws -> [HistoryEntry] {
        let reply = try await call("History", [.string(name), .uint32(limit)])
        return HistoryEntry.decode(reply)
    }

    /// `Restore`: makes the generation `count` current again, as a new change; returns the
    /// new change count.
    @discardableResult
    public func restore(_ name: String, count: UInt64) async throws -> UInt64 {
        try await call("Restore", [.string(name), .uint64(count)]).first?.uint64Value ?? 0
    }

    /// The `Limits` property.
    public func limits() async throws -> [String: UInt64] {
        let reply = try await call(interface: "org.freedesktop.DBus.Properties", "Get", [.string(Self.interface), .string("Limits")])
        var limits: [String: UInt64] = [:]
        for (key, value) in reply.first?.variantValue?.dictionaryEntries ?? [] {
            if let key = key.stringValue, let value = value.uint64Value { limits[key] = value }
        }
        return limits
    }

    // MARK: Signals

    /// The `Changed` signals of `name`, or of every pasteboard when `name` is nil, from the
    /// moment this returns.
    public func changes(of name: String? = nil) async throws -> AsyncStream<Change> {
        let rule = MatchRule(sender: Self.busName, path: Self.objectPath, interface: Self.interface, member: "Changed", arg0: name)
        let signals: AsyncStream<Message>
        do {
            signals = try await connection.signals(matching: rule)
        } catch {
            throw translate(error)
        }
        return AsyncStream { continuation in
            let task = Task {
                for await signal in signals {
                    guard let changed = Change(signal) else { continue }
                    continuation.yield(changed)
                }
                continuation.finish()
            }
            continuation.onTermination = { _ in task.cancel() }
        }
    }

    /// Yields whenever the server's bus name gets a new owner (the server started or
    /// restarted); not when the server stops.
    public func serverRestarts() async throws -> AsyncStream<Void> {
        let rule = MatchRule.ownerChanges(of: Self.busName)
        let signals: AsyncStream<Message>
        do {
            signals = try await connection.signals(matching: rule)
        } catch {
            throw translate(error)
        }
        return AsyncStream { continuation in
            let task = Task {
                for await signal in signals {
                    // NameOwnerChanged(name, old owner, new owner): an empty new owner is a stop.
                    let arguments = signal.arguments()
                    guard arguments.count == 3, let owner = arguments[2].stringValue, !owner.isEmpty else { continue }
                    continuation.yield()
                }
                continuation.finish()
            }
            continuation.onTermination = { _ in task.cancel() }
        }
    }

    /// False once the connection to the bus is lost.
    public var isConnected: Bool { connection.isConnected }

    /// Waits until the connection to the bus is lost.
    public func waitUntilDisconnected() async {
        await connection.waitUntilDisconnected()
    }

    // MARK: Plumbing

    /// Calls a method of the interface, translating errors (for extensions in this module).
    func callMethod(_ method: String, _ arguments: [DBusValue]) async throws -> [DBusValue] {
        try await call(method, arguments)
    }

    /// - Parameter autoStart: Whether the bus may start a stopped server to answer the call.
    private func call(
        interface: String = PasteboardProxy.interface, _ method: String, _ arguments: [DBusValue] = [], autoStart: Bool = true
    ) async throws -> [DBusValue] {
        do {
            let message = try Message.methodCall(
                destination: Self.busName, path: Self.objectPath, interface: interface, method: method, arguments: arguments, autoStart: autoStart)
            return try await connection.call(message).arguments()
        } catch {
            throw translate(error)
        }
    }

    private func translate(_ error: DBusError) -> any Error {
        if let contract = PasteboardInterface.contractError(error) {
            return contract
        }
        if error.name == DBusError.cancelledName {
            return CancellationError()
        }
        return PasteboardConnectionError(address: address, reason: PasteboardInterface.unansweredReason(error, onBus: address), dbusErrorName: error.name)
    }
}

