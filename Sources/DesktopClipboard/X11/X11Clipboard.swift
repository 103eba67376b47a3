import CXCB
import DBus
import Foundation

/// The X11 clipboard (`CLIPBOARD`) and primary selection (`PRIMARY`), through libxcb.
///
/// Changes of owner are reported by XFixes as they happen (no polling). When another app owns a
/// selection, its `TARGETS` are asked once and reported as a ``DesktopSource``; its data is
/// converted only when fetched. When pasteboardd owns one, apps' `SelectionRequest`s are
/// answered: `TARGETS`, `TIMESTAMP`, `MULTIPLE` and every offered type, data larger than the
/// server takes in one request through `INCR`, read from the offered descriptor a step at a
/// time.
///
/// ```swift
/// let clipboard = try X11Clipboard.connect(display: ":1", delegate: bridge)
/// clipboard.own(.clipboard, DesktopOffer(types: ["text/plain"]) { _ in try memoryFile("hello") })
/// ```
///
/// `@unchecked Sendable`: every stored property but `loop` is touched only on the loop's thread
/// (entry points from other threads submit their work there).
public final class X11Clipboard: DesktopClipboard, @unchecked Sendable {
    public let description: String
    public let selections: Set<DesktopSelection> = [.clipboard, .primary]

    let display: X11Display
    let loop: DisplayLoop
    private(set) var delegate: (any DesktopClipboardDelegate)?
    let selectionAtoms: [DesktopSelection: xcb_atom_t]
    let atoms: Atoms

    /// What pasteboardd offers on a selection it owns, and since when (the ICCCM has requests
    /// made before that refused).
    var owned: [DesktopSelection: (offer: DesktopOffer, since: xcb_timestamp_t)] = [:]
    /// Selections pasteboardd emptied itself: the "no owner" that follows is its own doing.
    var disowning: Set<DesktopSelection> = []
    /// Counts the owners each selection has had, so that work for an earlier one is dropped.
    var generations: [DesktopSelection: UInt64] = [:]
    /// The changes of each selection told to the delegate (see ``own(_:_:reportsSeen:)``).
    private(set) var reports: [DesktopSelection: Int] = [:]
    /// Conversions asked of other apps, by the property of ours they answer in.
    var conversions: [xcb_atom_t: Conversion] = [:]
    /// Properties free for the next conversion (each conversion needs its own).
    var freeProperties: [xcb_atom_t] = []
    /// `INCR` answers given up on as over the limit, still taken step by step and dropped (see
    /// ``drain(_:dropped:)``), by property: the deadline for their next step, and the bytes
    /// dropped so far.
    var draining: [xcb_atom_t: (deadline: UInt64, dropped: Int)] = [:]
    var propertiesMade = 0
    /// `INCR` answers in progress, by requestor and property.
    var sends: [SendKey: IncrementalSend] = [:]

    /// The atoms used in every exchange, interned once.
    struct Atoms {
        let targets, multiple, timestamp, incr, atomPair, utf8String, text, integer: xcb_atom_t
        var none: xcb_atom_t { xcb_atom_t(XCB_ATOM_NONE.rawValue) }
    }

    /// Connects to the X display `display` (a `DISPLAY` value; nil: the environment's) and starts
    /// the thread that serves it. The current owners are reported to `delegate` as changes.
    ///
    /// - Throws: ``DesktopClipboardError/unavailable(_:)`` when the display cannot be reached,
    ///   ``DesktopClipboardError/unsupported(_:)`` when it lacks XFixes.
    public static func connect(display: String?, delegate: any DesktopClipboardDelegate) throws(DesktopClipboardError) -> X11Clipboard {
        let clipboard = try X11Clipboard(display: try X11Display(display: display), delegate: delegate)
        clipboard.start()
        return clipboard
    }

    private init(display: X11Display, delegate: any DesktopClipboardDelegate) throws(DesktopClipboardError) {
        self.display = display
        self.delegate = delegate
        description = "X11 display \(display.name)"
        do {
            loop = try DisplayLoop()
        } catch {
            display.disconnect()
            throw error
        }
        let named = display.atoms(["CLIPBOARD", "TARGETS", "MULTIPLE", "TIMESTAMP", "INCR", "ATOM_PAIR", "UTF8_STRING", "TEXT"])
        selectionAtoms = [.clipboard: named[0], .primary: xcb_atom_t(XCB_ATOM_PRIMARY.rawValue)]
        atoms = Atoms(
            targets: named[1], multiple: named[2], timestamp: named[3], incr: named[4], atomPair: named[5],
            utf8String: named[6], text: named[7], integer: XCB_ATOM_INTEGER.rawValue)
        for atom in selectionAtoms.values { display.watch(atom) }
    }

    private func start() {
        loop.start(
            name: "pb-x11", fd: display.fileDescriptor,
            prepare: { [self] in display.flush() },
            readable: { [self] in handleEvents() },
            ended: { [self] reason in
                let delegate = self.delegate
                self.delegate = nil
                finishEverything()
                display.disconnect()
                if let reason { delegate?.desktopConnectionLost(reason) }
            })
        // Whoever owns the selections now is the first change.
        loop.submit { [self] in
            for selection in DesktopSelection.allCases {
                ownerChanged(selection, to: owner(of: selection))
            }
        }
    }

    // MARK: DesktopClipboard

    public func own(_ selection: DesktopSelection, _ offer: DesktopOffer, reportsSeen: Int) {
        loop.submit { [self] in
            guard reports[selection, default: 0] <= reportsSeen else { return }
            takeOwnership(selection, offer)
        }
    }

    /// ``own(_:_:reportsSeen:)`` on the loop thread, now.
    func takeOwnership(_ selection: DesktopSelection, _ offer: DesktopOffer) {
        let atom = selectionAtoms[selection]!
        let time = display.serverTime()
        xcb_set_selection_owner(display.connection, display.window, atom, time)
        disowning.remove(selection)
        generations[selection, default: 0] += 1
        // The ICCCM's check: another app may have taken it at a later time meanwhile, and
        // then keeps it (its copy is reported as usual).
        owned[selection] = owner(of: selection) == display.window ? (offer, time) : nil
    }

    /// The window that owns `selection` now, by the X server (`XCB_NONE` for nobody); on the
    /// loop thread. A round trip, which leaves the events that came meanwhile queued.
    func owner(of selection: DesktopSelection) -> xcb_window_t {
        let reply = xcb_get_selection_owner_reply(display.connection, xcb_get_selection_owner(display.connection, selectionAtoms[selection]!), nil)
        defer { free(reply) }
        return reply?.pointee.owner ?? xcb_window_t(XCB_NONE)
    }

    public func clear(_ selection: DesktopSelection) {
        loop.submit { [self] in
            let now = display.serverTime()
            // The owner changes the X server made before `now` are among the events read while
            // waiting for it: handled first, so that an app's copy made just before the clear
            // is known, however late this thread runs.
            _ = handleEvents()
            // An app that took the selection since the last report (its targets still being
            // asked) made a copy newer than what the pasteboard dropped: it stays, and is
            // reported as usual.
            guard !isBeingListed(selection) else { return }
            owned.removeValue(forKey: selection)
            // An app that owns it is told by the X server (SelectionClear), as when another app
            // takes it; the "no owner" that follows is ours, not an app's quitting.
            disowning.insert(selection)
            xcb_set_selection_owner(display.connection, xcb_window_t(XCB_NONE), selectionAtoms[selection]!, now)
        }
    }

    public func close() {
        loop.submit { [self] in delegate = nil }
        loop.stop()
    }

    // MARK: Events

    /// Handles every event that has arrived; false once the connection has failed.
    private func handleEvents() -> Bool {
        while true {
            let next = display.deferred.isEmpty ? xcb_poll_for_event(display.connection) : display.deferred.removeFirst()
            guard let event = next else { break }
            handle(event)
            free(event)
        }
        return !display.hasFailed
    }

    private func handle(_ event: UnsafeMutablePointer<xcb_generic_event_t>) {
        let raw = UnsafeRawPointer(event)
        switch event.pointee.response_type & 0x7f {
        case display.selectionNotifyEvent:
            let notify = raw.load(as: xcb_xfixes_selection_notify_event_t.self)
            guard let selection = selection(of: notify.selection) else { return }
            // An app's ownership that ours, taken later, has already ended (the event was on its
            // way when we took it): the X server sent us SelectionClear first had the app's
            // been the later one.
            if notify.owner != display.window, let ours = owned[selection], Self.isAtOrBefore(notify.selection_timestamp, ours.since) { return }
            ownerChanged(selection, to: notify.owner, cleared: notify.subtype == UInt8(XCB_XFIXES_SELECTION_EVENT_SET_SELECTION_OWNER.rawValue))
        case UInt8(XCB_SELECTION_REQUEST):
            answer(raw.load(as: xcb_selection_request_event_t.self))
        case UInt8(XCB_SELECTION_NOTIFY):
            converted(raw.load(as: xcb_selection_notify_event_t.self))
        case UInt8(XCB_PROPERTY_NOTIFY):
            let notify = raw.load(as: xcb_property_notify_event_t.self)
            if notify.window == display.window {
                if notify.state == UInt8(XCB_PROPERTY_NEW_VALUE.rawValue) { received(into: notify.atom) }
            } else if notify.state == UInt8(XCB_PROPERTY_DELETE.rawValue) {
                continueSending(to: notify.window, property: notify.atom)
            }
        case UInt8(XCB_SELECTION_CLEAR):
            let clear = raw.load(as: xcb_selection_clear_event_t.self)
            if let selection = selection(of: clear.selection) { owned[selection] = nil }
        default:
            break
        }
    }

    /// Whether X server time `time` is `other` or earlier: times are milliseconds in 32 bits,
    /// which wrap round every 49 days, so compared by their difference.
    static func isAtOrBefore(_ time: xcb_timestamp_t, _ other: xcb_timestamp_t) -> Bool {
        Int32(bitPattern: time &- other) <= 0
    }

    func selection(of atom: xcb_atom_t) -> DesktopSelection? {
        selectionAtoms.first { $0.value == atom }?.key
    }

    /// A new owner (or none) of `selection`: reported, unless it is pasteboardd itself. No
    /// owner is `cleared` when an app set it so (XFixes's `SetSelectionOwner`), rather than the
    /// owner's window or connection going.
    private func ownerChanged(_ selection: DesktopSelection, to owner: xcb_window_t, cleared: Bool = false) {
        if owner == display.window { return }
        generations[selection, default: 0] += 1
        owned[selection] = nil
        failConversions(of: selection, .ownerGone("the app that copied it has quit or copied something else"))
        if owner == xcb_window_t(XCB_NONE) {
            guard disowning.remove(selection) == nil else { return }
            return report(selection, source: nil, cleared: cleared)
        }
        disowning.remove(selection)
        askTargets(of: selection)
    }

    /// Tells the delegate of a change of `selection`, counted for ``own(_:_:reportsSeen:)``.
    func report(_ selection: DesktopSelection, source: (any DesktopSource)?, cleared: Bool = false) {
        reports[selection, default: 0] += 1
        if cleared {
            delegate?.desktopSelectionCleared(selection)
        } else {
            delegate?.desktopSelectionChanged(selection, source: source)
        }
    }

    /// Ends everything in progress when the loop stops.
    private func finishEverything() {
        for conversion in conversions.values { conversion.finish(.failure(.ownerGone("the connection to the X display ended"))) }
        conversions.removeAll()
        sends.removeAll()
        owned.removeAll()
    }
}
