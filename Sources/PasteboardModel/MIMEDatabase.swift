/// Which types conform to which, by the freedesktop shared-mime-info database.
///
/// A reader asking for `text/plain` is glad of `text/html`; one asking for
/// `application/octet-stream` takes anything. The database (the `mime/subclasses` and
/// `mime/aliases` files every Linux desktop installs) says which types are kinds of which,
/// and which names are other spellings of one type. It is read directly, not through GLib,
/// so the model needs nothing but Foundation.
///
/// ```swift
/// let database = MIMEDatabase.shared
/// database.conforms(.html, to: .plainText)                           // true
/// database.conforms(.plainText, to: .utf8PlainText)                  // false: charset unknown
/// database.conformanceDistance(from: .utf8PlainText, to: .plainText)  // 1
/// database.conformanceDistance(from: .png, to: .octetStream)          // octetStreamDistance
/// ```
///
/// The rules, applied in order:
/// 1. Aliases are resolved on both sides (`application/x-pdf` is `application/pdf`); the same
///    type conforms at distance 0.
/// 2. Parameters: a type conforms to one asking for a subset of its parameters, so
///    `text/plain;charset=utf-8` conforms to `text/plain` (distance + 1); a request with a
///    parameter is satisfied only by types carrying the same parameter.
/// 3. The essences must conform: by the database's subclass chains (transitively, distance
///    + 2 per step, so that a subclass is never closer than the asked-for type with extra
///    parameters), every `text/*` to `text/plain`, and every type, identifiers like
///    `com.example.todo` included, to `application/octet-stream` at ``octetStreamDistance``,
///    the largest distance. `inode/*` types too, which shared-mime-info does not count as
///    streams of bytes: on a pasteboard every type is bytes, and a reader asking for any bytes
///    takes them (the contract's "every type").
///
/// The value is immutable and `Sendable`; every table is built once, when it is created.
public struct MIMEDatabase: Sendable {
    /// The distance at which any type conforms to `application/octet-stream`, larger than
    /// any real subclass chain, so that bytes are the last choice.
    public static let octetStreamDistance = 1_000

    /// Whether the database files were missing and the small built-in table is in use.
    public let isBuiltIn: Bool

    /// Lowercased alias → lowercased canonical type.
    let canonicalByAlias: [String: String]

    /// Lowercased canonical type → its direct parents, canonical, in file order.
    let parentsByType: [String: [String]]

    /// Every ancestor of each type that has parents, with its distance; built once so a
    /// lookup is two dictionary reads.
    let ancestorsByType: [String: [String: Int]]

    /// The types declared in the database's packages with an identifier (`com.example.todo`):
    /// an identifier conforms as its declared MIME type does.
    public let declarations: DeclaredTypes

    /// The XDG data directories it was read from, most important first (none for a database
    /// made of text).
    let directories: [String]

    /// The files read from `directories` on demand (``entry(of:)``, ``globs``).
    let onDemand = MIMEDatabaseFiles()

    /// A database from the text of shared-mime-info's `subclasses` and `aliases` files.
    ///
    /// Each line is two types separated by a space: `child parent` in `subclasses`,
    /// `alias canonical` in `aliases`. Blank lines and lines starting with `#` are skipped.
    /// When an alias is listed twice, the first line wins.
    ///
    /// - Parameters:
    ///   - subclasses: The text of one or more `subclasses` files, most important first.
    ///   - aliases: The text of one or more `aliases` files, most important first.
    ///   - declarations: Declared types; their parents count as subclass lines too, so a
    ///     package read before `update-mime-database` has run is already honoured.
    public init(subclasses: String, aliases: String, declarations: DeclaredTypes = .none) {
        self.init(subclasses: subclasses, aliases: aliases, isBuiltIn: false, declarations: declarations)
    }

    init(subclasses: String, aliases: String, isBuiltIn: Bool, declarations: DeclaredTypes = .none, directories: [String] = []) {
        self.isBuiltIn = isBuiltIn
        self.declarations = declarations
        self.directories = directories

        var canonicalByAlias: [String: String] = [:]
        for (alias, canonical) in Self.pairs(in: aliases) where alias != canonical {
            if canonicalByAlias[alias] == nil {
                canonicalByAlias[alias] = canonical
            }
        }
        self.canonicalByAlias = canonicalByAlias

        var parentsByType: [String: [String]] = [:]
        let declared = declarations.all.flatMap { declaration in
            declaration.parents.map { (declaration.mimeType.essence, $0.essence) }
        }
        for (child, parent) in Self.pairs(in: subclasses) + declared {
            let child = Self.resolve(child, in: canonicalByAlias)
            let parent = Self.resolve(parent, in: canonicalByAlias)
            guard child != parent else { continue }
            if !parentsByType[child, default: []].contains(parent) {
                parentsByType[child, default: []].append(parent)
            }
        }
        self.parentsByType = parentsByType

        var ancestorsByType: [String: [String: Int]] = [:]
        for type in parentsByType.keys {
            ancestorsByType[type] = Self.ancestors(of: type, parentsByType: parentsByType)
        }
        self.ancestorsByType = ancestorsByType
    }

    // MARK: Conformance

    /// Whether data of `type` can serve a request for `other`.
    ///
    /// - Parameters:
    ///   - type: The type offered.
    ///   - other: The type asked for.
    public func conforms(_ type: PasteboardType, to other: PasteboardType) -> Bool {
        conformanceDistance(from: type, to: other) != nil
    }

    /// How far `type` is from `other` when it conforms to it: 0 for the same type, 2 for each
    /// step up a subclass chain and 1 for extra parameters, ``octetStreamDistance`` for
    /// `application/octet-stream` (whatever the parameters); `nil` when it does not conform.
    ///
    /// Used to pick, among an item's types, the one closest to what was asked for.
    ///
    /// - Parameters:
    ///   - type: The type offered.
    ///   - other: The type asked for.
    public func conformanceDistance(from type: PasteboardType, to other: PasteboardType) -> Int? {
        if type == other { return 0 }
        let offeredParameters = type.canonicalParameters
        let wantedParameters = other.canonicalParameters
        guard wantedParameters.isSubset(of: offeredParameters) else { return nil }
        let parameterDistance = offeredParameters.count > wantedParameters.count ? 1 : 0

        guard let essenceDistance = essenceDistance(from: type, to: other) else { return nil }
        // Every type is bytes alike: asked for `application/octet-stream`, an item's richest
        // type comes first, parameters or not.
        if essenceDistance >= Self.octetStreamDistance { return essenceDistance }
        // A subclass step outweighs extra parameters: asked for `text/plain`, an item offering
        // `text/html` and `text/plain;charset=utf-8` gives the plain text.
        return 2 * essenceDistance + parameterDistance
    }

    /// The index of the offered type closest to `request`, the earliest on a tie (items list
    /// their richest type first); `nil` when none conforms.
    ///
    /// - Parameters:
    ///   - request: The type asked for.
    ///   - offered: An item's types, in the item's order.
    public func indexOfBestMatch(for request: PasteboardType, in offered: [PasteboardType]) -> Int? {
        var best: (index: Int, distance: Int)?
        for (index, type) in offered.enumerated() {
            guard let distance = conformanceDistance(from: type, to: request) else { continue }
            if best == nil || distance < best!.distance {
                best = (index, distance)
            }
        }
        return best?.index
    }

    /// The same type with its MIME essence spelled canonically (`application/x-pdf` →
    /// `application/pdf`), parameters kept; identifiers and unaliased types are returned as
    /// they are.
    public func resolvingAliases(_ type: PasteboardType) -> PasteboardType {
        guard type.isMIME else { return type }
        let canonical = Self.resolve(type.essence, in: canonicalByAlias)
        guard canonical != type.essence else { return type }
        let parameters = type.rawValue.drop { $0 != ";" }
        return (try? PasteboardType(validating: canonical + parameters)) ?? type
    }

    /// The type `type` names, whatever its spelling: a declared identifier as its MIME type,
    /// a MIME alias as its canonical type. Two types with equal keys are one type (what an
    /// exact read takes), beyond what `PasteboardType`'s `==` (case, spaces) already says.
    public func sameTypeKey(_ type: PasteboardType) -> PasteboardType {
        resolvingAliases(declaredMIME(type))
    }

    /// The lowercased ancestors of a MIME essence with their distances, itself excluded.
    public func supertypes(of type: PasteboardType) -> [String: Int] {
        let type = declaredMIME(type)
        guard type.isMIME else { return [:] }
        return ancestors(ofEssence: Self.resolve(type.essence, in: canonicalByAlias))
    }

    /// The declared MIME type of an identifier (`com.example.todo` →
    /// `application/vnd.example.todo+json`); any other type as it is.
    public func declaredMIME(_ type: PasteboardType) -> PasteboardType {
        guard !type.isMIME, let declaration = declarations.declaration(forIdentifier: type.essence) else { return type }
        return declaration.mimeType
    }

    // MARK: Essences

    private func essenceDistance(from type: PasteboardType, to other: PasteboardType) -> Int? {
        // Data stored under a declared identifier, or asked for by one, is its MIME type.
        let type = declaredMIME(type)
        let other = declaredMIME(other)
        let offered = type.isMIME ? Self.resolve(type.essence, in: canonicalByAlias) : type.essence
        let wanted = other.isMIME ? Self.resolve(other.essence, in: canonicalByAlias) : other.essence
        if offered == wanted, type.isMIME == other.isMIME { return 0 }
        if other.isMIME, wanted == Self.octetStream || wanted == Self.anyType {
            return Self.octetStreamDistance
        }
        // A media type's wildcard (`image/*`), or an abstract Apple type standing for one
        // (`public.image`), is a supertype of every type of that media type, as xdgmime and
        // GIO's `g_content_type_is_a` read a wildcard: "any image" in one request.
        let wildcard = other.isMIME ? wanted : PasteboardType.requestWildcards[wanted]
        if type.isMIME, let wildcard, let media = Self.wildcardMedia(wildcard) {
            if Self.media(of: offered) == media || Self.media(of: type.essence) == media { return 1 }
            // Or one of its supertypes is of that media type, or is the wildcard itself (a type
            // declared `--conforms-to public.image`).
            return ancestors(ofEssence: offered).compactMap { ancestor, steps in
                ancestor == wildcard ? steps : Self.media(of: ancestor) == media ? steps + 1 : nil
            }.min()
        }
        guard type.isMIME, other.isMIME else { return nil }
        var distance = ancestors(ofEssence: offered)[wanted]
        // An alias outside text/* of a text/* spelling (text/rtf → application/rtf) is still text.
        if wanted == Self.plainText, type.essence.hasPrefix("text/") {
            distance = min(distance ?? 1, 1)
        }
        return distance
    }

    private func ancestors(ofEssence essence: String) -> [String: Int] {
        ancestorsByType[essence] ?? Self.ancestors(of: essence, parentsByType: parentsByType)
    }

    static let octetStream = "application/octet-stream"
    /// Any type at all, as `application/octet-stream` is asked for.
    static let anyType = "*/*"

    /// `image` of `image/*`; nil for a type that is no wildcard.
    static func wildcardMedia(_ essence: String) -> Substring? {
        guard essence.hasSuffix("/*") else { return nil }
        return essence.dropLast(2)
    }

    /// The media types of the IANA registry, whose wildcards (`image/*`) a declared type may
    /// conform to.
    static let standardMedia: Set<Substring> = ["application", "audio", "font", "image", "message", "model", "multipart", "text", "video"]

    /// `image` of `image/png`.
    static func media(of essence: String) -> Substring {
        essence.prefix { $0 != "/" }
    }
    static let plainText = "text/plain"

    /// Breadth-first walk up the subclass graph, so each ancestor gets its shortest distance;
    /// the visited set makes cycles in a broken database harmless.
    static func ancestors(of type: String, parentsByType: [String: [String]]) -> [String: Int] {
        var distances: [String: Int] = [type: 0]
        var frontier = [type]
        var depth = 0
        while !frontier.isEmpty {
            depth += 1
            var next: [String] = []
            for current in frontier {
                var parents = parentsByType[current] ?? []
                if current.hasPrefix("text/"), current != plainText {
                    parents.append(plainText)
                }
                for parent in parents where distances[parent] == nil {
                    distances[parent] = depth
                    next.append(parent)
                }
            }
            frontier = next
        }
        distances[type] = nil
        return distances
    }

    /// Follows aliases to the canonical name, stopping on a loop.
    static func resolve(_ essence: String, in canonicalByAlias: [String: String]) -> String {
        var current = essence
        var seen: Set<String> = [essence]
        while let next = canonicalByAlias[current], seen.insert(next).inserted {
            current = next
        }
        return current
    }

    /// The `first second` pairs of a shared-mime-info file, lowercased.
    static func pairs(in text: String) -> [(String, String)] {
        text.split(whereSeparator: \.isNewline).compactMap { line in
            let fields = line.split(whereSeparator: \.isWhitespace)
            guard fields.count >= 2, !fields[0].hasPrefix("#") else { return nil }
            return (fields[0].lowercased(), fields[1].lowercased())
        }
    }
}

extension PasteboardType {
    /// The parameters as canonical `name=value` strings, for comparing parameter sets.
    var canonicalParameters: Set<String> {
        Set(
            parameters.map { parameter in
                let value = parameter.name == "charset" ? parameter.value.lowercased() : parameter.value
                return parameter.name + "=" + TypeSyntax.canonicalValue(value)
            })
    }
}
