import DBus
import Foundation
import Synchronization

/// Produces the data of a promised item on demand, as `NSPasteboardItemDataProvider` does:
/// `item` is the item's position among those promised, `type` the type asked for.
public typealias PasteboardDataProvider = @Sendable (_ item: Int, _ type: UTType) async throws -> Data

/// The `org.pasteboardd.Provider1` object of this process: answers the server's `Provide` calls
/// from the providers of the promises this process made, one per pasteboard (the latest wins).
final class DataProviders: DBusObject {
    static let path = "/org/pasteboardd/Provider1"
    static let interface = "org.pasteboardd.Provider1"

    let introspectionXML = """
        <!DOCTYPE node PUBLIC "-//freedesktop//DTD D-BUS Object Introspection 1.0//EN" "http://www.freedesktop.org/standards/dbus/1.0/introspect.dtd">
        <node>
          <interface name="org.pasteboardd.Provider1">
            <method name="Provide">
              <arg name="name" type="s" direction="in"/>
              <arg name="count" type="t" direction="in"/>
              <arg name="item" type="u" direction="in"/>
              <arg name="type" type="s" direction="in"/>
              <arg name="data" type="ay" direction="out"/>
            </method>
          </interface>
        </node>
        """

    private struct Registration {
        /// Tells this registration from a later one for the same name.
        let token: UInt64
        /// The change count of the promise, once the server has answered; nil before.
        var count: UInt64?
        let provider: PasteboardDataProvider
    }
    private struct State {
        var nextToken: UInt64 = 0
        var registrations: [String: Registration] = [:]
    }
    private let state = Mutex(State())

    /// The providers object of `proxy`'s connection, exported on first use.
    static func on(_ proxy: PasteboardProxy) throws -> DataProviders {
        try proxy.dataProviders.withLock { exported in
            if let exported { return exported }
            let providers = DataProviders()
            try proxy.connection.export(providers, at: path)
            exported = providers
            return providers
        }
    }

    /// Makes `provider` answer for `name`, replacing any earlier one, and returns the token
    /// that ``confirm(_:token:count:)`` and ``remove(_:token:)`` take.
    func register(_ name: String, _ provider: @escaping PasteboardDataProvider) -> UInt64 {
        state.withLock { state in
            state.nextToken += 1
            state.registrations[name] = Registration(token: state.nextToken, count: nil, provider: provider)
            return state.nextToken
        }
    }

    /// Ties the registration to the change count the server gave it, unless a later
    /// registration has replaced it.
    func confirm(_ name: String, token: UInt64, count: UInt64) {
        state.withLock { state in
            guard state.registrations[name]?.token == token else { return }
            state.registrations[name]?.count = count
        }
    }

    /// Drops the registration (its write failed), unless a later one has replaced it.
    func remove(_ name: String, token: UInt64) {
        state.withLock { state in
            guard state.registrations[name]?.token == token else { return }
            state.registrations[name] = nil
        }
    }

    func handle(_ call: MethodCall) {
        guard call.interface == nil || call.interface == Self.interface, call.member == "Provide" else {
            return call.fail(.unknownMethod("\(Self.interface) has only Provide"))
        }
        let arguments = call.arguments
        guard call.signature == "stus", let name = arguments[0].stringValue, let count = arguments[1].uint64Value,
              let item = arguments[2].uint32Value, let type = arguments[3].stringValue else {
            return call.fail(.invalidArgs("Provide takes (s name, t count, u item, s type)"))
        }
        let registration = state.withLock { $0.registrations[name] }
        guard let registration, registration.count == nil || registration.count == count else {
            return call.fail(.failed("this process no longer provides '\(name)' at change \(count)"))
        }
        Task {
            do {
                let data = try await registration.provider(Int(item), UTType.types(for: type))
                call.reply([.bytes(Array(data))])
            } catch {
                call.fail(.failed("the provider of '\(name)' failed: \(error)"))
            }
        }
    }

    func properties(of interface: String) async throws(DBusError) -> [(name: String, value: DBusValue)] { [] }
}

extension Pasteboard {
    /// Replaces the contents with items whose data is produced only when someone reads it, as
    /// `NSPasteboardItem.setDataProvider(_:forTypes:)` does.
    ///
    /// ```swift
    /// try await Pasteboard.general.writePromised([[.png, .tiff]]) { item, type in
    ///     try await renderImage(as: type)      // runs on the first read of each type
    /// }
    /// ```
    ///
    /// The server asks this process once per type and keeps the answer. If this process has
    /// quit, or does not answer in time, readers get `PasteboardError` `.providerFailed`.
    ///
    /// - Parameters:
    ///   - items: Each item's types, richest first.
    ///   - provider: Produces one item's data for one type.
    /// - Returns: The new change count.
    @discardableResult
    public func writePromised(_ items: [[UTType]], provider: @escaping PasteboardDataProvider) async throws -> Int {
        let proxy = try proxy
        let providers = try DataProviders.on(proxy)
        // Registered before the call: the first Provide may arrive right after the reply.
        let token = providers.register(name.rawValue, provider)
        let count: UInt64
        do {
            // Replaces the contents: what this object added since a clear is gone.
            count = try await writeReplacing { try await proxy.writePromised(name.rawValue, items.map { $0.map(\.pasteboardType) }) }
        } catch {
            providers.remove(name.rawValue, token: token)
            throw error
        }
        providers.confirm(name.rawValue, token: token, count: count)
        return Int(clamping: count)
    }
}

extension PasteboardProxy {
    /// `WritePromised`: types now, data from this connection's `Provide` on first read.
    @discardableResult
    public func writePromised(_ name: String, _ itemTypes: [[String]], options: WriteOptions = WriteOptions()) async throws -> UInt64 {
        let reply = try await callMethod("WritePromised", [.string(name), .array(element: "as", itemTypes.map { .strings($0) }), options.encoded])
        return reply.first?.uint64Value ?? 0
    }
}
