import Foundation

/// The JSON form of an `AttributedString` behind `UTType.attributedString`: an array of runs,
/// each `{"text": …, "attributes": {name: value}}`, with the attributes of
/// `AttributeScopes.FoundationAttributes` that Foundation can encode.
enum AttributedStringArchive {
    typealias Attributes = AttributeScopes.FoundationAttributes

    /// The attributes kept. Each encodes and decodes itself under its `name` (`NSLink`).
    static let coders: [AttributeCoder] = [
        AttributeCoder(Attributes.LinkAttribute.self),
        AttributeCoder(Attributes.LanguageIdentifierAttribute.self),
        AttributeCoder(Attributes.AlternateDescriptionAttribute.self),
        AttributeCoder(Attributes.ImageURLAttribute.self),
        AttributeCoder(Attributes.ReplacementIndexAttribute.self),
        AttributeCoder(Attributes.WritingDirectionAttribute.self),
        AttributeCoder(Attributes.PersonNameComponentAttribute.self),
        AttributeCoder(Attributes.DateFieldAttribute.self),
        AttributeCoder(Attributes.MeasurementAttribute.self),
        AttributeCoder(Attributes.ByteCountAttribute.self),
        AttributeCoder(Attributes.DurationFieldAttribute.self),
        AttributeCoder(Attributes.NumberFormatAttributes.NumberPartAttribute.self),
        AttributeCoder(Attributes.NumberFormatAttributes.SymbolAttribute.self),
    ]

    /// Encodes and decodes one attribute of a run.
    struct AttributeCoder: Sendable {
        let encode: @Sendable (AttributeContainer, inout KeyedEncodingContainer<NameKey>) throws -> Void
        let decode: @Sendable (KeyedDecodingContainer<NameKey>, inout AttributeContainer) throws -> Void

        init<Key: EncodableAttributedStringKey & DecodableAttributedStringKey>(_ key: Key.Type)
        where Key.Value: Sendable {
            encode = { attributes, values in
                guard let value = attributes[Key.self] else { return }
                try Key.encode(value, to: values.superEncoder(forKey: NameKey(Key.name)))
            }
            decode = { values, attributes in
                let name = NameKey(Key.name)
                guard values.contains(name) else { return }
                attributes[Key.self] = try Key.decode(from: values.superDecoder(forKey: name))
            }
        }
    }

    static func encode(_ string: AttributedString) throws -> Data {
        let runs = string.runs.map { run in
            Run(text: String(string[run.range].characters), attributes: run.attributes)
        }
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys]
        return try encoder.encode(runs)
    }

    static func decode(_ data: Data) throws -> AttributedString {
        let runs: [Run]
        do {
            runs = try JSONDecoder().decode([Run].self, from: data)
        } catch {
            throw TransferError.undecodable(
                "The data is not an attributed string: \(error.localizedDescription) It should be a JSON array "
                    + "of runs such as [{\"text\": \"hi\", \"attributes\": {}}].")
        }
        var string = AttributedString()
        for run in runs {
            string.append(AttributedString(run.text, attributes: run.attributes))
        }
        return string
    }

    /// One run: its text and attributes.
    struct Run: Codable {
        var text: String
        var attributes: AttributeContainer

        private enum CodingKeys: String, CodingKey {
            case text
            case attributes
        }

        init(text: String, attributes: AttributeContainer) {
            self.text = text
            self.attributes = attributes
        }

        init(from decoder: any Decoder) throws {
            let container = try decoder.container(keyedBy: CodingKeys.self)
            text = try container.decode(String.self, forKey: .text)
            attributes = AttributeContainer()
            guard container.contains(.attributes) else { return }
            let values = try container.nestedContainer(keyedBy: NameKey.self, forKey: .attributes)
            for coder in AttributedStringArchive.coders {
                try coder.decode(values, &attributes)
            }
        }

        func encode(to encoder: any Encoder) throws {
            var container = encoder.container(keyedBy: CodingKeys.self)
            try container.encode(text, forKey: .text)
            var values = container.nestedContainer(keyedBy: NameKey.self, forKey: .attributes)
            for coder in AttributedStringArchive.coders {
                try coder.encode(attributes, &values)
            }
        }
    }

    /// An attribute's name as a coding key.
    struct NameKey: CodingKey {
        var stringValue: String
        var intValue: Int? { nil }

        init(_ name: String) {
            stringValue = name
        }

        init?(stringValue: String) {
            self.stringValue = stringValue
        }

        init?(intValue: Int) {
            nil
        }
    }
}
