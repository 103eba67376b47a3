// MARK: - NSPasteboard's spellings

/// The names AppKit's `NSPasteboard.PasteboardType` gives the common types, so that code
/// written against `NSPasteboard` reads the same here: `setString("hi", forType: .string)`.
/// Each is the `UTType` of the same identifier (`.string` is `public.utf8-plain-text`, as on
/// macOS); `.png`, `.tiff`, `.pdf`, `.html`, `.rtf` and `.fileURL` are spelled alike in both.
/// AppKit's `.URL` is `.url` here: a member named `URL` would hide Foundation's `URL` in every
/// extension of `UTType`, users' own included.
extension UTType {
    /// `public.utf8-plain-text` (`text/plain;charset=utf-8`): `NSPasteboard.PasteboardType.string`.
    public static let string = utf8PlainText
    /// `public.utf8-tab-separated-values-text` (`text/tab-separated-values;charset=utf-8`):
    /// `NSPasteboard.PasteboardType.tabularText`.
    public static let tabularText = utf8TabSeparatedText
}
