import DBus
import Foundation

/// The model behind a Share button, as SwiftUI's `ShareLink`: it shares a ``Transferable``
/// item through the desktop portals, Linux's nearest thing to a share sheet.
///
/// ```swift
/// let link = ShareLink(item: profile, subject: "Ada's profile", message: "For the meeting",
///                      preview: SharePreview("Ada's profile"))
/// // show the toolkit's Share button when link.isAvailable, and on click:
/// switch try await link.share() {            // the app chooser
/// case .shared: break
/// case .cancelled: break                     // the person closed the dialog
/// }
/// try await link.share(via: .email(to: ["grace@example.com"]))
/// ```
///
/// Sharing exports the item through its ``Transferable/transferRepresentation`` with the same
/// rule as writing it to a pasteboard, and takes the first representation (the richest), so
/// list the one other programs should open first. A ``FileRepresentation`` shares its file, and
/// a file URL the file it names; data is written to a new temporary file named by
/// `suggestedFileName(_:)`, else by the preview's title, with the content type's extension.
/// The file is opened read-only and handed to the portal as a file descriptor
/// (`org.freedesktop.portal.OpenURI.OpenFile`, or `attachment_fds` of
/// `org.freedesktop.portal.Email.ComposeEmail`). A web link (a `URL` that is not a file) is
/// handed over as itself: `OpenURI.OpenURI` in the app chooser, after the message in an email's
/// body.
///
/// Representations whose `exportingCondition` refuses the item, and `.ownProcess` ones, are not
/// offered; when none is left the item is not shareable (``isAvailable`` is false and
/// ``share(via:parentWindow:)`` throws ``ShareError/Code/notShareable``).
///
/// A temporary file is removed when the share fails or is cancelled. When the portal has taken
/// it, it is left in the temporary folder: the program the person chose opens it by its path,
/// possibly after the portal has answered.
///
/// A share never touches a pasteboard.
///
/// The link is `Sendable` when its item is, so a main-actor view model can keep one and call
/// ``share(via:parentWindow:)`` from a button's action.
public struct ShareLink<Item: Transferable> {
    /// What is shared.
    public let item: Item
    /// The email's subject; the app chooser has no place for it.
    public let subject: String?
    /// The email's body; the app chooser has no place for it.
    public let message: String?
    /// Names the shared file when the item's representation suggests no name.
    public let preview: SharePreview?
    /// The bus the portal is on: nil for the session bus, which is where desktops run it.
    public let address: String?

    /// Where temporary files are made; the tests point it at a folder they check.
    var temporaryRoot = FileManager.default.temporaryDirectory

    /// A link to share `item`.
    ///
    /// - Parameters:
    ///   - item: The value to share.
    ///   - subject: The subject of an email it is shared by.
    ///   - message: The body of an email it is shared by.
    ///   - preview: Its title, naming the shared file when the item suggests no name.
    ///   - address: The bus of the desktop portal; nil (the default) for the session bus.
    public init(item: Item, subject: String? = nil, message: String? = nil, preview: SharePreview? = nil, address: String? = nil) {
        self.item = item
        self.subject = subject
        self.message = message
        self.preview = preview
        self.address = address
    }

    /// Whether the item offers a representation to share: one that exports, whose
    /// `exportingCondition` holds, and that is not `.ownProcess`. Bind the Share button's
    /// visibility or sensitivity to it.
    ///
    /// Read from the representations alone, without exporting anything. A `ProxyRepresentation`
    /// checks its proxy type's conditions only when exporting, so ``share(via:parentWindow:)``
    /// may still find nothing to share for it.
    public var isAvailable: Bool {
        Item.transferEntries.contains { entry in
            entry.export != nil && entry.visibility != .ownProcess && entry.isExportable(item)
        }
    }

    /// Exports the item and hands it to the desktop portal `destination`, then waits for the
    /// person to finish with the portal's dialog.
    ///
    /// - Parameters:
    ///   - destination: The app chooser (the default) or an email.
    ///   - parentWindow: The window the portal's dialog belongs to, as the portals spell it
    ///     (`x11:` and the window id in hex, or `wayland:` and an exported surface handle);
    ///     empty for none.
    /// - Returns: `.shared` once the portal has taken the item, `.cancelled` when the person
    ///   dismissed the dialog.
    /// - Throws: ``ShareError``: `.notShareable` when the item offers nothing to share,
    ///   `.portalMissing` (naming what to install) when no portal, or none with the
    ///   destination's interface, is on the bus, `.failed` when the portal fails; what the
    ///   item's exporter throws; `CancellationError` when the task is cancelled (the dialog is
    ///   closed).
    @discardableResult
    public func share(via destination: ShareDestination = .appChooser, parentWindow: String = "") async throws -> ShareOutcome {
        let content = try await ShareContent.export(item, preview: preview, in: temporaryRoot)
        let outcome: ShareOutcome
        do {
            outcome = try await send(content, to: destination, parentWindow: parentWindow)
        } catch {
            content.discard()
            throw error
        }
        if outcome == .cancelled { content.discard() }
        return outcome
    }

    /// The portal call for `destination`: the file's descriptor, or the link.
    private func send(_ content: ShareContent, to destination: ShareDestination, parentWindow: String) async throws -> ShareOutcome {
        let portal = try DesktopPortal(address: address)
        defer { portal.close() }
        switch (destination.kind, content) {
        case (.appChooser, .file(let file)):
            return try await portal.request(
                interface: DesktopPortal.openURIInterface, method: "OpenFile",
                arguments: [.string(parentWindow), .unixFD(file.descriptor)],
                options: [("ask", .boolean(true)), ("writable", .boolean(false))])
        case (.appChooser, .link(let url)):
            return try await portal.request(
                interface: DesktopPortal.openURIInterface, method: "OpenURI",
                arguments: [.string(parentWindow), .string(url.absoluteString)],
                options: [("ask", .boolean(true))])
        case (.email(let to, let cc, let bcc), _):
            var options: [(String, DBusValue)] = []
            if !to.isEmpty { options.append(("addresses", .strings(to))) }
            if !cc.isEmpty { options.append(("cc", .strings(cc))) }
            if !bcc.isEmpty { options.append(("bcc", .strings(bcc))) }
            if let subject { options.append(("subject", .string(subject))) }
            switch content {
            case .file(let file):
                if let message { options.append(("body", .string(message))) }
                options.append(("attachment_fds", .array(element: "h", [.unixFD(file.descriptor)])))
            case .link(let url):
                // A link goes in the body, after the message.
                let body = [message, url.absoluteString].compactMap { $0 }.joined(separator: "\n\n")
                options.append(("body", .string(body)))
            }
            return try await portal.request(
                interface: DesktopPortal.emailInterface, method: "ComposeEmail",
                arguments: [.string(parentWindow)], options: options)
        }
    }
}

extension ShareLink: Sendable where Item: Sendable {}
