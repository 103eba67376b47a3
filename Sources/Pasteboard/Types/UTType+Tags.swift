import Foundation
import PasteboardModel

/// A kind of tag a type is known by elsewhere, as Apple's `UTTagClass`: a file name extension
/// or a MIME type.
///
/// ```swift
/// UTType(tag: "png", tagClass: .filenameExtension, conformingTo: nil)   // .png
/// UTType.png.tags[.mimeType]                                            // ["image/png"]
/// ```
public struct UTTagClass: RawRepresentable, Hashable, Sendable, CustomStringConvertible {
    /// Apple's identifier of the tag class (`public.filename-extension`).
    public let rawValue: String

    /// A tag class by its identifier. Only ``filenameExtension`` and ``mimeType`` find
    /// types on Linux.
    public init(rawValue: String) {
        self.rawValue = rawValue
    }

    /// File name extensions, without the dot: `png`, `tar.gz`.
    public static let filenameExtension = UTTagClass(rawValue: "public.filename-extension")
    /// MIME types: `image/png`.
    public static let mimeType = UTTagClass(rawValue: "public.mime-type")

    /// The identifier.
    public var description: String {
        rawValue
    }
}

// MARK: - Types from tags

extension UTType {
    /// The type of files with an extension, as Apple's `init(filenameExtension:conformingTo:)`.
    ///
    /// The extension is looked up in the types declared for every program (`pbctl types
    /// declare --extension`), then in the MIME database's file name patterns
    /// (shared-mime-info's `globs2`), then among the types this library knows. An extension
    /// nothing knows gives a dynamic type (``isDynamic``) conforming to `supertype`, as on
    /// Apple's platforms.
    ///
    /// ```swift
    /// UTType(filenameExtension: "png")                          // .png
    /// UTType(filenameExtension: "HTML")                         // .html
    /// UTType(filenameExtension: "png", conformingTo: .text)     // nil: a PNG is no text
    /// UTType(filenameExtension: "xyz")?.isDynamic               // true
    /// ```
    ///
    /// - Parameters:
    ///   - filenameExtension: The extension, without the leading dot.
    ///   - supertype: The type the result must conform to; `.data` by default, which every
    ///     type of bytes conforms to.
    /// - Returns: `nil` when a known type of that extension does not conform to `supertype`,
    ///   or when the extension is empty or not printable ASCII.
    public init?(filenameExtension: String, conformingTo supertype: UTType = .data) {
        self.init(tag: filenameExtension, tagClass: .filenameExtension, conformingTo: supertype)
    }

    /// The type of a tag, as Apple's `init(tag:tagClass:conformingTo:)`: the first of
    /// ``types(tag:tagClass:conformingTo:)``, else a dynamic type for the tag.
    ///
    /// - Parameters:
    ///   - tag: A file name extension (without the dot) or a MIME type.
    ///   - tagClass: Which of the two `tag` is.
    ///   - supertype: The type the result must conform to; `nil` for any.
    /// - Returns: `nil` when a type is known for the tag but none conforms to `supertype`,
    ///   or when the tag cannot name a type (empty, not printable ASCII).
    public init?(tag: String, tagClass: UTTagClass, conformingTo supertype: UTType?) {
        let tag = Self.normalized(tag, tagClass)
        let known = Self.knownTypes(tag: tag, tagClass: tagClass)
        if let type = known.first(where: { Self.type($0, conformsTo: supertype) }) {
            self = type
            return
        }
        guard known.isEmpty, let dynamic = Self.dynamicType(tag: tag, tagClass: tagClass, conformingTo: supertype) else {
            return nil
        }
        self = dynamic
    }

    /// Every known type of a tag that conforms to `supertype`, the likeliest first, as
    /// Apple's `types(tag:tagClass:conformingTo:)`; no dynamic types.
    ///
    /// ```swift
    /// UTType.types(tag: "py", tagClass: .filenameExtension, conformingTo: nil)
    /// // [.pythonScript]
    /// ```
    public static func types(tag: String, tagClass: UTTagClass, conformingTo supertype: UTType?) -> [UTType] {
        knownTypes(tag: normalized(tag, tagClass), tagClass: tagClass).filter { type($0, conformsTo: supertype) }
    }

    /// A file name extension without its leading dot, as Apple takes `.png` for `png`.
    private static func normalized(_ tag: String, _ tagClass: UTTagClass) -> String {
        tagClass == .filenameExtension && tag.hasPrefix(".") ? String(tag.dropFirst()) : tag
    }

    /// `.data` asks nothing of a type: any MIME type's bytes may stand on a pasteboard, a
    /// directory's (`inode/directory`) included.
    private static func type(_ type: UTType, conformsTo supertype: UTType?) -> Bool {
        guard let supertype, supertype != .data else { return true }
        return type.conforms(to: supertype)
    }

    private static func knownTypes(tag: String, tagClass: UTTagClass) -> [UTType] {
        var types: [UTType] = []
        func add(_ type: UTType?) {
            if let type, !types.contains(type) { types.append(type) }
        }
        switch tagClass {
        case .mimeType:
            add(UTType(mimeType: tag, conformingTo: .data))
        case .filenameExtension:
            guard !tag.isEmpty else { break }
            let database = MIMEDatabase.shared
            for declaration in database.declarations.all
            where declaration.extensions.contains(where: { $0.caseInsensitiveCompare(tag) == .orderedSame }) {
                add(UTType(declaration))
            }
            for mime in database.globs.mimeTypes(forExtension: tag) {
                add(UTType(mimeType: mime, conformingTo: .data))
            }
            BuiltInTypes.byExtension[tag.lowercased(), default: []].forEach(add)
        default:
            break
        }
        return types
    }

    /// The prefix of a dynamic type's identifier: `dyn.`, Apple's, then the tag class and the
    /// tag, so that the same tag always gives the same type.
    private static let dynamicPrefix = "dyn."
    /// The prefix of a dynamic type made for a file name extension, which follows it.
    private static let dynamicExtensionPrefix = dynamicPrefix + UTTagClass.filenameExtension.rawValue + "."

    private static func dynamicType(tag: String, tagClass: UTTagClass, conformingTo supertype: UTType?) -> UTType? {
        let identifier = dynamicPrefix + tagClass.rawValue + "." + tag.lowercased()
        guard !tag.isEmpty, !identifier.contains("/"), (try? PasteboardType(validating: identifier)) != nil else {
            return nil
        }
        let declaration = UTTypeRegistry.Declaration(
            identifier: identifier, preferredMIMEType: nil, parents: [supertype ?? .data], isExported: false)
        return UTTypeRegistry.shared.declare(declaration).type
    }

    // MARK: Tags of a type

    /// Whether the type was made for a tag nothing knows (``init(filenameExtension:conformingTo:)``
    /// with an unknown extension): its identifier begins with `dyn.`.
    public var isDynamic: Bool {
        identifier.hasPrefix(Self.dynamicPrefix)
    }

    /// Whether the identifier is one of Apple's public ones (`public.png`), which every
    /// platform knows by that name.
    public var isPublic: Bool {
        identifier.lowercased().hasPrefix("public.")
    }

    /// The type's tags: its MIME type and its file name extensions, the preferred first;
    /// a tag class with no tags is left out.
    ///
    /// ```swift
    /// UTType.html.tags    // [.mimeType: ["text/html"], .filenameExtension: ["html", "htm"]]
    /// ```
    public var tags: [UTTagClass: [String]] {
        var tags: [UTTagClass: [String]] = [:]
        if let preferredMIMEType { tags[.mimeType] = [preferredMIMEType] }
        let extensions = filenameExtensions
        if !extensions.isEmpty { tags[.filenameExtension] = extensions }
        return tags
    }

    /// The extensions of the type, the customary one first: its own, then those the MIME
    /// database gives its MIME type, in the order of the type's own entry (`diff` before
    /// `patch`), then of the file name patterns.
    var filenameExtensions: [String] {
        var extensions: [String] = []
        func add(_ fileExtension: String) {
            if !extensions.contains(where: { $0.caseInsensitiveCompare(fileExtension) == .orderedSame }) {
                extensions.append(fileExtension)
            }
        }
        if let own = BuiltInTypes.byKey[key]?.filenameExtension { add(own) }
        if identifier.hasPrefix(Self.dynamicExtensionPrefix) {
            add(String(identifier.dropFirst(Self.dynamicExtensionPrefix.count)))
        }
        let database = MIMEDatabase.shared
        if let declared = database.declarations.declaration(forIdentifier: key) {
            declared.extensions.forEach(add)
        }
        if let mime = pasteboardTypeValue, mime.isMIME {
            let canonical = database.resolvingAliases(mime.withoutParameters)
            database.entry(of: canonical)?.extensions.forEach(add)
            database.globs.extensions(of: canonical.rawValue).forEach(add)
        }
        return extensions
    }

    /// The description of the type for people, from the MIME database (`PNG image`); `nil`
    /// when the database has none, as for the abstract types.
    public var localizedDescription: String? {
        let database = MIMEDatabase.shared
        if let declared = database.declarations.declaration(forIdentifier: key), !declared.comment.isEmpty {
            return declared.comment
        }
        guard let mime = pasteboardTypeValue, mime.isMIME,
            let comment = database.entry(of: database.resolvingAliases(mime.withoutParameters))?.comment, !comment.isEmpty
        else { return nil }
        return comment
    }

    /// Where the type is documented; always `nil` on Linux, where declarations carry no URL.
    public var referenceURL: URL? {
        nil
    }

    /// The version of the type's declaration; always `nil` on Linux.
    public var version: Int? {
        nil
    }
}
