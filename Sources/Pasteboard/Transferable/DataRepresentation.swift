import Foundation

/// A representation as bytes in memory, in a format you encode and decode yourself, as Apple's
/// `DataRepresentation`.
///
/// ```swift
/// struct ProfilesArchive: Transferable {
///     var profiles: [Profile]
///
///     static var transferRepresentation: some TransferRepresentation {
///         DataRepresentation(contentType: .commaSeparatedText) { archive in
///             try archive.csvData()
///         } importing: { data in
///             try ProfilesArchive(csvData: data)
///         }
///     }
/// }
/// ```
///
/// Prefer a specific content type (`.png`, `.commaSeparatedText`) to `.data`: a reader asking
/// for `.data` takes any bytes at all.
public struct DataRepresentation<Item: Transferable>: TransferRepresentation, Sendable {
    let contentType: UTType
    let exporting: (@Sendable (Item) async throws -> Data)?
    let importing: (@Sendable (Data) async throws -> Item)?

    /// A representation that both exports and imports.
    ///
    /// - Parameters:
    ///   - contentType: The type of the bytes.
    ///   - exporting: Encodes a value.
    ///   - importing: Decodes a value; throw when the bytes are not valid.
    public init(
        contentType: UTType,
        exporting: @escaping @Sendable (Item) async throws -> Data,
        importing: @escaping @Sendable (Data) async throws -> Item
    ) {
        self.contentType = contentType
        self.exporting = exporting
        self.importing = importing
    }

    /// A representation that only exports: values are written in this type but never read
    /// from it.
    ///
    /// ```swift
    /// DataRepresentation(exportedContentType: .png) { image in try image.pngData() }
    /// ```
    public init(exportedContentType contentType: UTType, exporting: @escaping @Sendable (Item) async throws -> Data) {
        self.contentType = contentType
        self.exporting = exporting
        self.importing = nil
    }

    /// A representation that only imports: values are read from this type but never written
    /// in it.
    ///
    /// ```swift
    /// DataRepresentation(importedContentType: .png) { data in try MyImage(pngData: data) }
    /// ```
    public init(importedContentType contentType: UTType, importing: @escaping @Sendable (Data) async throws -> Item) {
        self.contentType = contentType
        self.exporting = nil
        self.importing = importing
    }

    /// Never read: the library lists the representation's data itself.
    public var body: Never {
        return transferRepresentationHasNoBody(Self.self)
    }
}

extension DataRepresentation: PrimitiveTransferRepresentation {
    var entryList: Any {
        var export: (@Sendable (Item) async throws -> TransferContent)?
        if let exporting {
            export = { item in .data(try await exporting(item)) }
        }
        var `import`: (@Sendable (TransferContent) async throws -> Item)?
        if let importing {
            `import` = { content in try await importing(try await content.data()) }
        }
        return [TransferEntry<Item>(contentType: contentType, export: export, import: `import`)]
    }
}
