import Synchronization

/// Slots for work that holds server resources while a client decides how fast it goes (a
/// `WriteItemsFd` read, a `ReadFd` feeder): at most `limit` in all, and a quarter of it (at
/// least one) per holder, so that one client that starts them and never feeds or reads them
/// leaves the others room.
final class TransferSlots<Holder: Hashable & Sendable>: Sendable {
    /// Why a slot was refused.
    enum Refusal: Error {
        /// The holder has ``perHolder`` already.
        case holderFull(UInt64)
        /// All ``limit`` are taken.
        case allTaken(UInt64)
    }

    let limit: UInt64
    /// Slots taken, by holder (none for a holder with none): at most a few hundred entries,
    /// so the total is counted when needed rather than kept beside them.
    private let taken = Mutex<[Holder: UInt64]>([:])

    init(limit: UInt64) {
        self.limit = limit
    }

    /// How many are taken.
    var inUse: UInt64 { taken.withLock { Self.total(of: $0) } }

    /// How many one holder may have at once.
    var perHolder: UInt64 { max(1, limit / 4) }

    /// Takes a slot for `holder`, or says why not.
    func take(for holder: Holder) throws(Refusal) {
        let refusal: Refusal? = taken.withLock { taken in
            let own = taken[holder, default: 0]
            guard own < perHolder else { return .holderFull(perHolder) }
            guard Self.total(of: taken) < limit else { return .allTaken(limit) }
            taken[holder] = own + 1
            return nil
        }
        if let refusal { throw refusal }
    }

    private static func total(of taken: [Holder: UInt64]) -> UInt64 {
        taken.values.reduce(0, +)
    }

    /// Gives back a slot `holder` took.
    func release(_ holder: Holder) {
        taken.withLock { taken in
            let left = taken[holder, default: 1] - 1
            taken[holder] = left == 0 ? nil : left
        }
    }
}
