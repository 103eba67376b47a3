import DBus

/// One item as `Items` describes it.
public struct PasteboardItemInfo: Sendable, Equatable {
    /// The item's types, richest first.
    public var types: [String]
    /// In type order; -1 for promised data not yet provided.
    public var sizes: [Int64]
    /// The contents were written `concealed` (a secret): a clipboard manager should not record
    /// them. False from a server that does not say.
    public var isConcealed: Bool
    /// Only the writing process may read this item's data.
    public var isOwnerOnly: Bool

    public init(types: [String], sizes: [Int64], isConcealed: Bool = false, isOwnerOnly: Bool = false) {
        self.types = types
        self.sizes = sizes
        self.isConcealed = isConcealed
        self.isOwnerOnly = isOwnerOnly
    }

    /// The items of an `Items` reply (`t aa{sv}`), with the change count they belong to.
    public static func decode(_ reply: [DBusValue]) -> (count: UInt64, items: [PasteboardItemInfo]) {
        let items = (reply.dropFirst().first?.arrayValue ?? []).map { item in
            var info = PasteboardItemInfo(types: [], sizes: [])
            for (key, value) in item.dictionaryEntries ?? [] {
                switch key.stringValue {
                case "types": info.types = value.variantValue?.stringArrayValue ?? []
                case "sizes": info.sizes = value.variantValue?.arrayValue?.compactMap(\.int64Value) ?? []
                case "concealed": info.isConcealed = value.variantValue?.boolValue ?? false
                case "owner-only": info.isOwnerOnly = value.variantValue?.boolValue ?? false
                default: break
                }
            }
            return info
        }
        return (reply.first?.uint64Value ?? 0, items)
    }
}
