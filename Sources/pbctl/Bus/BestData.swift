import PasteboardInterface
import PasteboardModel

#if canImport(Glibc)
import Glibc
#endif

/// Reads the best representation on a pasteboard: inline when the server allows, through a
/// descriptor when the data is larger than `max-inline-bytes`.
enum BestData {
    /// What `paste` and `watch --exec` look for when no `-t` is given: text first, else
    /// whatever the item offers first.
    static let defaultTypes = ["text/plain;charset=utf-8", "text/plain", "application/octet-stream"]

    enum Result: Sendable {
        case bytes([UInt8])
        /// The data through a descriptor, and its size as `Items` gave it (-1 if unknown): a
        /// pipe that ends before it was cut short (the server stopped while sending it).
        case descriptor(Int32, size: Int64)
    }

    /// How many times a read of whatever is current starts again when the pasteboard changes
    /// between its steps (listing the items, then reading at their count).
    static let maxAttempts = 64

    /// The data of item `item` that best satisfies the first entry of `types` it satisfies.
    /// Without an item, the first entry of `types` that any item satisfies wins, from the
    /// first item that satisfies it: item 0 is read at once, and the other items are looked
    /// at only when its answer is not for the first entry.
    ///
    /// Without `expect` (a read of whatever is current, as `paste`'s), a change landing
    /// between the steps of a read (`Stale`) starts it again, as `xclip -o` or `wl-paste`
    /// would read the new contents: a copy while a large paste starts is not an error of the
    /// user's. With `expect`, `Stale` is the answer.
    static func read(_ server: Server, name: String, item: UInt32?, types: [String], expect: UInt64 = 0) async throws -> Result {
        guard expect == 0 else { return try await readOnce(server, name: name, item: item, types: types, expect: expect) }
        var attempt = 1
        while true {
            do {
                return try await readOnce(server, name: name, item: item, types: types, expect: 0)
            } catch let error as PasteboardError where error.code == .stale && attempt < maxAttempts {
                attempt += 1
            }
        }
    }

    private static func readOnce(_ server: Server, name: String, item: UInt32?, types: [String], expect: UInt64) async throws -> Result {
        if let item {
            return try await read(server, name: name, item: item, types: types, expect: expect).result
        }
        var first: (result: Result, type: PasteboardType)? = nil
        var refusal: PasteboardError? = nil
        do {
            first = try await read(server, name: name, item: 0, types: types, expect: expect)
        } catch let error as PasteboardError where error.code == .noSuchType {
            refusal = error
        }
        // Item 0's answer is the first entry itself, or the only item: done. (The
        // shared-mime-info database, which takes longer to read than a paste takes, is not
        // needed for either.)
        let top = types.first.flatMap { try? PasteboardType(validating: $0) }
        if let first, first.type == top { return first.result }
        do {
            let (count, items) = try await server.items(name)
            if expect != 0, count != expect { throw PasteboardError.stale("'\(name)' changed meanwhile") }
            if items.count <= 1 {
                if let first { return first.result }
                throw refusal ?? PasteboardError.noSuchItem("'\(name)' is empty")
            }
            if let first, let top, MIMEDatabase.shared.conforms(first.type, to: top) { return first.result }
            let offered = items.map { $0.types.compactMap { try? PasteboardType(validating: $0) } }
            var later: UInt32? = nil
            for request in types {
                guard let wanted = try? PasteboardType(validating: request) else { continue }
                guard let index = offered.indices.first(where: { MIMEDatabase.shared.indexOfBestMatch(for: wanted, in: offered[$0]) != nil }) else { continue }
                if index == 0, let first { return first.result }
                later = UInt32(index)
                break
            }
            guard let later else {
                if let first { return first.result }
                throw PasteboardError.noSuchType("no item of '\(name)' has anything conforming to \(types.joined(separator: ", "))")
            }
            first.map(discard)
            first = nil
            return try await read(server, name: name, item: later, types: types, expect: count).result
        } catch {
            // Item 0's data goes unused: its descriptor must not stay open (a long `watch
            // --exec` would gather them).
            first.map(discard)
            throw error
        }
    }

    /// Closes the descriptor of data that goes unused.
    private static func discard(_ read: (result: Result, type: PasteboardType)) {
        if case .descriptor(let fd, _) = read.result { close(fd) }
    }

    /// The data of one item, and the item's type it is.
    private static func read(_ server: Server, name: String, item: UInt32, types: [String], expect: UInt64) async throws -> (result: Result, type: PasteboardType) {
        do {
            let (type, bytes) = try await server.readBest(name, item: item, types: types, expect: expect)
            return (.bytes(bytes), (try? PasteboardType(validating: type)) ?? .octetStream)
        } catch let error as PasteboardError where error.code == .tooLarge {
            let (count, items) = try await server.items(name)
            guard Int(item) < items.count else { throw PasteboardError.noSuchItem("'\(name)' has no item \(item)") }
            if expect != 0, count != expect { throw PasteboardError.stale("'\(name)' changed meanwhile") }
            let offered = items[Int(item)].types.compactMap { try? PasteboardType(validating: $0) }
            for request in types {
                guard let wanted = try? PasteboardType(validating: request) else { continue }
                if let index = MIMEDatabase.shared.indexOfBestMatch(for: wanted, in: offered) {
                    let sizes = items[Int(item)].sizes
                    let size = index < sizes.count ? sizes[index] : -1
                    return (.descriptor(try await server.readFd(name, item: item, type: offered[index].rawValue, expect: count), size: size), offered[index])
                }
            }
            throw error
        }
    }
}
