/// How a shared item is presented, as SwiftUI's `SharePreview`.
///
/// Linux's portals show no preview, so the title is what the receiver sees in another form:
/// it names the file a ``ShareLink`` shares when the item's representation suggests no file
/// name (`Ada's profile.json` rather than a generated name).
///
/// ```swift
/// ShareLink(item: profile, preview: SharePreview("Ada's profile"))
/// ```
///
/// SwiftUI's `image:` and `icon:` arguments have no counterpart: no portal would show them.
public struct SharePreview: Sendable, Hashable {
    /// What the shared item is called.
    public var title: String

    /// A preview with a title only.
    public init(_ title: String) {
        self.title = title
    }
}
