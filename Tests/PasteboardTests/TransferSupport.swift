import Foundation

@testable import Pasteboard

// Test types and helpers shared by the Transferable tests: a pasteboard item is simulated as
// the list of (type, bytes) pairs the engine exports.

extension UTType {
    static let testProfile = UTType(exportedAs: "com.example.tests.transfer.profile", conformingTo: .json)
    static let testArchive = UTType(exportedAs: "com.example.tests.transfer.archive")
}

/// Rich representation first, then text: the right order.
struct Profile: Codable, Equatable, Transferable {
    var name: String
    var age: Int

    static var transferRepresentation: some TransferRepresentation {
        CodableRepresentation(contentType: .testProfile)
        ProxyRepresentation(exporting: \.name)
    }
}

/// Text first: the mistake the reference warns about.
struct TextFirstProfile: Codable, Equatable, Transferable {
    var name: String
    var age: Int

    static var transferRepresentation: some TransferRepresentation {
        ProxyRepresentation(exporting: \.name) { name in TextFirstProfile(name: name, age: 0) }
        CodableRepresentation(contentType: .testProfile)
    }
}

/// The same representations as ``TextFirstProfile``, richest first.
struct RichFirstProfile: Codable, Equatable, Transferable {
    var name: String
    var age: Int

    static var transferRepresentation: some TransferRepresentation {
        CodableRepresentation(contentType: .testProfile)
        ProxyRepresentation(exporting: \.name) { name in RichFirstProfile(name: name, age: 0) }
    }
}

/// Exports everything it is given, as a simulated pasteboard item.
func item<T: Transferable>(_ value: T) async throws -> [(type: String, data: Data)] {
    var pairs: [(type: String, data: Data)] = []
    for representation in try await exportRepresentations(of: value) {
        pairs.append((representation.contentType.pasteboardType, try await representation.content.data()))
    }
    return pairs
}

/// Reads a value from a simulated item, as the pasteboard would.
func read<T: Transferable>(_ type: T.Type, from item: [(type: String, data: Data)]) async throws -> T? {
    try await T.importValue(offering: item.map(\.type)) { wanted, _ in
        .data(item.first { $0.type == wanted }!.data)
    }
}

/// A fresh directory for a test's files, removed by the caller.
func temporaryDirectory() throws -> URL {
    let directory = FileManager.default.temporaryDirectory
        .appendingPathComponent("pasteboard-tests-\(UUID().uuidString)", isDirectory: true)
    try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
    return directory
}
