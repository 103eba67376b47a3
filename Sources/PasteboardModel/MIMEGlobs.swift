import Foundation

/// Which file name extensions go with which MIME types, by shared-mime-info's `mime/globs2`
/// files: what turns `png` into `image/png` and back.
///
/// Only the simple patterns count (`*.png`, `*.tar.gz`): the extension is what follows
/// `*.`, and a pattern with other wildcards (`*.so.[0-9]*`) or a literal file name
/// (`Makefile`) is no extension. As the specification asks, an extension is matched as
/// written first (`C` is C++, `c` is C), then in lowercase against the patterns not marked
/// case-sensitive (`PNG` is `png`).
///
/// ```swift
/// let globs = MIMEDatabase.shared.globs
/// globs.mimeTypes(forExtension: "PNG")    // ["image/png"]
/// globs.mimeTypes(forExtension: "C")      // ["text/x-c++src"]
/// globs.extensions(of: "text/html")       // ["html", "htm"]
/// ```
public struct MIMEGlobs: Sendable {
    /// Extension as written → MIME types, the heaviest pattern first.
    private let typesByExactExtension: [String: [String]]
    /// Lowercased extension → MIME types, the heaviest pattern first, of the patterns that are
    /// not case-sensitive.
    private let typesByExtension: [String: [String]]
    /// Lowercased MIME type → extensions, the heaviest pattern first.
    private let extensionsByType: [String: [String]]

    /// The tables of the text of one or more `globs2` files, most important first.
    ///
    /// Each line is `weight:type:pattern`, optionally followed by `:flags`; lines starting with
    /// `#` are comments. A file's `__NOGLOBS__` pattern for a type drops that type's patterns
    /// from the files after it (less important ones), as the specification asks.
    public init(globs2 files: [String]) {
        var entries: [(weight: Int, order: Int, type: String, extension: String, caseSensitive: Bool)] = []
        var dropped: Set<String> = []
        var order = 0
        for text in files {
            var droppedHere: Set<String> = []
            for line in text.split(whereSeparator: \.isNewline) where !line.hasPrefix("#") {
                let fields = line.split(separator: ":", maxSplits: 3, omittingEmptySubsequences: false)
                guard fields.count >= 3, let weight = Int(fields[0]) else { continue }
                let type = fields[1].lowercased()
                let pattern = fields[2]
                if pattern == "__NOGLOBS__" {
                    droppedHere.insert(type)
                    continue
                }
                guard !dropped.contains(type), pattern.hasPrefix("*."), pattern.count > 2 else { continue }
                let suffix = pattern.dropFirst(2)
                guard !suffix.contains(where: { "*?[]".contains($0) }) else { continue }
                let caseSensitive = fields.count == 4 && fields[3].split(separator: ",").contains("cs")
                entries.append((weight, order, type, String(suffix), caseSensitive))
                order += 1
            }
            dropped.formUnion(droppedHere)
        }
        entries.sort { ($1.weight, $0.order) < ($0.weight, $1.order) }
        var typesByExactExtension: [String: [String]] = [:]
        var typesByExtension: [String: [String]] = [:]
        var extensionsByType: [String: [String]] = [:]
        func add(_ value: String, to key: String, in table: inout [String: [String]]) {
            if !(table[key]?.contains(value) ?? false) { table[key, default: []].append(value) }
        }
        for entry in entries {
            add(entry.type, to: entry.extension, in: &typesByExactExtension)
            if !entry.caseSensitive { add(entry.type, to: entry.extension.lowercased(), in: &typesByExtension) }
            add(entry.extension, to: entry.type, in: &extensionsByType)
        }
        self.typesByExactExtension = typesByExactExtension
        self.typesByExtension = typesByExtension
        self.extensionsByType = extensionsByType
    }

    /// The tables of the `mime/globs2` files under `directories` (XDG data directories, the
    /// most important first); empty when there are none.
    public init(directories: [String]) {
        self.init(globs2: directories.compactMap { directory in
            try? String(contentsOfFile: directory + "/mime/globs2", encoding: .utf8)
        })
    }

    /// The MIME types files ending in `.extension` have, the likeliest first; empty when none
    /// is known.
    public func mimeTypes(forExtension fileExtension: String) -> [String] {
        typesByExactExtension[fileExtension] ?? typesByExtension[fileExtension.lowercased()] ?? []
    }

    /// The extensions of files of `mimeType` (its essence: parameters are ignored), the
    /// customary one first; empty when none is known.
    public func extensions(of mimeType: String) -> [String] {
        let essence = mimeType.split(separator: ";", maxSplits: 1).first.map { $0.trimmingCharacters(in: .whitespaces) } ?? mimeType
        return extensionsByType[essence.lowercased()] ?? []
    }
}
