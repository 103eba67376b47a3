import Foundation

/// What one ``Pasteboard`` object wrote since its last `clearContents()`: AppKit's model of the
/// pasteboard's owner, which after `clearContents()` adds to the contents rather than replacing
/// them, `setData(_:forType:)` a type of the first item and `writeObjects(_:)` items after those
/// written.
///
/// The session's state on a ``Pasteboard`` object: none (never cleared, or ended by a write that
/// replaced the contents), a ``WriteSession``, or lost to another program's change, after which
/// additions write nothing until the next clear, as AppKit's do for an app that is no longer
/// the owner.
enum WriteSessionState: Sendable {
    case none
    case open(WriteSession)
    case lost

    var open: WriteSession? {
        if case .open(let session) = self { session } else { nil }
    }
}

/// Each addition is one write of its own, made on the server with `if-change-count` set to the
/// count of this object's last change. Should another program have changed the pasteboard
/// since (`Conflict`), the session ends and the call returns false, as AppKit's does for an app
/// that is no longer the owner; but for the first addition after the clear, which is made again
/// in place of the contents (see ``Pasteboard/writeAsOwner(options:_:)``).
struct WriteSession: Sendable {
    /// The change count of this object's last change in the session.
    var count: UInt64
    /// The first item's types and data, as `setData` made them; nil once items were written by
    /// ``Pasteboard/writeObjects(_:)`` (the first item's data is then not known here).
    var firstItem: [(type: String, data: Data)]?
    /// Whether anything was added since the clear.
    var hasAdditions = false
    /// The strictest options of the additions so far, which every later one carries.
    var options = Pasteboard.WriteOptions()

    /// A session opened by `clearContents()`, which answered `count`.
    init(clearedAt count: UInt64) {
        self.count = count
        firstItem = []
    }

    /// The first item with `data` as `type`: in place of that type when it has it, else last.
    func firstItem(setting data: Data, as type: String) -> [(type: String, data: Data)]? {
        guard var item = firstItem else { return nil }
        if let index = item.firstIndex(where: { PasteboardTypeMatch.same($0.type, type) }) {
            item[index] = (type, data)
        } else {
            item.append((type, data))
        }
        return item
    }
}
