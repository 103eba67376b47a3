/// Where a ``ShareLink`` hands its item: one of the desktop portals, since Linux has no share
/// sheet.
///
/// ```swift
/// try await link.share()                                   // .appChooser
/// try await link.share(via: .email(to: ["ada@example.com"]))
/// ```
public struct ShareDestination: Sendable, Hashable, CustomStringConvertible {
    enum Kind: Sendable, Hashable {
        /// `org.freedesktop.portal.OpenURI.OpenFile` (`OpenURI` for a link) with `ask`.
        case appChooser
        /// `org.freedesktop.portal.Email.ComposeEmail` with the item attached.
        case email(to: [String], cc: [String], bcc: [String])
    }

    let kind: Kind

    /// The desktop's app chooser (`org.freedesktop.portal.OpenURI`: `OpenFile`, or `OpenURI` for
    /// a web link, with `ask`): the person picks the program that opens the shared item. The
    /// nearest thing to a share sheet, and the default.
    public static let appChooser = ShareDestination(kind: .appChooser)

    /// A new email in the person's mail program (`org.freedesktop.portal.Email`), with the item
    /// attached (a web link goes in the body instead), the link's subject as its subject and
    /// its message as its body.
    ///
    /// - Parameters:
    ///   - addresses: Recipients filled in; none leaves them to the person.
    ///   - cc: Copies.
    ///   - bcc: Blind copies.
    public static func email(to addresses: [String] = [], cc: [String] = [], bcc: [String] = []) -> ShareDestination {
        ShareDestination(kind: .email(to: addresses, cc: cc, bcc: bcc))
    }

    /// `appChooser`, or `email` with its recipients.
    public var description: String {
        switch kind {
        case .appChooser: "appChooser"
        case .email(let to, let cc, let bcc): "email(to: \(to), cc: \(cc), bcc: \(bcc))"
        }
    }
}

/// How a share ended, when it did not fail.
public enum ShareOutcome: Sendable, Hashable {
    /// The portal took the item: a program was chosen to open it, or the mail was composed.
    case shared
    /// The person dismissed the portal's dialog. Not an error: nothing happened.
    case cancelled
}
