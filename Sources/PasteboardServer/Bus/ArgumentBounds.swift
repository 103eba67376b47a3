import DBus
import PasteboardModel

/// How many elements a call's arrays may hold, checked by walking the message before any of it
/// is decoded.
///
/// Every array of the interface has a bound in the limits: the items of a write (`max-items`),
/// the types of an item (`max-types-per-item`), the types a read asks for
/// (`max-request-types`), the options (six keys, each given once). Decoding a call costs the
/// bus thread a value for every element, and a matching read a conformance lookup for every
/// type asked for, so a call of a million types would hold every other client for seconds
/// before the limit refused it. The walk stops at the first element past a bound, with that
/// limit's error (the full check, meeting the faults of a call in the same order, would mostly
/// give the same one).
struct ArgumentBounds: Sendable {
    let maxItems: Int
    let maxTypesPerItem: Int
    let maxRequestTypes: Int

    init(_ limits: Limits) {
        maxItems = Self.clamped(limits.maxItems)
        maxTypesPerItem = Self.clamped(limits.maxTypesPerItem)
        maxRequestTypes = Self.clamped(limits.maxRequestTypes)
    }

    private static func clamped(_ limit: UInt64) -> Int {
        Int(clamping: limit)
    }

    /// Walks the arguments of a `method` call (its signature already checked), throwing at the
    /// first array past its bound. What the full check looks at first is looked at first here
    /// too (the name, then a write's options, then its items in turn), so the same error wins.
    func check(_ message: Message, _ method: InterfaceMethod) throws(PasteboardError) {
        switch method {
        case .writeItems, .writeItemsFd, .writePromised:
            try read(message) { reader throws(DBusError) in
                try reader.skip()
                // Unknown and repeated keys are refused as they are met.
                _ = try DBusError.carrying { () throws(PasteboardError) in try Arguments.writeOptions(&reader) }
            }
            try read(message) { reader throws(DBusError) in
                var index = 0
                try reader.forEach { item throws(DBusError) in
                    try DBusError.carrying { () throws(PasteboardError) in try items(index + 1) }
                    var types = 0
                    try item.forEach { _ throws(DBusError) in
                        types += 1
                        try DBusError.carrying { () throws(PasteboardError) in try self.types(types, inItem: index) }
                    }
                    index += 1
                }
            }
        case .availableType, .canRead, .readBest:
            try read(message) { reader throws(DBusError) in
                if method == .readBest { _ = try reader.uint32() }
                var count = 0
                try reader.forEach { _ throws(DBusError) in
                    count += 1
                    try DBusError.carrying { () throws(PasteboardError) in try requestTypes(count, method) }
                }
            }
        default:
            return
        }
    }

    /// Reads the message with `body`, after its first argument, the name, is checked.
    private func read(_ message: Message, _ body: (inout ArgumentReader) throws(DBusError) -> Void) throws(PasteboardError) {
        do throws(DBusError) {
            try message.readArguments { reader throws(DBusError) in
                let name = try reader.string()
                try DBusError.carrying { () throws(PasteboardError) in _ = try PasteboardName(validating: name) }
                try body(&reader)
            }
        } catch {
            throw PasteboardError(error)
        }
    }

    /// Refuses the `count`th item of a write past `max-items`.
    func items(_ count: Int) throws(PasteboardError) {
        guard count > maxItems else { return }
        throw .quotaExceeded("the call writes more than \(maxItems) items; the limit is \(maxItems) (max-items)")
    }

    /// Refuses the `count`th type of item `index` past `max-types-per-item`.
    func types(_ count: Int, inItem index: Int) throws(PasteboardError) {
        guard count > maxTypesPerItem else { return }
        throw .tooLarge("item \(index) has more than \(maxTypesPerItem) types; the limit is \(maxTypesPerItem) (max-types-per-item)")
    }

    /// Refuses the `count`th type asked for past `max-request-types`.
    func requestTypes(_ count: Int, _ method: InterfaceMethod) throws(PasteboardError) {
        guard count > maxRequestTypes else { return }
        throw .invalidArgument("\(method.rawValue) asks for more than \(maxRequestTypes) types; the limit is \(maxRequestTypes) (max-request-types): ask for the types you can read, richest first")
    }
}
