import Foundation

/// An encoder a ``CodableRepresentation`` can use: `JSONEncoder` and `PropertyListEncoder`
/// are ones, and so is any type with this method.
public protocol TransferEncoder: Sendable {
    /// Encodes a value to bytes.
    func encode<Value: Encodable>(_ value: Value) throws -> Data
}

/// A decoder a ``CodableRepresentation`` can use: `JSONDecoder` and `PropertyListDecoder`
/// are ones, and so is any type with this method.
public protocol TransferDecoder: Sendable {
    /// Decodes a value from bytes.
    func decode<Value: Decodable>(_ type: Value.Type, from data: Data) throws -> Value
}

extension JSONEncoder: TransferEncoder {}
extension JSONDecoder: TransferDecoder {}
extension PropertyListEncoder: TransferEncoder {}
extension PropertyListDecoder: TransferDecoder {}

/// A representation of a `Codable` value, as JSON unless you give another encoder, as Apple's
/// `CodableRepresentation`.
///
/// ```swift
/// extension UTType {
///     static let todo = UTType(exportedAs: "com.example.todo", conformingTo: .json)
/// }
///
/// struct Todo: Codable, Transferable {
///     var text: String
///     var isDone: Bool
///
///     static var transferRepresentation: some TransferRepresentation {
///         CodableRepresentation(contentType: .todo)
///     }
/// }
/// ```
///
/// A property list instead:
///
/// ```swift
/// CodableRepresentation(contentType: .todo, encoder: PropertyListEncoder(), decoder: PropertyListDecoder())
/// ```
///
/// The encoder and decoder are shared by every transfer, from any thread; configure them
/// before passing them and do not change them afterwards.
public struct CodableRepresentation<Item: Transferable & Codable, Encoder: TransferEncoder, Decoder: TransferDecoder>:
    TransferRepresentation, Sendable
{
    let contentType: UTType
    let encoder: Encoder
    let decoder: Decoder

    /// A representation encoded and decoded with the coders given.
    ///
    /// - Parameters:
    ///   - itemType: The type of the value; usually inferred.
    ///   - contentType: The type of the bytes; declare one with
    ///     `UTType(exportedAs:conformingTo:)`.
    ///   - encoder: Encodes values, such as a `PropertyListEncoder`.
    ///   - decoder: Decodes values, such as a `PropertyListDecoder`.
    public init(for itemType: Item.Type = Item.self, contentType: UTType, encoder: Encoder, decoder: Decoder) {
        self.contentType = contentType
        self.encoder = encoder
        self.decoder = decoder
    }

    /// Never read: the library lists the representation's data itself.
    public var body: Never {
        return transferRepresentationHasNoBody(Self.self)
    }
}

extension CodableRepresentation where Encoder == JSONEncoder, Decoder == JSONDecoder {
    /// A representation as JSON, with a default `JSONEncoder` and `JSONDecoder`.
    ///
    /// - Parameters:
    ///   - itemType: The type of the value; usually inferred.
    ///   - contentType: The type of the bytes; declare one with
    ///     `UTType(exportedAs:conformingTo:)`, conforming to `.json`.
    public init(for itemType: Item.Type = Item.self, contentType: UTType) {
        self.init(for: itemType, contentType: contentType, encoder: JSONEncoder(), decoder: JSONDecoder())
    }
}

extension CodableRepresentation: PrimitiveTransferRepresentation {
    var entryList: Any {
        let encoder = encoder
        let decoder = decoder
        return [
            TransferEntry<Item>(
                contentType: contentType,
                export: { item in .data(try encoder.encode(item)) },
                import: { content in try decodeValue(with: decoder, from: try await content.data()) })
        ]
    }
}

/// Decodes without naming the type, so that `@Sendable` closures need not capture a metatype.
private func decodeValue<Value: Decodable>(with decoder: some TransferDecoder, from data: Data) throws -> Value {
    try decoder.decode(Value.self, from: data)
}
