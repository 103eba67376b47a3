import DBus
import TestSupport

/// Lists of D-Bus values drawn at random, repeatably from a seed: every kind, alignment and
/// nesting up to three deep, strings of any scalar, so that a test can check what every
/// writer of messages makes of them.
struct RandomValues {
    private var random: SeededRandom

    init(seed: UInt64) {
        random = SeededRandom(seed: seed)
    }

    /// Up to eight values.
    mutating func arguments() -> [DBusValue] {
        (0..<Int.random(in: 0...8, using: &random)).map { _ in value(3) }
    }

    /// A value nested up to `depth` deep: arrays of one element type, dictionaries,
    /// structures, variants of anything.
    mutating func value(_ depth: Int) -> DBusValue {
        guard depth > 0, Int.random(in: 0..<3, using: &random) == 0 else { return plain() }
        switch Int.random(in: 0..<4, using: &random) {
        case 0:
            let model = value(depth - 1)
            let count = Int.random(in: 0...3, using: &random)
            // Read back, an array of bytes is `.bytes`.
            if case .byte = model { return .bytes((0..<count).map { _ in UInt8.random(in: 0...255, using: &random) }) }
            // Elements of the model's type: plain ones drawn again, others repeated.
            let elements = (0..<count).map { _ in model.signature.count == 1 ? sameKind(as: model) : model }
            return .array(element: model.signature, elements)
        case 1:
            let entries = (0..<Int.random(in: 0...3, using: &random)).map { _ in (DBusValue.string(text()), value(depth - 1)) }
            let valueSignature = entries.first?.1.signature ?? "v"
            return .dictionary(key: "s", value: valueSignature, entries.filter { $0.1.signature == valueSignature })
        case 2: return .structure((0..<Int.random(in: 1...3, using: &random)).map { _ in value(depth - 1) })
        default: return .variant(value(depth - 1))
        }
    }

    /// A value of a basic type, bytes or a list of strings.
    mutating func plain() -> DBusValue {
        switch Int.random(in: 0..<13, using: &random) {
        case 0: .byte(UInt8.random(in: 0...255, using: &random))
        case 1: .boolean(Bool.random(using: &random))
        case 2: .int16(Int16.random(in: .min ... .max, using: &random))
        case 3: .uint16(UInt16.random(in: 0 ... .max, using: &random))
        case 4: .int32(Int32.random(in: .min ... .max, using: &random))
        case 5: .uint32(UInt32.random(in: 0 ... .max, using: &random))
        case 6: .int64(Int64.random(in: .min ... .max, using: &random))
        case 7: .uint64(UInt64.random(in: 0 ... .max, using: &random))
        case 8: .double(Double.random(in: -1e9...1e9, using: &random))
        case 9: .string(text())
        case 10: .bytes((0..<Int.random(in: 0...40, using: &random)).map { _ in UInt8.random(in: 0...255, using: &random) })
        case 11: .objectPath(["/", "/a", "/a/b_1", "/org/pasteboardd/Pasteboard1"].randomElement(using: &random)!)
        default: .strings((0..<Int.random(in: 0...5, using: &random)).map { _ in text() })
        }
    }

    /// Up to twelve scalars from every plane (no NUL, which D-Bus strings cannot hold).
    mutating func text() -> String {
        let scalars = (0..<Int.random(in: 0...12, using: &random)).compactMap { _ -> Unicode.Scalar? in
            let ranges: [ClosedRange<UInt32>] = [0x1...0x7F, 0x80...0x7FF, 0x800...0xFFFF, 0x10000...0x10FFFF]
            return Unicode.Scalar(UInt32.random(in: ranges.randomElement(using: &random)!, using: &random))
        }
        return String(String.UnicodeScalarView(scalars))
    }

    /// Another plain value of the same kind as `model`.
    private mutating func sameKind(as model: DBusValue) -> DBusValue {
        switch model {
        case .uint64: .uint64(UInt64.random(in: 0 ... .max, using: &random))
        case .string: .string(String(repeating: "x", count: Int.random(in: 0...9, using: &random)))
        default: model
        }
    }
}
