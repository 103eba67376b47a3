import DBus
import PasteboardModel

/// Promised data (`WritePromised`): asked of the writer on first read, off the service queue.
extension PasteboardObject {

    /// Runs `body` with the representation's data at hand: at once, or once the writer of a
    /// promise has provided it (off the service queue: others are answered meanwhile).
    func withData(_ call: Answer, _ representation: Representation, _ body: @escaping @Sendable (Representation) throws(PasteboardError) -> Void) throws(PasteboardError) {
        guard case .promised(let promise) = representation.payload, promise.resolved == nil else {
            return try body(representation)
        }
        Task { [self] in
            do throws(PasteboardError) {
                _ = try await promise.resolve { [self] in try await provide(promise) }
                try body(representation)
            } catch {
                call.fail(error)
            }
        }
    }

    /// Asks a promise's writer for its data (`org.pasteboardd.Provider1.Provide`, or the
    /// desktop app, or the server it was written on), within `provider-timeout-ms`. Data that
    /// would make its item or pasteboard larger than the limits allow is refused, as a write of
    /// it would be: each way admits it (``PasteboardService/admitProvided(_:size:)``) as soon as
    /// its size is known, before it is kept; the admission counts until the promise is resolved,
    /// and is withdrawn when the asking fails.
    func provide(_ promise: Promise) async throws -> Payload {
        do {
            return try await fetch(promise)
        } catch {
            service.withdrawAdmission(of: promise)
            throw error
        }
    }

    private func fetch(_ promise: Promise) async throws -> Payload {
        if promise.provider == DesktopBridge.provider {
            guard let desktop else {
                throw PasteboardError.providerFailed("the \(promise.type) data of '\(promise.name)' was copied by a desktop app, and the desktop bridge is off; copy it again")
            }
            return try await desktop.provide(promise)
        }
        let limits = service.limits
        if promise.bus.hasPrefix(SharedSync.chunksBusPrefix), let shared = service.shared {
            // Large data another server wrote: its size is known before it is read.
            if let size = promise.size { try service.admitProvided(promise, size: size) }
            let payload = try await shared.fetchChunks(of: promise, payloads: service.payloads.volatile(false))
            try service.admitProvided(promise, size: payload.size)
            return payload
        }
        if promise.bus.hasPrefix(SharedSync.remoteBusPrefix) {
            guard let shared = service.shared else {
                throw PasteboardError.providerFailed("the \(promise.type) data of '\(promise.name)' was promised by a writer on another server, which this one no longer shares a store with")
            }
            // Data a writer provides stays off the disk, here as on its own server.
            let payload = try await shared.ask(promise, timeout: .milliseconds(Int64(clamping: limits.providerTimeoutMilliseconds)), payloads: service.payloads.volatile(true))
            try service.admitProvided(promise, size: payload.size)
            return payload
        }
        // Written on an earlier bus: its unique name may be someone else's on this one.
        guard promise.bus == service.busID else {
            throw PasteboardError.providerFailed("the writer of '\(promise.name)' (\(promise.provider)) did not provide its \(promise.type) data: it was on the bus of an earlier session, which has ended")
        }
        let reply: Message
        do {
            let message = try Message.methodCall(
                destination: promise.provider, path: "/org/pasteboardd/Provider1", interface: "org.pasteboardd.Provider1", method: "Provide",
                arguments: [.string(promise.name.rawValue), .uint64(promise.count), .uint32(promise.item), .string(promise.type.rawValue)],
                autoStart: false)
            reply = try await connection.call(message, timeout: .milliseconds(Int64(clamping: limits.providerTimeoutMilliseconds)))
        } catch {
            // NoReply is also the bus's answer when the writer leaves before answering.
            let reason = switch error.name {
            case DBusError.serviceUnknownName, DBusError.nameHasNoOwnerName: "it has left the bus"
            case _ where error.isTimeout: "it did not answer within \(limits.providerTimeoutMilliseconds) ms (provider-timeout-ms)"
            case "org.freedesktop.DBus.Error.NoReply": "it left the bus without answering"
            default: "it answered \(error.name): \(error.message)"
            }
            throw PasteboardError.providerFailed("the writer of '\(promise.name)' (\(promise.provider)) did not provide its \(promise.type) data: \(reason)")
        }
        guard reply.signature == "ay", let bytes = reply.arguments().first?.bytesValue else {
            throw PasteboardError.providerFailed("the writer of '\(promise.name)' answered Provide with '\(reply.signature)' instead of 'ay'")
        }
        // Admitted before it is kept: refused data must not reach the store.
        try service.admitProvided(promise, size: UInt64(bytes.count))
        // Kept as the contents it stands for (stored, to be served after a restart too), unless
        // those must stay off the disk.
        let keeps = service.mayKeep(promise)
        let payload = try service.payloads.volatile(!keeps).payload(for: bytes)
        if keeps { await service.keepProvided(promise, payload) }
        return payload
    }
}
