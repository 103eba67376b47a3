import DBus
import PasteboardModel

/// The arguments of the two calls clients make most, `WriteItems` and `ReadData`, read
/// straight from the message (``Message/readArguments(_:)``) on the bus thread, or taken
/// from decoded ``DBusValue``s on the service queue; either way answered by the same code.
///
/// Reading them straight skips building a ``DBusValue`` tree (an allocation for most values,
/// a string for each container's signature) for every call; the rarer methods, and these
/// when they take the queue, are decoded the general way.
struct InlineWrite {
    let name: PasteboardName
    /// Each item's types, as given, and bytes, in order. The types are checked with the sizes,
    /// one representation at a time (``PasteboardObject/inlineItems(_:payloads:)``), after the
    /// options: so is every `WriteItems`, whichever way it was read, and the same error wins.
    let items: [[(type: String, bytes: [UInt8])]]
    let options: WriteOptions

    /// `(s name, aa{say} items, a{sv} options)`, read from the message; nil when a
    /// representation holds more than `largest` bytes, or all of them more than `total`, whose
    /// bytes are then not copied (the write is not one for the bus thread). Reading stops at the
    /// first item or type past `bounds`, with its error.
    static func read(_ message: Message, largest: Int = .max, total: Int = .max, bounds: ArgumentBounds? = nil) throws(PasteboardError) -> InlineWrite? {
        var name: PasteboardName?
        var items: [[(type: String, bytes: [UInt8])]] = []
        var options = WriteOptions()
        var room = total
        var fits = true
        do throws(DBusError) {
            try message.readArguments { reader throws(DBusError) in
                let text = try reader.string()
                name = try DBusError.carrying { () throws(PasteboardError) in try PasteboardName(validating: text) }
                try reader.forEach { item throws(DBusError) in
                    try DBusError.carrying { () throws(PasteboardError) in try bounds?.items(items.count + 1) }
                    var representations: [(type: String, bytes: [UInt8])] = []
                    var types = 0
                    try item.forEach { entry throws(DBusError) in
                        types += 1
                        try DBusError.carrying { () throws(PasteboardError) in try bounds?.types(types, inItem: items.count) }
                        let type = try entry.string()
                        guard fits, let bytes = try entry.bytes(atMost: min(largest, room)) else {
                            fits = false
                            return
                        }
                        room -= bytes.count
                        representations.append((type, bytes))
                    }
                    items.append(representations)
                }
                options = try DBusError.carrying { () throws(PasteboardError) in try Arguments.writeOptions(&reader) }
            }
        } catch {
            throw PasteboardError(error)
        }
        guard fits, let name else { return nil }
        return InlineWrite(name: name, items: items, options: options)
    }

    private init(name: PasteboardName, items: [[(type: String, bytes: [UInt8])]], options: WriteOptions) {
        self.name = name
        self.items = items
        self.options = options
    }

    /// The same, from decoded values.
    init(_ arguments: [DBusValue]) throws(PasteboardError) {
        name = try Arguments.name(arguments[0])
        items = (arguments[1].arrayValue ?? []).map { element in
            (element.dictionaryEntries ?? []).map { key, data in (key.stringValue ?? "", data.bytesValue ?? []) }
        }
        options = try Arguments.writeOptions(arguments[2])
    }
}

/// `ReadData` (and `ReadFd`): `(s name, u item, s type, t expect)`.
struct ReadRequest {
    let name: PasteboardName
    let item: UInt32
    let type: PasteboardType
    let expect: UInt64

    /// Read from the message.
    init(_ message: Message) throws(PasteboardError) {
        let read: (String, UInt32, String, UInt64)
        do throws(DBusError) {
            read = try message.readArguments { reader throws(DBusError) in
                (try reader.string(), try reader.uint32(), try reader.string(), try reader.uint64())
            }
        } catch {
            throw PasteboardError(error)
        }
        name = try PasteboardName(validating: read.0)
        item = read.1
        type = try PasteboardType(validating: read.2)
        expect = read.3
    }

    /// From decoded values.
    init(_ arguments: [DBusValue]) throws(PasteboardError) {
        name = try Arguments.name(arguments[0])
        item = arguments[1].uint32Value ?? 0
        type = try Arguments.type(arguments[2])
        expect = arguments[3].uint64Value ?? 0
    }
}
