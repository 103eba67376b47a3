import PasteboardModel

extension UTType {
    /// Whether data of this type can serve a request for `other`.
    ///
    /// The rules agree with the server wherever the server can tell, and add what only the
    /// client knows:
    /// 1. Every type conforms to itself and to `.item`; every type but `.item` and `.content`
    ///    conforms to `.data`, as everything conforms to `application/octet-stream` on the
    ///    server (`inode/…` types excepted).
    /// 2. Between MIME types, the freedesktop shared-mime-info database decides, through
    ///    `MIMEDatabase.shared`, as on the server: `.html` conforms to `.plainText`,
    ///    `.utf8PlainText` to `.plainText`, `.json` to `.text`. Types that share a MIME type are
    ///    interchangeable on the pasteboard, so `.url` and `.fileURL` conform to each other,
    ///    and so do `.text` and `.plainText`.
    /// 3. The abstract types are matched by MIME prefix: `image/…` conforms to `.image`,
    ///    `video/…` to `.movie`, `audio/…` to `.audio`, both to `.audiovisualContent`.
    /// 4. Then Apple's hierarchy and the declarations made with
    ///    ``init(exportedAs:conformingTo:)``, followed transitively: `.png` → `.image` →
    ///    `.content`, `com.example.todo` → `.json` → `.text`.
    ///
    /// ```swift
    /// UTType.utf8PlainText.conforms(to: .plainText)   // true
    /// UTType.plainText.conforms(to: .utf8PlainText)   // false: the charset is unknown
    /// UTType.png.conforms(to: .image)                 // true
    /// UTType.image.conforms(to: .png)                 // false
    /// UTType(mimeType: "image/x-xcf")!.conforms(to: .image)   // true
    /// ```
    ///
    /// - Parameter other: The type asked for.
    public func conforms(to other: UTType) -> Bool {
        var visited: Set<String> = []
        return conforms(to: other, visited: &visited)
    }

    /// Whether `other` conforms to this type.
    public func isSupertype(of other: UTType) -> Bool {
        other.conforms(to: self)
    }

    /// Whether this type conforms to `other` and is not `other`.
    public func isSubtype(of other: UTType) -> Bool {
        self != other && conforms(to: other)
    }

    /// Every type this one conforms to, itself excepted, as Apple's `supertypes`: its
    /// parents and theirs, the MIME database's supertypes of its MIME type, `.data` (for types
    /// of bytes) and `.item`.
    ///
    /// ```swift
    /// UTType.png.supertypes.contains(.image)        // true
    /// UTType.html.supertypes.contains(.plainText)   // true
    /// ```
    public var supertypes: Set<UTType> {
        var found: Set<UTType> = []
        var frontier = [self]
        while let type = frontier.popLast() {
            var next = type.parents
            if let mime = type.mimeType {
                next += MIMEDatabase.shared.supertypes(of: mime).keys.compactMap { UTType(mimeType: $0) }
            }
            for parent in next where parent != self && found.insert(parent).inserted {
                frontier.append(parent)
            }
        }
        if conforms(to: .data), self != .data { found.insert(.data) }
        if self != .item { found.insert(.item) }
        return found
    }

    /// How far this type is from `other` when it conforms to it, for picking the closest of an
    /// item's types: 0 for the same type, the server's distance between MIME types,
    /// `MIMEDatabase.octetStreamDistance` for `.data`, and 500 for a conformance only the
    /// client knows (an abstract or declared type); `nil` when it does not conform.
    func conformanceDistance(to other: UTType) -> Int? {
        if self == other { return 0 }
        // Apple's folders and symbolic links are not `.data`, though the server's types all
        // are bytes: the answer is ``conforms(to:)``'s.
        if other.key == Keys.data, !conforms(to: other) { return nil }
        if let mine = pasteboardTypeValue, let theirs = other.pasteboardTypeValue, mine.isMIME, theirs.isMIME,
            let distance = MIMEDatabase.shared.conformanceDistance(from: mine, to: theirs)
        {
            return distance
        }
        guard conforms(to: other) else { return nil }
        if other == .data || other == .item { return MIMEDatabase.octetStreamDistance }
        return 500
    }

    private func conforms(to other: UTType, visited: inout Set<String>) -> Bool {
        if self == other || other.key == Keys.item { return true }
        guard visited.insert(key).inserted else { return false }
        let mine = mimeType
        if other.key == Keys.data {
            return key != Keys.item && key != Keys.content && !(mine?.essence.hasPrefix("inode/") ?? false)
        }
        if let mine, let theirs = other.mimeType, MIMEDatabase.shared.conforms(mine, to: theirs) {
            return true
        }
        if let mine, let prefixes = BuiltInTypes.prefixesByAbstractKey[other.key],
            prefixes.contains(where: { mine.essence.hasPrefix($0) })
        {
            return true
        }
        for parent in parents where parent.conforms(to: other, visited: &visited) {
            return true
        }
        return false
    }

    /// The validated MIME type, `nil` for a type without one.
    private var mimeType: PasteboardType? {
        guard let preferredMIMEType, let type = try? PasteboardType(validating: preferredMIMEType),
            type.isMIME
        else { return nil }
        return type
    }

    /// The filename extension for a file of this type: its own, else the nearest one of the
    /// types it conforms to, so that a `com.example.todo` declared as JSON is shared as
    /// `.json` and a receiving program opens it as such; nil when no type up to the abstract
    /// ones has one.
    var nearestFilenameExtension: String? {
        var visited: Set<String> = []
        var level = [self]
        while !level.isEmpty {
            for type in level {
                if let found = type.preferredFilenameExtension { return found }
            }
            level = level.flatMap(\.parents).filter { visited.insert($0.key).inserted }
        }
        return nil
    }

    /// The direct parents: built-in or declared ones, and the abstract types a MIME type
    /// belongs to (text, image, movie, audio).
    private var parents: [UTType] {
        var parents: [UTType] = []
        if let entry = BuiltInTypes.byKey[key] {
            parents += entry.parents.map(BuiltInTypes.type)
        } else if let declaration = UTTypeRegistry.shared.declaration(forKey: key) {
            parents += declaration.parents
        }
        if let mime = mimeType {
            if MIMEDatabase.shared.conforms(mime, to: .plainText) {
                parents.append(.text)
            }
            for (abstractKey, prefixes) in BuiltInTypes.prefixesByAbstractKey
            where prefixes.count == 1 && mime.essence.hasPrefix(prefixes[0]) {
                parents.append(BuiltInTypes.type(abstractKey))
            }
        }
        return parents
    }

    private enum Keys {
        static let item = "public.item"
        static let content = "public.content"
        static let data = "public.data"
    }
}
