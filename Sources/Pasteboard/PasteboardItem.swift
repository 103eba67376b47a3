import Foundation

/// One item of a pasteboard, as `pasteboardItems` returned it: its types, and its data read on
/// demand from the generation it was listed in.
///
/// Reading fails with `PasteboardError` (code `.stale`) once the pasteboard has changed, so an
/// item never mixes two generations.
public struct PasteboardItem: Sendable {
    let pasteboard: Pasteboard
    /// The item's position on the pasteboard, from 0.
    public let index: Int
    /// The change count the item belongs to, as ``Pasteboard/changeCount`` counts.
    public var changeCount: Int { Int(clamping: generation) }
    /// The change count as the server has it: what each read expects.
    let generation: UInt64
    let rawTypes: [String]
    let sizes: [Int64]

    /// The item's types, richest first.
    public var types: [UTType] { rawTypes.map(UTType.types(for:)) }

    /// The data of exactly `type` (any spelling of it), or nil when the item does not have it.
    public func data(forType type: UTType) async throws -> Data? {
        guard let offered = rawTypes.first(where: { PasteboardTypeMatch.same($0, type.pasteboardType) }) else { return nil }
        return try await PayloadTransfer.read(pasteboard.name.rawValue, item: UInt32(index), type: offered, expect: generation, proxy: try pasteboard.proxy)
    }

    /// The text of `type` (or, for a text type, of the item's type that conforms to it most
    /// closely: UTF-8 text serves `.plainText`, as ``Pasteboard/string(forType:)`` has it),
    /// decoded as that type says (UTF-16 for `charset=utf-16`, else UTF-8), or nil.
    public func string(forType type: UTType = .utf8PlainText) async throws -> String? {
        let wanted = type.pasteboardType
        guard let offered = rawTypes.first(where: { PasteboardTypeMatch.same($0, wanted) }) ?? Self.closestText(in: rawTypes, to: type) else { return nil }
        let data = try await PayloadTransfer.read(pasteboard.name.rawValue, item: UInt32(index), type: offered, expect: generation, proxy: try pasteboard.proxy)
        return String.decodingText(data, offeredAs: offered)
    }

    /// For a text `type`, which of `types` (an item's, as the server names them) conforms to
    /// it most closely, the first of those alike; nil when none does, or `type` is not text.
    /// Chosen here rather than with `ReadBest`, so that text too large to travel inline is
    /// read by descriptor.
    static func closestText(in types: [String], to type: UTType) -> String? {
        guard type.conforms(to: .text) || type.conforms(to: .plainText) else { return nil }
        let distances = types.map { UTType.types(for: $0).conformanceDistance(to: type) }
        guard let best = distances.indices.filter({ distances[$0] != nil }).min(by: { distances[$0]! < distances[$1]! }) else { return nil }
        return types[best]
    }

    /// The size in bytes of each type's data, in type order (-1: promised, not yet provided).
    public var sizesByType: [(type: UTType, size: Int)] {
        zip(types, sizes).map { ($0, Int($1)) }
    }
}
