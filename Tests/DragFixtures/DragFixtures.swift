import Foundation
import Pasteboard

// What the drag-and-drop tests and their other process (`pasteboard-drag-peer`) both drag and
// drop: declared once, so that the two sides agree on every type identifier.

extension UTType {
    /// A card, as JSON.
    public static let dragCard = UTType(exportedAs: "com.example.tests.drag.card", conformingTo: .json)
    /// Any bytes, moved by file.
    public static let dragBlob = UTType(exportedAs: "com.example.tests.drag.blob", conformingTo: .data)
}

/// A card, as JSON under a type of its own, with its title as text for everyone else.
public struct DragCard: Codable, Equatable, Transferable {
    public var title: String

    public init(title: String) {
        self.title = title
    }

    public static var transferRepresentation: some TransferRepresentation {
        CodableRepresentation(contentType: .dragCard)
        ProxyRepresentation(exporting: \.title)
    }
}

/// A file dragged as it is, received into a file of the receiver's own (through file
/// descriptors both ways, whatever its size).
public struct DragBlob: Transferable {
    public var file: URL

    public init(file: URL) {
        self.file = file
    }

    public static var transferRepresentation: some TransferRepresentation {
        FileRepresentation(contentType: .dragBlob) { blob in
            SentTransferredFile(blob.file)
        } importing: { received in
            DragBlob(file: received.file)
        }
    }
}
