import DBus

/// One of the desktop's two selections.
public enum DesktopSelection: String, Sendable, CaseIterable, CustomStringConvertible {
    /// What Ctrl-C and Ctrl-V use: X11 `CLIPBOARD`, the Wayland selection.
    case clipboard
    /// What selecting text sets and a middle click pastes: X11 `PRIMARY`, the Wayland primary
    /// selection.
    case primary

    public var description: String { rawValue }
}

/// What pasteboardd offers the desktop while it owns a selection.
public struct DesktopOffer: Sendable {
    /// The types announced to other apps, in order, richest first, exactly as they are to be
    /// announced (the bridge adds the text aliases and hints the desktop expects).
    public let types: [String]
    /// Opens one type's data: a descriptor that reads from its start to the data's end (a file,
    /// a memfd or a pipe). Called off the display thread, once per request of an app; what it
    /// throws is reported to the requesting app as a refusal.
    public let open: @Sendable (String) async throws -> UnixFileDescriptor

    public init(types: [String], open: @escaping @Sendable (String) async throws -> UnixFileDescriptor) {
        self.types = types
        self.open = open
    }
}

/// A selection another app owns: its types, and a way to ask that app for the data.
///
/// Valid until the display system says the selection changed again; fetching from a source
/// that is no longer the owner fails with ``DesktopClipboardError/ownerGone(_:)``.
public protocol DesktopSource: AnyObject, Sendable {
    /// The types the owning app offers, as it names them (MIME types and, on X11, also atoms
    /// such as `UTF8_STRING`; the display system's own targets such as `TARGETS` left out).
    var types: [String] { get }

    /// Asks the owning app for the data of `type` (one of ``types``).
    ///
    /// - Parameter maxBytes: The most the caller takes. A source that gathers the data before
    ///   handing it over (X11's) stops after one byte more, so that the caller, reading, sees
    ///   it is too large; an app sending without end cannot fill the memory meanwhile.
    /// - Returns: A descriptor that reads the data to its end (a pipe the app writes into, or a
    ///   memfd already filled). The caller reads it; it is closed when released.
    /// - Throws: ``DesktopClipboardError`` when the app is gone, refuses, or does not answer
    ///   within `timeout`.
    func fetch(_ type: String, timeout: Duration, maxBytes: UInt64) async throws(DesktopClipboardError) -> UnixFileDescriptor

    /// Whether this is still the selection, once the display system has reported everything
    /// that happened until now.
    ///
    /// A fetch through a pipe ends when the app closes it, which it also does by quitting
    /// halfway: data read to its end is complete only if its app still owns the selection then.
    /// A source whose fetches tell a whole answer from one cut short (X11's) answers true.
    func isStillTheSelection() async -> Bool
}

/// What a display system's clipboard tells the bridge.
public protocol DesktopClipboardDelegate: AnyObject, Sendable {
    /// Another app became the owner of `selection` (`source`), or nobody owns it any more
    /// (nil: the owning app quit, or the selection was cleared). Never called for the
    /// selections pasteboardd owns itself: a change it made never comes back.
    ///
    /// Called on the display thread, in the order the display system reported the changes;
    /// return quickly.
    func desktopSelectionChanged(_ selection: DesktopSelection, source: (any DesktopSource)?)

    /// An app emptied `selection` on purpose (a password manager clearing a secret, `xsel -c`).
    /// X11 tells this apart from an owner that quit (`desktopSelectionChanged` with no source);
    /// Wayland's data-control protocol does not, and reports both as the latter.
    func desktopSelectionCleared(_ selection: DesktopSelection)

    /// The connection to the display ended (the display server quit or closed it). Nothing is
    /// called after this.
    func desktopConnectionLost(_ reason: String)
}

extension DesktopClipboardDelegate {
    /// A delegate that does not tell a clear from an owner that quit.
    public func desktopSelectionCleared(_ selection: DesktopSelection) {
        desktopSelectionChanged(selection, source: nil)
    }
}

extension DesktopClipboard {
    /// Makes pasteboardd (or the app this is) the owner of `selection`, whatever was reported.
    public func own(_ selection: DesktopSelection, _ offer: DesktopOffer) {
        own(selection, offer, reportsSeen: .max)
    }
}

/// One display system's clipboard and primary selection (X11 or Wayland), driven from a thread
/// of its own so that nothing it does waits on the bus, and nothing on the bus waits on it.
public protocol DesktopClipboard: AnyObject, Sendable {
    /// What it is connected to, for logs and `pbctl info`: "X11 display :1",
    /// "Wayland display wayland-1 (zwlr_data_control_manager_v1)".
    var description: String { get }

    /// The selections this display system has (a Wayland compositor may have no primary
    /// selection).
    var selections: Set<DesktopSelection> { get }

    /// Makes pasteboardd the owner of `selection`, offering `offer` until another app takes it
    /// or ``own(_:_:reportsSeen:)`` or ``clear(_:)`` is called again. Returns at once; apps'
    /// requests are then answered through `offer.open`, off the display thread.
    ///
    /// Unless the delegate has been told of more than `reportsSeen` changes of `selection` since
    /// this connection began, by the time the display thread gets to it: an app's copy reported
    /// after the caller decided is newer than what it meant to offer, and must not be overtaken
    /// (the app would lose the selection to contents the pasteboard no longer holds). Each call
    /// of ``DesktopClipboardDelegate/desktopSelectionChanged(_:source:)`` or
    /// ``DesktopClipboardDelegate/desktopSelectionCleared(_:)`` is one.
    func own(_ selection: DesktopSelection, _ offer: DesktopOffer, reportsSeen: Int)

    /// Empties `selection`, whoever owns it (pasteboardd, or the app whose copy the pasteboard
    /// no longer holds), as when its owner quits; the delegate is not told of it. An app's copy
    /// made since the last change reported to the delegate is newer than the request, and stays.
    func clear(_ selection: DesktopSelection)

    /// Disconnects from the display; the delegate hears nothing more.
    func close()
}

/// Why a desktop clipboard could not connect, or could not fetch an app's data.
public enum DesktopClipboardError: Error, Sendable, Equatable, CustomStringConvertible {
    /// The display cannot be reached (not yet, or no more).
    case unavailable(String)
    /// The display answers, but lacks what the bridge needs (a data-control protocol,
    /// XFixes): asking it again will not help.
    case unsupported(String)
    /// The app that owned the selection has quit or been replaced as the owner.
    case ownerGone(String)
    /// The owning app refused to convert to the type, or sent something unusable.
    case refused(String)
    /// The owning app did not answer in time.
    case timedOut(String)

    public var description: String {
        switch self {
        case .unavailable(let message), .unsupported(let message), .ownerGone(let message), .refused(let message), .timedOut(let message):
            message
        }
    }
}
