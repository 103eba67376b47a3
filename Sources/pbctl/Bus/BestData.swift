import PasteboardModel

/// Reads the best representation of an item: inline when the server allows, through a
/// descriptor when the data is larger than `max-inline-bytes`.
enum BestData {
    /// What `paste` and `watch --exec` look for when no `-t` is given: text first, else
    /// whatever the item offers first.
    static let defaultTypes = ["text/plain;charset=utf-8", "text/plain", "application/octet-stream"]

    enum Result: Sendable {
        case bytes([UInt8])
        case descriptor(Int32)
    }

    static func read(_ server: Server, name: String, item: UInt32, types: [String], expect: UInt64 = 0) async throws -> Result {
        do {
            return .bytes(try await server.readBest(name, item: item, types: types, expect: expect))
        } catch let error as PasteboardError where error.code == .tooLarge {
            let (count, items) = try await server.items(name)
            guard Int(item) < items.count else { throw PasteboardError.noSuchItem("'\(name)' has no item \(item)") }
            if expect != 0, count != expect { throw PasteboardError.stale("'\(name)' changed meanwhile") }
            let offered = items[Int(item)].types.compactMap { try? PasteboardType(validating: $0) }
            for request in types {
                guard let wanted = try? PasteboardType(validating: request) else { continue }
                if let index = MIMEDatabase.shared.indexOfBestMatch(for: wanted, in: offered) {
                    return .descriptor(try await server.readFd(name, item: item, type: offered[index].rawValue, expect: count))
                }
            }
            throw error
        }
    }
}
