#if compiler(>=6.2)
/// A type whose values can go onto a pasteboard and come back, as Apple's CoreTransferable
/// `Transferable`.
///
/// A conforming type lists its representations in ``transferRepresentation``, richest
/// first. Writing a value offers every representation it can export, in that order; reading
/// takes the first representation it can import that the pasteboard holds.
///
/// ```swift
/// extension UTType {
///     static let profile = UTType(exportedAs: "com.example.profile", conformingTo: .json)
/// }
///
/// struct Profile: Codable, Transferable {
///     var name: String
///
///     static var transferRepresentation: some TransferRepresentation {
///         CodableRepresentation(contentType: .profile)   // apps that know profiles
///         ProxyRepresentation(exporting: \.name)          // everyone else gets text
///     }
/// }
/// ```
///
/// `String`, `Data`, `URL` and `AttributedString` conform out of the box.
///
/// ## Concurrency
///
/// As on Apple platforms, `Transferable` does not require `Sendable`: a pasteboard exports a
/// value and imports a new one, and never shares one between tasks. The closures given to
/// representations are `@Sendable` and `async`, as Apple's are, so they must not capture
/// mutable state. The conformance itself must not be isolated to an actor (the protocol
/// refines `SendableMetatype`), since representations are listed and run from any task.
public protocol Transferable: SendableMetatype {
    /// The type of ``transferRepresentation``.
    associatedtype Representation: TransferRepresentation

    /// The representations of the type, richest first, built with
    /// ``TransferRepresentationBuilder``.
    @TransferRepresentationBuilder<Self> static var transferRepresentation: Representation { get }
}
#else
/// A type whose values can go onto a pasteboard and come back, as Apple's CoreTransferable
/// `Transferable` (the declaration for compilers before Swift 6.2, which lack
/// `SendableMetatype`; see the other declaration for the documentation).
public protocol Transferable {
    /// The type of ``transferRepresentation``.
    associatedtype Representation: TransferRepresentation

    /// The representations of the type, richest first, built with
    /// ``TransferRepresentationBuilder``.
    @TransferRepresentationBuilder<Self> static var transferRepresentation: Representation { get }
}
#endif

/// A way of turning a ``Transferable`` value into data of one content type and back, or a
/// group of such ways.
///
/// Use the library's representations (``CodableRepresentation``, ``DataRepresentation``,
/// ``FileRepresentation``, ``ProxyRepresentation``) and their modifiers
/// (`exportingCondition(_:)`, `visibility(_:)`, `suggestedFileName(_:)`), or
/// group them in a type of your own whose ``body`` lists them (name ``Item``: it is not
/// inferred from the body):
///
/// ```swift
/// struct ProfileRepresentations: TransferRepresentation {
///     typealias Item = Profile
///     var body: some TransferRepresentation<Profile> {
///         CodableRepresentation(contentType: .profile)
///         ProxyRepresentation(exporting: \.name)
///     }
/// }
/// ```
public protocol TransferRepresentation<Item> {
    /// The type the representation transfers.
    associatedtype Item: Transferable

    /// The type of ``body``; `Never` for the library's own representations.
    associatedtype Body: TransferRepresentation

    /// The representations this one is made of, in order.
    @TransferRepresentationBuilder<Item> var body: Body { get }
}

extension Never: Transferable {
    /// `Never` has no representations; the property is never read.
    public static var transferRepresentation: Never {
        fatalError("Never has no transfer representation")
    }
}

extension Never: TransferRepresentation {
    /// `Never` transfers nothing.
    public typealias Item = Never

    /// There is no value of `Never`, so there is no body.
    public var body: Never {
        fatalError("Never has no body")
    }
}
