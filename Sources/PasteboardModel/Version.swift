/// pasteboardd's version: what `pasteboardd --version`, `pbctl --version`, the `Version`
/// property and the Debian package say. Follows Semantic Versioning; see CHANGELOG.md.
public enum PasteboarddVersion {
    public static let current = "0.2.0"
}
