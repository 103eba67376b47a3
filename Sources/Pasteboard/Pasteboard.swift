import Foundation
import Synchronization

/// A named pasteboard on the pasteboard server, shaped like AppKit's `NSPasteboard` and made
/// `async`.
///
/// ```swift
/// try await Pasteboard.general.clearContents()
/// try await Pasteboard.general.setString("Hello", forType: .utf8PlainText)
/// let text = try await Pasteboard.general.string(forType: .plainText)
///
/// for await change in Pasteboard.general.changes {
///     print(change.changeCount, change.types)
/// }
/// ```
///
/// Every pasteboard of a process shares one connection per bus, opened on first use and
/// reopened after the bus restarts. Methods throw `PasteboardError` for the server's answers
/// (one case per contract error name) and ``PasteboardConnectionError`` when the server cannot
/// be reached.
public final class Pasteboard: Sendable {
    /// A pasteboard's name: `general` and the other standard names, or any name of your own.
    public struct Name: RawRepresentable, Hashable, Sendable, ExpressibleByStringLiteral, CustomStringConvertible {
        /// The name as the server knows it (UTF-8, 1–255 bytes, no control characters; the
        /// server checks).
        public let rawValue: String
        /// The name `rawValue`.
        public init(rawValue: String) { self.rawValue = rawValue }
        /// The name `rawValue`.
        public init(_ rawValue: String) { self.rawValue = rawValue }
        /// A name written as a string literal: `let name: Pasteboard.Name = "scratch"`.
        public init(stringLiteral value: String) { self.rawValue = value }
        /// The name itself.
        public var description: String { rawValue }

        /// `general`: the pasteboard of Copy and Paste.
        public static let general = Name("general")
        /// `find`: the text of the last search, shared between programs.
        public static let find = Name("find")
        /// `drag`: what is being dragged.
        public static let drag = Name("drag")
        /// `font`: copied font settings.
        public static let font = Name("font")
        /// `ruler`: copied paragraph settings.
        public static let ruler = Name("ruler")
    }

    /// The general pasteboard on the session bus: what copy and paste use.
    public static let general = Pasteboard(name: .general)

    /// The pasteboard's name on the server.
    public let name: Name
    /// The bus address, or nil for the session bus.
    public let address: String?
    /// What this object wrote since its last ``clearContents()``; nil when none is open.
    let session = Mutex<WriteSessionState>(.none)
    /// The writes that use ``session``, one at a time.
    let writes = AsyncSerialGate()

    /// The pasteboard `name` on the session bus, or on the bus at `address`.
    public init(name: Name, address: String? = nil) {
        self.name = name
        self.address = address
    }

    /// A pasteboard with a name no other pasteboard has (`withUniqueName()`).
    public static func withUniqueName(address: String? = nil) async throws -> Pasteboard {
        let proxy = try SharedConnection.proxy(address: address)
        return Pasteboard(name: Name(try await proxy.createUnique()), address: address)
    }

    var proxy: PasteboardProxy {
        get throws { try SharedConnection.proxy(address: address) }
    }

    // MARK: Change count and types

    /// The number of changes so far; it never goes backwards.
    public var changeCount: Int {
        get async throws { Int(clamping: try await proxy.changeCount(name.rawValue)) }
    }

    /// Every type of every item, first item first; nil when the pasteboard is empty.
    public var types: [UTType]? {
        get async throws {
            let types = try await proxy.types(name.rawValue).types
            return types.isEmpty ? nil : types.map(UTType.types(for:))
        }
    }

    /// The first of `types` that some item satisfies (by conformance), or nil.
    ///
    /// The server decides for MIME types; a type without one (an abstract type such as
    /// `.image`, or one declared without a MIME type) is matched here, with
    /// ``UTType/conforms(to:)``, against the pasteboard's types: `.image` is satisfied by
    /// `image/png`. So are types that a type declared in this process conforms to: after
    /// `UTType(exportedAs: "com.example.todo", conformingTo: .json)`, a todo satisfies `.json`.
    public func availableType(from types: [UTType]) async throws -> UTType? {
        if Self.matchesOnClient(types) {
            let offered = try await proxy.types(name.rawValue).types.map(UTType.types(for:))
            return types.first { wanted in offered.contains { $0.conforms(to: wanted) } }
        }
        let found = try await proxy.availableType(name.rawValue, from: types.map(\.pasteboardType))
        return found.flatMap { found in types.first { $0.pasteboardType == found } }
    }

    /// Whether some item has data conforming to one of `types` (matched as
    /// ``availableType(from:)`` matches them).
    public func canReadItem(withDataConformingToTypes types: [UTType]) async throws -> Bool {
        if Self.matchesOnClient(types) {
            return try await availableType(from: types) != nil
        }
        return try await proxy.canRead(name.rawValue, types: types.map(\.pasteboardType))
    }

    /// Whether some item has data conforming to one of `types`, given as AppKit gives them: type
    /// identifiers (`public.png`) or, here, MIME types (`image/png`) too; a string that is
    /// neither is matched as written. (Disfavoured, so that `[]` and `[.png]` mean `UTType`s.)
    @_disfavoredOverload
    public func canReadItem(withDataConformingToTypes types: [String]) async throws -> Bool {
        try await canReadItem(withDataConformingToTypes: types.map(UTType.types(for:)))
    }

    /// Whether to match `types` here rather than on the server, when all are valid (the server
    /// refuses the others with `InvalidType`): when one has no MIME type for the server to
    /// match by conformance, or when a type declared in this process
    /// (``UTType/init(exportedAs:conformingTo:)``) conforms to one of them, which the server
    /// cannot know: a `com.example.todo` declared here to conform to `.json` serves a request
    /// for `.json`, as ``string(forType:)`` and ``loadTransferable(type:)`` find it.
    private static func matchesOnClient(_ types: [UTType]) -> Bool {
        guard types.allSatisfy({ $0.pasteboardTypeValue != nil }) else { return false }
        if types.contains(where: { $0.preferredMIMEType == nil }) { return true }
        let declared = UTTypeRegistry.shared.declaredTypes
        return declared.contains { type in types.contains { type != $0 && type.conforms(to: $0) } }
    }

    /// The changes of this pasteboard, live, until the consuming task is cancelled.
    public var changes: PasteboardChanges {
        PasteboardChanges(name: name, address: address)
    }

    /// The changes of every pasteboard on the bus.
    public static func allChanges(address: String? = nil) -> PasteboardChanges {
        PasteboardChanges(name: nil, address: address)
    }

    // MARK: Writing

    /// Empties the pasteboard and returns the new change count; as in AppKit, what this object
    /// writes next is added to the contents (see ``setData(_:forType:)`` and
    /// ``writeObjects(_:)``) until another program changes them.
    @discardableResult
    public func clearContents() async throws -> Int {
        try await writes.run {
            let count = try await proxy.clearContents(name.rawValue)
            session.withLock { $0 = .open(WriteSession(clearedAt: count)) }
            return Int(clamping: count)
        }
    }

    /// Sets `data` as the representation of `type` for the first item, as AppKit does: after
    /// ``clearContents()``, each call adds a type to that item (or replaces the type's data),
    /// one change each.
    ///
    /// ```swift
    /// try await pasteboard.clearContents()
    /// try await pasteboard.setString("Hello", forType: .utf8PlainText)
    /// try await pasteboard.setData(html, forType: .html)      // one item, two types
    /// ```
    ///
    /// Without a ``clearContents()`` first, the contents are replaced by one item holding
    /// `data`. After ``writeObjects(_:)`` in the same session, `data` is added as an item of
    /// its own. `nil` clears the contents.
    ///
    /// - Returns: False, writing nothing, when another program has changed the pasteboard since
    ///   this object's last addition (it is no longer the owner, in AppKit's terms; see
    ///   ``writeObjects(_:)`` for a change between the clear and the first addition), and from
    ///   then on until the next ``clearContents()``.
    @discardableResult
    public func setData(_ data: Data?, forType type: UTType) async throws -> Bool {
        try await setData(data, forType: type, options: WriteOptions())
    }

    /// ``setData(_:forType:)`` with `options`: after ``clearContents()``, the contents are kept
    /// as strictly as the strictest write since (see ``WriteOptions``).
    @discardableResult
    public func setData(_ data: Data?, forType type: UTType, options: WriteOptions) async throws -> Bool {
        guard let data else {
            try await clearContents()
            return true
        }
        let rawType = type.pasteboardType
        return try await writeAsOwner(options: options) { open in
            let firstItem = open?.firstItem(setting: data, as: rawType)
            let item = (firstItem ?? [(rawType, data)]).map { (type: $0.type, content: TransferContent.data($0.data)) }
            return ([item], firstItem)
        }
    }

    /// One write of ``setData(_:forType:)`` or ``writeObjects(_:)``, made as AppKit's owner
    /// makes it: `plan` gives the items to write, from the open session if any, and the first
    /// item as `setData` leaves it (nil: not known here, or items were appended).
    ///
    /// Without a session, the items replace the contents; lost to another program, nothing is
    /// written (false). In a session, they are an addition: `if-change-count` the session's
    /// count, and `append` unless they are the first item made anew. A `Conflict` means
    /// another program changed the pasteboard since. AppKit's answer is to write nothing and
    /// return false, and so it is here once this object has added something: the other
    /// program's change is newer than this object's contents. Between the clear and the first
    /// addition, though, the other program is most likely a clipboard manager that took the
    /// emptied clipboard back at once (KDE's Klipper does so by default), which would make
    /// every clear-then-write fail: that addition is made again in place of the contents, and
    /// the session goes on from it. One such write at a time (``writes``).
    ///
    /// In a session every addition carries the strictest `options` of the session so far (an
    /// addition that rewrites the first item replaces the contents on the server, which would
    /// otherwise drop an earlier addition's concealment or deadline). An expiration date
    /// becomes milliseconds only as each write leaves, after the waits before it.
    func writeAsOwner(
        options: WriteOptions, ownerOnly: Bool = false,
        _ plan: (WriteSession?) -> (items: [[(type: String, content: TransferContent)]], firstItem: [(type: String, data: Data)]?)
    ) async throws -> Bool {
        try await writes.run {
            let state = session.withLock { $0 }
            if case .lost = state { return false }
            let (items, firstItem) = plan(state.open)
            let write = { [self] (options: WriteOptions, adding: (count: UInt64, append: Bool)?) in
                var sent = options.proxyOptions
                sent.ownerOnly = ownerOnly
                sent.ifChangeCount = adding?.count
                sent.append = adding?.append ?? false
                return try await PayloadTransfer.write(name.rawValue, items: items, options: sent, proxy: try proxy)
            }
            guard var open = state.open else {
                _ = try await write(options, nil)
                return true
            }
            let strictest = open.options.stricter(options)
            do {
                open.count = try await write(strictest, (open.count, firstItem == nil))
            } catch let error as PasteboardError where error.code == .conflict {
                guard !open.hasAdditions else {
                    session.withLock { $0 = .lost }
                    return false
                }
                open.count = try await write(options, nil)
            }
            open.options = strictest
            open.firstItem = firstItem
            open.hasAdditions = true
            session.withLock { [open] in $0 = .open(open) }
            return true
        }
    }

    /// Runs `write`, which replaces the contents (or removes them), ending the session: what
    /// follows replaces in turn, until the next clear.
    func writeReplacing<T>(_ write: () async throws -> T) async throws -> T {
        try await writes.run {
            session.withLock { $0 = .none }
            return try await write()
        }
    }

    /// ``setData(_:forType:)`` with `string` as UTF-8.
    @discardableResult
    public func setString(_ string: String, forType type: UTType = .utf8PlainText) async throws -> Bool {
        try await setData(Data(string.utf8), forType: type)
    }

    /// Removes the pasteboard from the server, with its contents and history.
    public func releaseGlobally() async throws {
        try await writeReplacing { try await proxy.remove(name.rawValue) }
    }

    // MARK: Reading

    /// Runs `read`, which lists the items and then reads with their change count, again when
    /// the pasteboard changed in between (`Stale`): a read of the pasteboard as a whole, as
    /// AppKit's, gives its contents at some moment, never an error because another program
    /// wrote meanwhile. (A read of one ``PasteboardItem`` fails with `Stale` instead: that
    /// item is gone.) Gives up with `Stale` only after ``readAttempts`` changes in a row.
    ///
    /// `read` is told whether to expect the listed count. After ``strictAttempts`` it is told
    /// not to, for a read that then stays right without it (one datum, read in one call: of
    /// whatever generation is current then, which a check of the type's presence there keeps
    /// whole), so that a program writing back to back cannot starve it.
    func readingCurrent<T>(_ read: (_ expectingTheCount: Bool) async throws -> T) async throws -> T {
        var attempt = 1
        while true {
            do {
                return try await read(attempt <= Self.strictAttempts)
            } catch let error as PasteboardError where error.code == .stale && attempt < Self.readAttempts {
                try Task.checkCancellation()
                attempt += 1
            }
        }
    }

    /// How many changes in a row a read of the whole pasteboard outlasts. Each attempt is two
    /// round trips or so: a program writing hundreds of times a second makes a few fail; only
    /// one writing back to back without a pause can make them all fail.
    static let readAttempts = 64
    /// How many attempts expect the listed count, when the read allows for less.
    static let strictAttempts = 8

    /// The data of the first item that has exactly `type` (any spelling of it), or nil.
    public func data(forType type: UTType) async throws -> Data? {
        try await readingCurrent { strict in try await dataOnce(forType: type, conformingText: false, strict: strict)?.data }
    }

    /// The text of the first item with `type` (or, for a text type, of the first item with
    /// text conforming to it: `text/html` serves `.plainText`), or nil. Decoded as the type
    /// found says: UTF-16 for `charset=utf-16`, else UTF-8 (or UTF-16 after a byte order
    /// mark), as a `String` is read by ``loadTransferable(type:)``.
    public func string(forType type: UTType = .utf8PlainText) async throws -> String? {
        try await readingCurrent { strict in
            try await dataOnce(forType: type, conformingText: true, strict: strict).map { String.decodingText($0.data, offeredAs: $0.type) }
        }
    }

    /// One attempt of ``data(forType:)`` (and, `conformingText`, of ``string(forType:)``): the
    /// first item with exactly `type`, else the first with text conforming to it, from one
    /// listing of the items. Not `strict`, the item found is read in whatever generation is
    /// current by then; one that no longer has the type there (another item, or none, took
    /// its place) sends the attempt round again as `Stale`.
    private func dataOnce(forType type: UTType, conformingText: Bool, strict: Bool) async throws -> (data: Data, type: String)? {
        let proxy = try proxy
        let (count, items) = try await proxy.items(name.rawValue)
        let wanted = type.pasteboardType
        let exact = items.indices.lazy.compactMap { index in items[index].types.first { PasteboardTypeMatch.same($0, wanted) }.map { (index, $0) } }.first
        let found = exact ?? (conformingText
            ? items.indices.lazy.compactMap { index in PasteboardItem.closestText(in: items[index].types, to: type).map { (index, $0) } }.first
            : nil)
        guard let (index, offered) = found else { return nil }
        do {
            return (try await PayloadTransfer.read(name.rawValue, item: UInt32(index), type: offered, expect: strict ? count : 0, proxy: proxy), offered)
        } catch let error as PasteboardError where !strict && (error.code == .noSuchItem || error.code == .noSuchType) {
            throw PasteboardError.stale("'\(name)' changed while it was read: \(error.message)")
        }
    }

    /// The items, each with its types; nil when the pasteboard is empty.
    public var pasteboardItems: [PasteboardItem]? {
        get async throws {
            let (count, items) = try await proxy.items(name.rawValue)
            guard !items.isEmpty else { return nil }
            return items.enumerated().map { index, item in
                PasteboardItem(pasteboard: self, index: index, generation: count, rawTypes: item.types, sizes: item.sizes)
            }
        }
    }
}

/// Comparing server type strings by the model's rules (any spelling of one type is equal).
enum PasteboardTypeMatch {
    static func same(_ a: String, _ b: String) -> Bool {
        guard let a = try? PasteboardType(validating: a), let b = try? PasteboardType(validating: b) else { return a == b }
        return a == b
    }
}
