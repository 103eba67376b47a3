import Foundation

/// A representation as a file on disk, for large payloads, as Apple's `FileRepresentation`.
///
/// ```swift
/// struct Video: Transferable {
///     let file: URL
///
///     static var transferRepresentation: some TransferRepresentation {
///         FileRepresentation(contentType: .mpeg4Movie) { video in
///             SentTransferredFile(video.file)
///         } importing: { received in
///             Video(file: received.file)
///         }
///     }
/// }
/// ```
///
/// On Linux the pasteboard stores a copy of the bytes, streamed from the file, so a receiver
/// never sees the sender's file: the importer gets a new file of its own
/// (``ReceivedTransferredFile/isOriginalFile`` is always false), which it may keep, move or
/// delete. Unlike on Apple platforms it need not copy the file before returning.
public struct FileRepresentation<Item: Transferable>: TransferRepresentation, Sendable {
    let contentType: UTType
    let exporting: (@Sendable (Item) async throws -> SentTransferredFile)?
    let importing: (@Sendable (ReceivedTransferredFile) async throws -> Item)?
    /// Recorded for code shared with Apple platforms; receivers always get a copy here.
    let shouldAttemptToOpenInPlace: Bool

    /// A representation that both exports and imports.
    ///
    /// - Parameters:
    ///   - contentType: The type of the file's contents.
    ///   - shouldAttemptToOpenInPlace: On Apple platforms, whether the receiver would rather
    ///     open the original file; on Linux it always gets a copy.
    ///   - exporting: Gives the file holding a value.
    ///   - importing: Makes a value from a received file.
    public init(
        contentType: UTType,
        shouldAttemptToOpenInPlace: Bool = false,
        exporting: @escaping @Sendable (Item) async throws -> SentTransferredFile,
        importing: @escaping @Sendable (ReceivedTransferredFile) async throws -> Item
    ) {
        self.contentType = contentType
        self.exporting = exporting
        self.importing = importing
        self.shouldAttemptToOpenInPlace = shouldAttemptToOpenInPlace
    }

    /// A representation that only exports.
    ///
    /// - Parameters:
    ///   - contentType: The type of the file's contents.
    ///   - shouldAllowToOpenInPlace: On Apple platforms, whether receivers may open the file
    ///     in place; on Linux they always get a copy.
    ///   - exporting: Gives the file holding a value.
    public init(
        exportedContentType contentType: UTType,
        shouldAllowToOpenInPlace: Bool = false,
        exporting: @escaping @Sendable (Item) async throws -> SentTransferredFile
    ) {
        self.contentType = contentType
        self.exporting = exporting
        self.importing = nil
        self.shouldAttemptToOpenInPlace = shouldAllowToOpenInPlace
    }

    /// A representation that only imports.
    ///
    /// ```swift
    /// FileRepresentation(importedContentType: .movie) { received in
    ///     VideoClip(localURL: received.file)
    /// }
    /// ```
    ///
    /// - Parameters:
    ///   - contentType: The type of file accepted; an abstract type such as `.movie` accepts
    ///     every type that conforms to it.
    ///   - shouldAttemptToOpenInPlace: On Apple platforms, whether the receiver would rather
    ///     open the original file; on Linux it always gets a copy.
    ///   - importing: Makes a value from a received file.
    public init(
        importedContentType contentType: UTType,
        shouldAttemptToOpenInPlace: Bool = false,
        importing: @escaping @Sendable (ReceivedTransferredFile) async throws -> Item
    ) {
        self.contentType = contentType
        self.exporting = nil
        self.importing = importing
        self.shouldAttemptToOpenInPlace = shouldAttemptToOpenInPlace
    }

    /// The earlier spelling of ``init(contentType:shouldAttemptToOpenInPlace:exporting:importing:)``.
    @available(*, deprecated, renamed: "init(contentType:shouldAttemptToOpenInPlace:exporting:importing:)")
    public init(
        contentType: UTType,
        shouldAttemptToOpenOriginal: Bool,
        exporting: @escaping @Sendable (Item) async throws -> SentTransferredFile,
        importing: @escaping @Sendable (ReceivedTransferredFile) async throws -> Item
    ) {
        self.init(contentType: contentType, shouldAttemptToOpenInPlace: shouldAttemptToOpenOriginal, exporting: exporting, importing: importing)
    }

    /// The earlier spelling of ``init(importedContentType:shouldAttemptToOpenInPlace:importing:)``.
    @available(*, deprecated, renamed: "init(importedContentType:shouldAttemptToOpenInPlace:importing:)")
    public init(
        importedContentType contentType: UTType,
        shouldAttemptToOpenOriginal: Bool,
        importing: @escaping @Sendable (ReceivedTransferredFile) async throws -> Item
    ) {
        self.init(importedContentType: contentType, shouldAttemptToOpenInPlace: shouldAttemptToOpenOriginal, importing: importing)
    }

    /// Never read: the library lists the representation's data itself.
    public var body: Never {
        return transferRepresentationHasNoBody(Self.self)
    }
}

extension FileRepresentation: PrimitiveTransferRepresentation {
    var entryList: Any {
        let contentType = contentType
        var export: (@Sendable (Item) async throws -> TransferContent)?
        if let exporting {
            export = { item in .file(try await exporting(item).file) }
        }
        var `import`: (@Sendable (TransferContent) async throws -> Item)?
        if let importing {
            `import` = { content in
                let file = try await content.file(for: contentType)
                do {
                    return try await importing(ReceivedTransferredFile(file: file, isOriginalFile: false))
                } catch {
                    // A file made here belongs to no one if the importer failed.
                    if !content.isFile { try? FileManager.default.removeItem(at: file) }
                    throw error
                }
            }
        }
        return [TransferEntry<Item>(contentType: contentType, export: export, import: `import`, prefersFile: true)]
    }
}

/// A file a ``FileRepresentation`` exports.
public struct SentTransferredFile: Sendable {
    /// The file holding the data.
    public var file: URL
    /// On Apple platforms, whether receivers may open this very file; on Linux the pasteboard
    /// always stores a copy of its bytes, so the file is never shared.
    public var allowAccessingOriginalFile: Bool

    /// A file to send.
    ///
    /// - Parameters:
    ///   - file: A file URL. The file must stay in place until the write returns.
    ///   - allowAccessingOriginalFile: Recorded for code shared with Apple platforms.
    public init(_ file: URL, allowAccessingOriginalFile: Bool = false) {
        self.file = file
        self.allowAccessingOriginalFile = allowAccessingOriginalFile
    }
}

/// A file a ``FileRepresentation`` imports.
public struct ReceivedTransferredFile: Sendable {
    /// The received file. It belongs to the importer, which may keep it, move it or delete
    /// it.
    public let file: URL
    /// Whether this is the sender's own file; always false on Linux, where the pasteboard
    /// holds a copy.
    public let isOriginalFile: Bool

    /// A received file, as the pasteboard hands one to an importer; for tests of importers.
    public init(file: URL, isOriginalFile: Bool) {
        self.file = file
        self.isOriginalFile = isOriginalFile
    }
}
