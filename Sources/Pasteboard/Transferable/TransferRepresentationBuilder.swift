/// Builds a list of representations from the statements of ``Transferable/transferRepresentation``
/// and of a ``TransferRepresentation/body``, in order.
///
/// Takes any number of representations, `if`, `if`–`else`, `switch` and `if #available`:
///
/// ```swift
/// static var transferRepresentation: some TransferRepresentation {
///     CodableRepresentation(contentType: .profile)
///     if includePlainText {
///         ProxyRepresentation(exporting: \.name)
///     }
/// }
/// ```
@resultBuilder
public enum TransferRepresentationBuilder<Item: Transferable> {
    /// Accepts a representation of `Item`.
    public static func buildExpression<Content: TransferRepresentation>(_ content: Content) -> Content
    where Content.Item == Item {
        content
    }

    /// No representations.
    public static func buildBlock() -> EmptyTransferRepresentation<Item> {
        EmptyTransferRepresentation()
    }

    /// The first representation of a list.
    public static func buildPartialBlock<Content: TransferRepresentation>(first content: Content) -> Content
    where Content.Item == Item {
        content
    }

    /// The representations so far, then one more.
    public static func buildPartialBlock<Accumulated: TransferRepresentation, Next: TransferRepresentation>(
        accumulated: Accumulated, next: Next
    ) -> TupleTransferRepresentation<Accumulated, Next> where Accumulated.Item == Item, Next.Item == Item {
        TupleTransferRepresentation(accumulated, next)
    }

    /// An `if` without `else`.
    public static func buildOptional<Content: TransferRepresentation>(
        _ content: Content?
    ) -> OptionalTransferRepresentation<Content> where Content.Item == Item {
        OptionalTransferRepresentation(content)
    }

    /// The first branch of an `if`–`else` or `switch`.
    public static func buildEither<First: TransferRepresentation, Second: TransferRepresentation>(
        first: First
    ) -> EitherTransferRepresentation<First, Second> where First.Item == Item, Second.Item == Item {
        EitherTransferRepresentation(storage: .first(first))
    }

    /// The second branch of an `if`–`else` or `switch`.
    public static func buildEither<First: TransferRepresentation, Second: TransferRepresentation>(
        second: Second
    ) -> EitherTransferRepresentation<First, Second> where First.Item == Item, Second.Item == Item {
        EitherTransferRepresentation(storage: .second(second))
    }

    /// The body of an `if #available`, with its type erased.
    public static func buildLimitedAvailability<Content: TransferRepresentation>(
        _ content: Content
    ) -> AnyTransferRepresentation<Item> where Content.Item == Item {
        AnyTransferRepresentation(content)
    }
}

// MARK: - What the builder makes

/// No representations: an empty `body`.
public struct EmptyTransferRepresentation<Item: Transferable>: TransferRepresentation, PrimitiveTransferRepresentation {
    /// No representations.
    public init() {}

    /// Never read: the library lists the representation's data itself.
    public var body: Never {
        return transferRepresentationHasNoBody(Self.self)
    }

    var entryList: Any {
        [TransferEntry<Item>]()
    }
}

/// Two representations, or lists of them, one after the other.
public struct TupleTransferRepresentation<First: TransferRepresentation, Second: TransferRepresentation>:
    TransferRepresentation, PrimitiveTransferRepresentation
where First.Item == Second.Item {
    /// The type both representations transfer.
    public typealias Item = First.Item

    let first: First
    let second: Second

    init(_ first: First, _ second: Second) {
        self.first = first
        self.second = second
    }

    /// Never read: the library lists the representation's data itself.
    public var body: Never {
        return transferRepresentationHasNoBody(Self.self)
    }

    var entryList: Any {
        first.flattenedEntries + second.flattenedEntries
    }
}

/// A representation or none, from an `if` without `else`.
public struct OptionalTransferRepresentation<Wrapped: TransferRepresentation>: TransferRepresentation,
    PrimitiveTransferRepresentation
{
    /// The type the wrapped representation transfers.
    public typealias Item = Wrapped.Item

    let wrapped: Wrapped?

    init(_ wrapped: Wrapped?) {
        self.wrapped = wrapped
    }

    /// Never read: the library lists the representation's data itself.
    public var body: Never {
        return transferRepresentationHasNoBody(Self.self)
    }

    var entryList: Any {
        wrapped?.flattenedEntries ?? []
    }
}

/// One of two representations, from an `if`–`else` or a `switch`.
public struct EitherTransferRepresentation<First: TransferRepresentation, Second: TransferRepresentation>:
    TransferRepresentation, PrimitiveTransferRepresentation
where First.Item == Second.Item {
    /// The type both representations transfer.
    public typealias Item = First.Item

    enum Storage {
        case first(First)
        case second(Second)
    }

    let storage: Storage

    /// Never read: the library lists the representation's data itself.
    public var body: Never {
        return transferRepresentationHasNoBody(Self.self)
    }

    var entryList: Any {
        switch storage {
        case .first(let first): first.flattenedEntries
        case .second(let second): second.flattenedEntries
        }
    }
}

/// Any representation of `Item`, its type erased.
///
/// ```swift
/// let representation = AnyTransferRepresentation(CodableRepresentation(for: Profile.self, contentType: .profile))
/// ```
public struct AnyTransferRepresentation<Item: Transferable>: TransferRepresentation, PrimitiveTransferRepresentation {
    let entries: [TransferEntry<Item>]

    /// Wraps a representation.
    public init<Content: TransferRepresentation>(_ content: Content) where Content.Item == Item {
        entries = content.flattenedEntries
    }

    /// Never read: the library lists the representation's data itself.
    public var body: Never {
        return transferRepresentationHasNoBody(Self.self)
    }

    var entryList: Any {
        entries
    }
}
