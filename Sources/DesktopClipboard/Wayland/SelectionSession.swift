import CWaylandClient
import DBus
import WaylandDataControl

#if canImport(Glibc)
import Glibc
#endif

/// The data-control state of one connection: our sources, the other apps' offers, and which
/// of them each selection is. Lives on the display thread and is touched nowhere else.
///
/// What the delegate hears follows from the order the compositor reports things in, on one
/// connection: when another app takes a selection, our source for it gets `cancelled` before
/// the device gets the new `selection`. So a `selection` event that arrives while the source we
/// set is still alive is the echo of our own `set_selection`, and is not reported (a change
/// pasteboardd made never comes back); likewise the empty `selection` that echoes a ``disown(_:)``.
final class SelectionSession {
    let dataControl: DataControlProtocol
    private let display: OpaquePointer
    private let manager: OpaquePointer
    private let seat: OpaquePointer
    private let device: OpaquePointer
    let selections: Set<DesktopSelection>
    /// The requests for our data being served (``OfferServing/maxConcurrentCopies`` at most).
    private let servingPlaces: OfferServing.Places
    private weak var delegate: (any DesktopClipboardDelegate)?
    /// The changes of each selection told to the delegate (see
    /// ``DesktopClipboard/own(_:_:reportsSeen:)``).
    private(set) var reports: [DesktopSelection: Int] = [:]
    /// Where new ``WaylandSource``s send their requests; unowned: the loop owns this session.
    unowned let loop: WaylandEventLoop
    private let listeners: DataControlListeners

    /// Offers announced with `data_offer` whose `selection` event has not come yet.
    private var announced: [OpaquePointer: Offer] = [:]
    /// The offer each selection currently is (ours included); absent when it is empty.
    private var current: [DesktopSelection: Offer] = [:]
    /// Our live source of each selection we own.
    private var owned: [DesktopSelection: Source] = [:]
    /// Every live source of ours, by proxy, for its events.
    private var sources: [OpaquePointer: Source] = [:]
    /// Selections we cleared ourselves, whose empty `selection` echo is still to come.
    private var clearing: Set<DesktopSelection> = []
    private var nextSerial: UInt64 = 1
    /// Set once the proxies are destroyed: later requests find the owner gone.
    private(set) var ended = false

    /// An offer of the compositor's, with the types it announced.
    private final class Offer {
        let proxy: OpaquePointer
        let serial: UInt64
        var types: [String] = []
        init(proxy: OpaquePointer, serial: UInt64) {
            self.proxy = proxy
            self.serial = serial
        }
    }

    /// A data source of ours and what it offers.
    private final class Source {
        let proxy: OpaquePointer
        let selection: DesktopSelection
        let offer: DesktopOffer
        init(proxy: OpaquePointer, selection: DesktopSelection, offer: DesktopOffer) {
            self.proxy = proxy
            self.selection = selection
            self.offer = offer
        }
    }

    /// Takes over the bound globals and the device, and starts listening to the device (its
    /// events are dispatched on the display thread, once it runs).
    init(
        dataControl: DataControlProtocol, managerVersion: UInt32, display: OpaquePointer, manager: OpaquePointer,
        seat: OpaquePointer, device: OpaquePointer, delegate: any DesktopClipboardDelegate, loop: WaylandEventLoop,
        servingIdleTimeoutMilliseconds: Int32
    ) {
        servingPlaces = OfferServing.Places(idleTimeoutMilliseconds: servingIdleTimeoutMilliseconds)
        self.dataControl = dataControl
        self.display = display
        self.manager = manager
        self.seat = seat
        self.device = device
        self.delegate = delegate
        self.loop = loop
        selections = dataControl.hasPrimarySelection(version: managerVersion) ? [.clipboard, .primary] : [.clipboard]
        listeners = DataControlListeners(dataControl)
        listeners.listen(toDevice: device, context)
    }

    static func from(_ data: UnsafeMutableRawPointer?) -> SelectionSession {
        Unmanaged<SelectionSession>.fromOpaque(data!).takeUnretainedValue()
    }

    private var context: UnsafeMutableRawPointer { Unmanaged.passUnretained(self).toOpaque() }

    // MARK: Requests (from the command queue)

    /// Offers `offer` as `selection` through a new source, replacing ours if we had one.
    func own(_ selection: DesktopSelection, _ offer: DesktopOffer) {
        guard !ended, selections.contains(selection), let proxy = dataControl.createSource(manager) else { return }
        listeners.listen(toSource: proxy, context)
        for type in offer.types { dataControl.offer(proxy, type: type) }
        dataControl.setSelection(device, selection, source: proxy)
        if let previous = owned[selection] { forget(previous) }
        let source = Source(proxy: proxy, selection: selection, offer: offer)
        owned[selection] = source
        sources[proxy] = source
        clearing.remove(selection)
    }

    /// Clears `selection`, ours or an app's (data-control lets any client unset it).
    func clear(_ selection: DesktopSelection) {
        // A compositor without the primary selection drops a client that asks to set it.
        guard !ended, selections.contains(selection) else { return }
        dataControl.setSelection(device, selection, source: nil)
        if let source = owned[selection] { forget(source) }
        clearing.insert(selection)
    }

    /// Asks the owner of the offer `serial` to write `type` into `fd`, if that offer is still
    /// `selection`, and flushes the request out.
    func receive(
        _ type: String, from serial: UInt64, of selection: DesktopSelection, into fd: Int32
    ) -> Result<Void, DesktopClipboardError> {
        guard !ended else { return .failure(.ownerGone("the connection to the Wayland compositor has ended")) }
        guard let offer = current[selection], offer.serial == serial else {
            return .failure(.ownerGone("the app that copied it has quit or copied something else"))
        }
        dataControl.receive(offer.proxy, type: type, into: fd)
        _ = wl_display_flush(display)
        return .success(())
    }

    /// Whether the offer `serial` is still `selection`; with `afterRoundTrip`, once the
    /// compositor has answered a round trip, its events up to then dispatched. A compositor
    /// that does not answer within 5 s is not trusted to say it is.
    func isCurrent(_ serial: UInt64, of selection: DesktopSelection, afterRoundTrip: Bool) -> Bool {
        guard !ended else { return false }
        if afterRoundTrip, WaylandRoundTrip.run(display, within: .seconds(5)) != .answered { return false }
        return current[selection]?.serial == serial
    }

    // MARK: Events (from the listeners)

    func announced(_ proxy: OpaquePointer) {
        listeners.listen(toOffer: proxy, context)
        announced[proxy] = makeOffer(proxy)
    }

    func offer(_ proxy: OpaquePointer, adds type: String) {
        announced[proxy]?.types.append(type)
    }

    func selectionChanged(_ selection: DesktopSelection, to proxy: OpaquePointer?) {
        if let previous = current.removeValue(forKey: selection) { dataControl.destroyOffer(previous.proxy) }
        var offer: Offer?
        if let proxy {
            let known = announced.removeValue(forKey: proxy) ?? makeOffer(proxy)
            current[selection] = known
            offer = known
        }
        let echoOfClear = clearing.remove(selection) != nil
        // Ours, still alive: what comes back is what we set.
        if owned[selection] != nil { return }
        guard let offer else {
            if !echoOfClear { report(selection, nil) }
            return
        }
        report(selection, WaylandSource(types: offer.types, selection: selection, serial: offer.serial, loop: loop))
    }

    func deviceFinished() {
        loop.end(because: "the Wayland compositor ended the data-control device")
    }

    /// An app asks for our data: it is opened and copied off this thread.
    func send(_ proxy: OpaquePointer, type: String, into fd: Int32) {
        let target = UnixFileDescriptor(owning: fd)
        guard let source = sources[proxy] else { return }
        OfferServing.serve(source.offer, type: type, into: target, places: servingPlaces)
    }

    func cancelled(_ proxy: OpaquePointer) {
        guard let source = sources[proxy] else { return }
        forget(source)
    }

    // MARK: Helpers

    /// A new offer record; its serial tells a ``WaylandSource`` whether it is still current.
    private func makeOffer(_ proxy: OpaquePointer) -> Offer {
        defer { nextSerial += 1 }
        return Offer(proxy: proxy, serial: nextSerial)
    }

    /// Destroys one of our sources and drops it from the tables.
    private func forget(_ source: Source) {
        if owned[source.selection] === source { owned[source.selection] = nil }
        sources[source.proxy] = nil
        dataControl.destroySource(source.proxy)
    }

    private func report(_ selection: DesktopSelection, _ source: (any DesktopSource)?) {
        guard !loop.isClosing else { return }
        reports[selection, default: 0] += 1
        delegate?.desktopSelectionChanged(selection, source: source)
    }

    /// Tells the delegate the connection is gone, unless we closed it.
    func reportLost(_ reason: String) {
        guard !loop.isClosing else { return }
        delegate?.desktopConnectionLost(reason)
    }

    /// Destroys every proxy; the display is disconnected next.
    func tearDown() {
        guard !ended else { return }
        ended = true
        for offer in announced.values { dataControl.destroyOffer(offer.proxy) }
        for offer in current.values { dataControl.destroyOffer(offer.proxy) }
        for source in sources.values { dataControl.destroySource(source.proxy) }
        announced = [:]
        current = [:]
        sources = [:]
        owned = [:]
        dataControl.destroyDevice(device)
        dataControl.destroyManager(manager)
        wl_seat_destroy(seat)
    }
}
