/// A representation borrowed from another transferable type, as Apple's `ProxyRepresentation`:
/// the value is converted to that type, which then offers its own representations.
///
/// A one-way proxy gives receivers that know only the other type something to paste:
///
/// ```swift
/// struct Profile: Codable, Transferable {
///     var name: String
///
///     static var transferRepresentation: some TransferRepresentation {
///         CodableRepresentation(contentType: .profile)
///         ProxyRepresentation(exporting: \.name)   // text editors get the name
///     }
/// }
/// ```
///
/// A two-way proxy also reads the value back from the other type:
///
/// ```swift
/// ProxyRepresentation { profile in profile.name } importing: { name in Profile(name: name) }
/// ```
///
/// Order matters: a proxy to `String` listed first makes every reader that takes text get text,
/// even one that knows the richer type. List the richest representation first.
///
/// A proxy contributes the other type's representations in their order, each keeping its own
/// content type, visibility and exporting condition; a proxy that leads back to a type whose
/// representations are being listed contributes nothing. A suggested file name of the other
/// type is not carried over: apply `suggestedFileName(_:)` to the proxy
/// itself.
public struct ProxyRepresentation<Item: Transferable, Proxy: Transferable>: TransferRepresentation, Sendable {
    let exporting: (@Sendable (Item) async throws -> Proxy)?
    let importing: (@Sendable (Proxy) async throws -> Item)?

    /// A one-way proxy: values are written as the other type, and never read from it.
    ///
    /// - Parameter exporting: Converts a value to the other type.
    public init(exporting: @escaping @Sendable (Item) async throws -> Proxy) {
        self.exporting = exporting
        self.importing = nil
    }

    /// A two-way proxy: values are written as the other type and read back from it.
    ///
    /// - Parameters:
    ///   - exporting: Converts a value to the other type.
    ///   - importing: Converts the other type back; throw when it cannot.
    public init(
        exporting: @escaping @Sendable (Item) async throws -> Proxy,
        importing: @escaping @Sendable (Proxy) async throws -> Item
    ) {
        self.exporting = exporting
        self.importing = importing
    }

    /// An import-only proxy: values are read from the other type, and never written as it.
    ///
    /// ```swift
    /// enum Droppable: Transferable {
    ///     case text(String)
    ///     static var transferRepresentation: some TransferRepresentation {
    ///         ProxyRepresentation { (text: String) in Droppable.text(text) }
    ///     }
    /// }
    /// ```
    ///
    /// - Parameter importing: Converts the other type to a value.
    public init(importing: @escaping @Sendable (Proxy) async throws -> Item) {
        self.exporting = nil
        self.importing = importing
    }

    /// Never read: the library lists the representation's data itself.
    public var body: Never {
        return transferRepresentationHasNoBody(Self.self)
    }
}

extension ProxyRepresentation: PrimitiveTransferRepresentation {
    var entryList: Any {
        let inProgress = TransferFlattening.typesInProgress
        let proxyKey = ObjectIdentifier(Proxy.self)
        guard !inProgress.contains(proxyKey) else { return [TransferEntry<Item>]() }
        let targets = TransferFlattening.$typesInProgress.withValue(inProgress.union([proxyKey])) {
            Proxy.transferRepresentation.flattenedEntries as? [TransferEntry<Proxy>] ?? []
        }
        let exporting = exporting
        let importing = importing
        let names = (item: "\(Item.self)", proxy: "\(Proxy.self)")
        return targets.compactMap { target -> TransferEntry<Item>? in
            var export: (@Sendable (Item) async throws -> TransferContent)?
            if let exporting, let targetExport = target.export {
                export = { item in
                    let proxy = try await exporting(item)
                    // A proxied target checks its own proxy type's conditions the same way.
                    guard target.isExportable(proxy) else {
                        throw TransferError.notExportable(
                            "The \(names.proxy) that \(names.item) converts to does not offer \(target.contentType) "
                                + "(its exportingCondition is false).")
                    }
                    return try await targetExport(proxy)
                }
            }
            var `import`: (@Sendable (TransferContent) async throws -> Item)?
            if let importing, let targetImport = target.import {
                `import` = { content in try await importing(try await targetImport(content)) }
            }
            guard export != nil || `import` != nil else { return nil }
            return TransferEntry(
                contentType: target.contentType, visibility: target.visibility, export: export, import: `import`,
                prefersFile: target.prefersFile)
        }
    }
}
