import DBus
import PasteboardModel
import Synchronization

/// The `Changed` (and `Removed`) signals that announce changes, and the `PropertiesChanged`
/// that follows a change that listed or unlisted a name.
///
/// `Changed` lies on the path from every write to every listener, and appending its three
/// arguments through libdbus costs more than the rest of making it. Writes to one pasteboard
/// mostly repeat its types, so the last `Changed` of recently changed pasteboards is kept as a
/// ``CountedMessage``: the next change with the same name and types copies it with the new
/// count. The templates sit in a fixed number of slots chosen by name, one each, so that
/// memory stays bounded whatever the number of pasteboards.
final class ChangeSignals: Sendable {
    private struct Recent {
        let name: PasteboardName
        let types: [PasteboardType]
        let changed: CountedMessage
    }

    static let slotCount = 256
    private let recent = Mutex<[Recent?]>(Array(repeating: nil, count: slotCount))
    private let path: String
    private let interface: String
    private let removedTemplate: Message
    private let propertiesTemplate: Message

    /// Signals emitted from `path`, of `interface`.
    init(path: String, interface: String) {
        self.path = path
        self.interface = interface
        removedTemplate = try! Message.signal(path: path, interface: interface, name: "Removed")
        propertiesTemplate = try! Message.signal(path: path, interface: "org.freedesktop.DBus.Properties", name: "PropertiesChanged")
    }

    /// `Changed` for `change`, followed by `Removed` when it was a `Remove`, and by
    /// `PropertiesChanged` invalidating `Pasteboards` when it listed or unlisted the name.
    func messages(for change: Change) -> [Message] {
        var messages: [Message] = []
        if let changed = changed(change) {
            messages.append(changed)
        }
        if change.removed, let removed = try? removedTemplate.copy(appending: [.string(change.name.rawValue)]) {
            messages.append(removed)
        }
        if change.relisted, let listing = propertiesChanged(invalidating: ["Pasteboards"]) {
            messages.append(listing)
        }
        return messages
    }

    /// `PropertiesChanged` of `interface` that invalidates `properties` without their values:
    /// the listing can be long, and a client that caches properties (GDBus, zbus) reads it
    /// again when it wants it.
    func propertiesChanged(invalidating properties: [String]) -> Message? {
        try? propertiesTemplate.copy(appending: [.string(interface), .dictionary(key: "s", value: "v", []), .strings(properties)])
    }

    private func changed(_ change: Change) -> Message? {
        let slot = Int(UInt(bitPattern: change.name.hashValue) % UInt(Self.slotCount))
        let kept = recent.withLock { recent in
            recent[slot].flatMap { $0.name == change.name && Self.sameSpelling($0.types, change.types) ? $0.changed : nil }
        }
        if let kept {
            return kept.copy(count: change.count)
        }
        let arguments: [DBusValue] = [.string(change.name.rawValue), .uint64(change.count), .strings(change.types.map(\.rawValue))]
        guard let made = try? Message.signal(path: path, interface: interface, name: "Changed", arguments: arguments) else { return nil }
        // The message made is kept unsent, as the template, and a copy of it is sent.
        guard let counted = CountedMessage(made) else { return made }
        recent.withLock { $0[slot] = Recent(name: change.name, types: change.types, changed: counted) }
        return counted.copy(count: change.count)
    }

    /// Whether two lists of types are written alike. Types compare equal in any spelling
    /// (`Text/Plain` is `text/plain`), but `Changed` carries them as `Types` returns them,
    /// as the new contents spell them.
    private static func sameSpelling(_ kept: [PasteboardType], _ new: [PasteboardType]) -> Bool {
        kept.elementsEqual(new) { $0.rawValue == $1.rawValue }
    }
}
