import PasteboardModel

/// The names people give `-t` that are not MIME types, from the tools their hands know:
/// `wl-paste -t text`, and X11's text targets as `xclip -t` takes them.
enum TypeNames {
    /// Names that stand for text.
    static let text: Set<String> = ["text", "TEXT", "STRING", "UTF8_STRING"]

    /// The types a paste asks for: a name for text asks for any text (`text/plain`, which every
    /// text type satisfies).
    static func forPaste(_ names: [String]) -> [String] {
        names.map { text.contains($0) ? "text/plain" : $0 }
    }

    /// The types a copy offers: a name for text offers UTF-8 text, and a type given again (in
    /// any spelling) is offered once, where it came first, rather than the copy refused.
    static func forCopy(_ names: [String]) -> [String] {
        var offered: [String] = []
        var seen: [PasteboardType] = []
        for name in names {
            let spelled = text.contains(name) ? "text/plain;charset=utf-8" : name
            // One the server will refuse is passed on as it is, for the server to say why.
            if let type = try? PasteboardType(validating: spelled) {
                guard !seen.contains(type) else { continue }
                seen.append(type)
            }
            offered.append(spelled)
        }
        return offered
    }
}
