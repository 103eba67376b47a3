import Foundation

extension Pasteboard {
    // MARK: Writing values

    /// Writes one item per value, in one change: after ``clearContents()``, added after the
    /// items this object wrote since, as AppKit does; without it, in place of the contents.
    ///
    /// Each value offers every representation it can export, richest first, as its
    /// `transferRepresentation` lists them. A representation marked `.visibility(.ownProcess)`
    /// makes the write `owner-only`: other processes see the types but cannot read the data.
    ///
    /// ```swift
    /// try await Pasteboard.general.clearContents()
    /// try await Pasteboard.general.writeObjects([todo, "plain text too"])
    /// try await Pasteboard.general.writeObjects([image])      // three items now
    /// ```
    ///
    /// An addition is made with `if-change-count` set to this object's last change. Should
    /// another program have changed the pasteboard since, it writes nothing and returns false,
    /// as AppKit's does; but a change between the clear and the first addition (a clipboard
    /// manager taking the emptied clipboard back at once, as KDE's Klipper does) is replaced by
    /// that addition, which on such a desktop would otherwise fail every clear-then-write.
    ///
    /// - Returns: False, leaving the contents as they were, when no value exports anything, or
    ///   when another program changed the pasteboard after this object's first addition (and
    ///   from then on until the next ``clearContents()``).
    @discardableResult
    public func writeObjects(_ objects: [any Transferable]) async throws -> Bool {
        try await writeObjects(objects, options: WriteOptions())
    }

    /// ``writeObjects(_:)`` with `options`: after ``clearContents()``, the contents are kept as
    /// strictly as the strictest write since (see ``WriteOptions``).
    @discardableResult
    public func writeObjects(_ objects: [any Transferable], options: WriteOptions) async throws -> Bool {
        let (items, exported) = try await exportItems(objects, options: PasteboardProxy.WriteOptions())
        guard !items.isEmpty else { return false }
        return try await writeAsOwner(options: options, ownerOnly: exported.ownerOnly) { _ in (items, nil) }
    }

    /// Writes values as items with the given options (``writeObjects(_:)`` with more control);
    /// with nothing to export, this clears the contents.
    @discardableResult
    func write(_ objects: [any Transferable], options: PasteboardProxy.WriteOptions) async throws -> UInt64 {
        let (items, options) = try await exportItems(objects, options: options)
        return try await writeReplacing { try await PayloadTransfer.write(name.rawValue, items: items, options: options, proxy: try proxy) }
    }

    /// One item per value that exports something, and `options` made `owner-only` when a
    /// representation is `.visibility(.ownProcess)`.
    func exportItems(
        _ objects: [any Transferable], options: PasteboardProxy.WriteOptions
    ) async throws -> (items: [[(type: String, content: TransferContent)]], options: PasteboardProxy.WriteOptions) {
        var options = options
        var items: [[(type: String, content: TransferContent)]] = []
        for object in objects {
            let representations = try await exportRepresentations(of: object)
            guard !representations.isEmpty else { continue }
            if representations.contains(where: { $0.visibility == .ownProcess }) { options.ownerOnly = true }
            items.append(representations.map { ($0.contentType.pasteboardType, $0.content) })
        }
        return (items, options)
    }

    /// Writes `values` in one change, as a toolkit's Copy command does (`copyable(_:)`).
    @discardableResult
    public func copy<T: Transferable>(_ values: [T]) async throws -> Int {
        Int(clamping: try await write(values, options: PasteboardProxy.WriteOptions()))
    }

    /// Writes `values` in one change, then runs `removeFromSource` (`cuttable(for:action:)`):
    /// the values leave their document only once they are safely on the pasteboard.
    @discardableResult
    public func cut<T: Transferable>(_ values: [T], removeFromSource: () async throws -> Void) async throws -> Int {
        let count = try await copy(values)
        try await removeFromSource()
        return count
    }

    // MARK: Reading values

    /// The first item the type can be read from, as a value; nil when no item offers a
    /// representation `T` imports.
    ///
    /// Reading takes the first representation (in `T`'s order) the item satisfies. Large data
    /// streams through a file descriptor; a `FileRepresentation` receives a file of its own,
    /// never held in memory. Cancelling the task stops the transfer and deletes the partial file.
    public func loadTransferable<T: Transferable>(type: T.Type) async throws -> T? {
        try await loadTransferable(type: type, progress: nil)
    }

    /// ``loadTransferable(type:)`` reporting the fraction of bytes received, from 0 to 1.
    ///
    /// Should another program change the pasteboard during the read, it is read again: the
    /// value is of the contents at some moment, never a mix.
    public func loadTransferable<T: Transferable>(type: T.Type, progress: (@Sendable (Double) -> Void)?) async throws -> T? {
        try await readingCurrent { _ in
            guard let items = try await pasteboardItems else { return nil }
            for item in items where T.importMatch(offering: item.rawTypes) != nil {
                return try await item.loadTransferable(type: type, progress: progress)
            }
            return nil
        }
    }

    /// Every item readable as `T`, as values, in item order (for paste destinations), all of
    /// one change of the pasteboard (read again should it change meanwhile).
    public func loadTransferables<T: Transferable>(type: T.Type) async throws -> [T] {
        try await readingCurrent { _ in try await Self.loadTransferables(type: type, from: pasteboardItems ?? []) }
    }

    /// Every one of `items` readable as `T`, as values, in item order; each read expects the
    /// items' change count, so a change meanwhile fails the load with `Stale`.
    static func loadTransferables<T: Transferable>(type: T.Type, from items: [PasteboardItem]) async throws -> [T] {
        var values: [T] = []
        for item in items {
            if let value = try await item.loadTransferable(type: type) { values.append(value) }
        }
        return values
    }
}

extension PasteboardItem {
    /// This item as a value of `T`, or nil when it offers nothing `T` imports.
    public func loadTransferable<T: Transferable>(type: T.Type) async throws -> T? {
        try await loadTransferable(type: type, progress: nil)
    }

    /// ``loadTransferable(type:)`` reporting the fraction of bytes received, from 0 to 1.
    public func loadTransferable<T: Transferable>(type: T.Type, progress: (@Sendable (Double) -> Void)?) async throws -> T? {
        let proxy = try pasteboard.proxy
        let name = pasteboard.name.rawValue
        let sizes = Dictionary(zip(rawTypes, self.sizes), uniquingKeysWith: { first, _ in first })
        return try await T.importValue(offering: rawTypes) { type, prefersFile in
            let size = sizes[type] ?? 0
            try Task.checkCancellation()
            if prefersFile {
                let file = try await PayloadTransfer.readToFile(
                    name, item: UInt32(index), type: UTType.types(for: type), offered: type, size: size,
                    expect: generation, proxy: proxy, progress: progress)
                return .file(file)
            }
            if size > Int64(PayloadTransfer.inlineCutoff) {
                let data = try await PayloadTransfer.readStreaming(
                    name, item: UInt32(index), type: type, size: size, expect: generation, proxy: proxy, progress: progress)
                return .data(data)
            }
            let data = try await PayloadTransfer.read(name, item: UInt32(index), type: type, expect: generation, proxy: proxy)
            progress?(1)
            return .data(data)
        }
    }
}
