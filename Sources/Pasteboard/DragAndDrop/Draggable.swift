/// Starts dragging `payload`: writes it to the drag pasteboard as one change, and returns the
/// session that ends when a destination drops it, when you cancel it, or when another drag
/// replaces it (SwiftUI's `draggable(_:)`, for the toolkit's drag-begin handler).
///
/// ```swift
/// let session = try await draggable(todo)
/// let outcome = try await session.outcome   // .dropped or .cancelled
/// ```
///
/// The value offers every representation it can export, richest first, as
/// ``Pasteboard/Pasteboard/writeObjects(_:)`` writes them: a `FileRepresentation` file travels
/// to the server through a file descriptor, never whole in memory, however large. The drag is
/// written `transient`: it is not kept in the pasteboard's history nor on disk, since it means
/// nothing once the drag is over.
///
/// - Parameters:
///   - payload: What is dragged.
///   - pasteboard: Where the drag goes: ``Pasteboard/Pasteboard/drag`` on the session bus by
///     default; destinations follow the same pasteboard.
/// - Returns: The session, for its ``DragSession/outcome`` and ``DragSession/cancel()``.
/// - Throws: `TransferError` with code `.notExportable` when the value exports nothing (its
///   exporting conditions are all false), leaving the drag pasteboard as it was; the
///   pasteboard's errors when the write fails.
@discardableResult
public func draggable<Payload: Transferable>(_ payload: Payload, pasteboard: Pasteboard = .drag) async throws -> DragSession {
    try await DragSession.begin([payload], on: pasteboard)
}

/// Starts dragging several values at once, one item each, in one change (a multiple
/// selection); a destination's action receives those it can import, in this order.
///
/// - Throws: `TransferError` with code `.notExportable` when no value exports anything.
@discardableResult
public func draggable<Payload: Transferable>(contentsOf payloads: [Payload], pasteboard: Pasteboard = .drag) async throws -> DragSession {
    try await DragSession.begin(payloads, on: pasteboard)
}

extension DragSession {
    /// Writes the drag, having first subscribed to the pasteboard's changes, so that the
    /// change that ends it is seen however soon it comes.
    static func begin(_ objects: [any Transferable], on pasteboard: Pasteboard) async throws -> DragSession {
        let (items, options) = try await pasteboard.exportItems(objects, options: PasteboardProxy.WriteOptions(transient: true))
        guard !items.isEmpty else {
            throw TransferError.notExportable("nothing to drag: none of the \(objects.count) values exports a representation (check their exporting conditions)")
        }
        let proxy = try pasteboard.proxy
        let name = pasteboard.name.rawValue
        let signals = try await proxy.changes(of: name)
        let count = try await PayloadTransfer.write(name, items: items, options: options, proxy: proxy)
        return DragSession(pasteboard: pasteboard, changeCount: Int(clamping: count), signals: signals)
    }
}

extension Pasteboard {
    /// The `drag` pasteboard on the session bus: what is being dragged, where
    /// ``draggable(_:pasteboard:)`` writes and ``DropDestination`` looks.
    public static let drag = Pasteboard(name: .drag)

    /// Empties the pasteboard only if it is still at `changeCount` (`WriteItems` of no items
    /// with `if-change-count`): how a drag ends without touching the drag that replaced it.
    ///
    /// - Returns: The new change count, or nil when the pasteboard has changed since (it is
    ///   left as it is).
    func clearContents(ifChangeCount changeCount: Int) async throws -> Int? {
        do {
            let options = PasteboardProxy.WriteOptions(ifChangeCount: UInt64(clamping: changeCount))
            return Int(clamping: try await proxy.writeItems(name.rawValue, [], options: options))
        } catch let error as PasteboardError where error.code == .conflict {
            return nil
        }
    }
}
