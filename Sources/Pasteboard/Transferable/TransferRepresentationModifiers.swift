/// Who may read a representation, as Apple's `TransferRepresentationVisibility`.
///
/// On Linux there are no developer teams or app groups: the pasteboard can only tell one
/// process from another (its `owner-only` write option). ``ownProcess`` therefore means what it
/// says, while ``team`` and ``group`` are recorded for code shared with Apple platforms and
/// are best treated as ``all``.
///
/// ```swift
/// CodableRepresentation(contentType: .profile)
///     .visibility(.ownProcess)
/// ```
public struct TransferRepresentationVisibility: Hashable, Sendable, CustomStringConvertible {
    /// From most to least restrictive.
    enum Scope: Int, Comparable {
        case ownProcess
        case group
        case team
        case all

        static func < (lhs: Scope, rhs: Scope) -> Bool {
            lhs.rawValue < rhs.rawValue
        }
    }

    let scope: Scope

    /// Any process may read the representation. The default.
    public static let all = TransferRepresentationVisibility(scope: .all)
    /// Processes of the same developer team (Apple platforms).
    public static let team = TransferRepresentationVisibility(scope: .team)
    /// Processes of the same app group (macOS).
    public static let group = TransferRepresentationVisibility(scope: .group)
    /// Only the process that wrote the representation.
    public static let ownProcess = TransferRepresentationVisibility(scope: .ownProcess)

    /// `all`, `team`, `group` or `ownProcess`.
    public var description: String {
        switch scope {
        case .all: "all"
        case .team: "team"
        case .group: "group"
        case .ownProcess: "ownProcess"
        }
    }

    /// The more restrictive of the two: what a representation gets when `visibility(_:)` is
    /// applied both to it and to a group that contains it (or to a proxy that leads to it).
    func narrowed(to other: TransferRepresentationVisibility) -> TransferRepresentationVisibility {
        scope <= other.scope ? self : other
    }
}

extension TransferRepresentation {
    /// Offers the representation only for values that meet a condition.
    ///
    /// Applied to a group or a proxy, the condition applies to each representation in it;
    /// applied twice, both conditions must hold. Reading is not affected.
    ///
    /// ```swift
    /// DataRepresentation(contentType: .commaSeparatedText) { archive in
    ///     try archive.csvData()
    /// } importing: { data in
    ///     try ProfilesArchive(csvData: data)
    /// }
    /// .exportingCondition { archive in archive.supportsCSV }
    /// ```
    ///
    /// - Parameter condition: Whether to offer the representation for a value; it must be
    ///   quick, as it runs for every write.
    public func exportingCondition(
        _ condition: @escaping @Sendable (Item) -> Bool
    ) -> some TransferRepresentation<Item> {
        ModifiedTransferRepresentation(base: self) { entry in
            let previous = entry.isExportable
            return entry.with(isExportable: { item in previous(item) && condition(item) })
        }
    }

    /// Limits who may read the representation.
    ///
    /// When visibilities are applied at several levels (to a representation and to a group or
    /// a proxy containing it), the most restrictive one wins.
    ///
    /// - Parameter visibility: Who may read it; ``TransferRepresentationVisibility/all`` by
    ///   default.
    public func visibility(_ visibility: TransferRepresentationVisibility) -> some TransferRepresentation<Item> {
        ModifiedTransferRepresentation(base: self) { entry in
            entry.with(visibility: entry.visibility.narrowed(to: visibility))
        }
    }

    /// Suggests a file name to receivers that save the data as a file.
    ///
    /// When applied at several levels, the innermost one wins.
    ///
    /// ```swift
    /// FileRepresentation(exportedContentType: .mpeg4Movie) { video in
    ///     SentTransferredFile(video.file)
    /// }
    /// .suggestedFileName("My Video.mp4")
    /// ```
    ///
    /// - Parameter fileName: The file name, with its extension.
    public func suggestedFileName(_ fileName: String) -> some TransferRepresentation<Item> {
        suggestedFileName { _ in fileName }
    }

    /// Suggests a file name, worked out from the value, to receivers that save the data as a
    /// file.
    ///
    /// ```swift
    /// .suggestedFileName { video in video.title + ".mp4" }
    /// ```
    ///
    /// - Parameter fileName: The file name for a value, with its extension; `nil` for none.
    public func suggestedFileName(
        _ fileName: @escaping @Sendable (Item) -> String?
    ) -> some TransferRepresentation<Item> {
        ModifiedTransferRepresentation(base: self) { entry in
            entry.exportFileName == nil ? entry.with(exportFileName: fileName) : entry
        }
    }
}

/// A representation with a change applied to each of its entries: what the modifiers return.
struct ModifiedTransferRepresentation<Base: TransferRepresentation>: TransferRepresentation,
    PrimitiveTransferRepresentation
{
    typealias Item = Base.Item

    let base: Base
    let modify: (TransferEntry<Item>) -> TransferEntry<Item>

    var body: Never {
        return transferRepresentationHasNoBody(Self.self)
    }

    var entryList: Any {
        base.flattenedEntries.map(modify)
    }
}
