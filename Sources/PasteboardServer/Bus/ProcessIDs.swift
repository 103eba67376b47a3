import DBus
import Synchronization

/// The process behind each client connection, by the bus's credentials
/// (`GetConnectionUnixProcessID`), remembered because unique names are never reused.
final class ProcessIDs: Sendable {
    private let known = Mutex<[String: UInt32]>([:])
    private static let capacity = 4096

    /// The process of the connection `uniqueName`, or nil when the bus does not know it (the
    /// client has left).
    func pid(of uniqueName: String, on connection: Connection) async -> UInt32? {
        if let pid = remembered(uniqueName) { return pid }
        guard let pid = try? await connection.unixProcessID(of: uniqueName) else { return nil }
        known.withLock { known in
            if known.count >= Self.capacity { known.removeAll(keepingCapacity: true) }
            known[uniqueName] = pid
        }
        return pid
    }

    /// Whom a descriptor transfer of `uniqueName`'s counts against: its process, or its
    /// connection when the bus cannot say.
    func transferClient(of uniqueName: String, on connection: Connection) async -> TransferClient {
        await pid(of: uniqueName, on: connection).map { .process($0) } ?? .connection(uniqueName)
    }

    /// The process of `uniqueName` if it was looked up before: no round trip, no waiting.
    func remembered(_ uniqueName: String) -> UInt32? {
        known.withLock { $0[uniqueName] }
    }
}
