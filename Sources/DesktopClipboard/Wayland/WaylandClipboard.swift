import CWaylandClient
import DBus

#if canImport(Glibc)
import Glibc
#endif

/// The clipboard and primary selection of a Wayland compositor, through a data-control
/// protocol: the privileged interface clipboard managers use, which reads and sets a seat's
/// selections without a window or keyboard focus.
///
/// ```swift
/// let clipboard = try WaylandClipboard.connect(display: nil, delegate: bridge)
/// clipboard.own(.clipboard, offer)
/// ```
///
/// All Wayland work happens on a display thread of its own (``WaylandEventLoop``); the methods
/// here only queue work for it, and return at once. The delegate is held weakly, and hears the
/// current selections first, then every change another app makes.
public final class WaylandClipboard: DesktopClipboard {
    public let description: String
    public let selections: Set<DesktopSelection>
    private let loop: WaylandEventLoop

    private init(description: String, selections: Set<DesktopSelection>, loop: WaylandEventLoop) {
        self.description = description
        self.selections = selections
        self.loop = loop
    }

    deinit {
        loop.close()
    }

    /// How long an app that asked for data the bridge owns may read none before its copy ends
    /// (as X11's `INCR` answers do).
    public static let defaultServingIdleTimeoutMilliseconds: Int32 = OfferServing.idleTimeoutMilliseconds

    /// Connects to the compositor named `display` (a WAYLAND_DISPLAY value, a socket name under
    /// XDG_RUNTIME_DIR or an absolute path; nil: the WAYLAND_DISPLAY of the environment) and
    /// binds ext_data_control_manager_v1 when the compositor offers it, else
    /// zwlr_data_control_manager_v1 (version 2 when offered, for the primary selection; version
    /// 1 has no primary selection).
    ///
    /// - Parameter servingIdleTimeoutMilliseconds: How long an app that asked for our data may
    ///   read none before its copy ends; more than 0.
    /// - Throws: ``DesktopClipboardError/unavailable(_:)`` saying what is missing: no
    ///   compositor at that name (or none answering), or no seat;
    ///   ``DesktopClipboardError/unsupported(_:)`` for a compositor without a data-control
    ///   protocol.
    public static func connect(
        display: String?, delegate: any DesktopClipboardDelegate,
        servingIdleTimeoutMilliseconds: Int32 = defaultServingIdleTimeoutMilliseconds
    ) throws(DesktopClipboardError) -> WaylandClipboard {
        let name = display ?? getenv("WAYLAND_DISPLAY").map { String(cString: $0) } ?? "wayland-0"
        guard let raw = wl_display_connect(display) else {
            throw .unavailable("no Wayland compositor at \(name): \(SystemCallErrorText.current)")
        }
        do throws(DesktopClipboardError) {
            let globals = try WaylandGlobals.scan(raw, name: name)
            defer { globals.release() }
            guard let (dataControl, global) = [DataControlProtocol.ext, .wlr].lazy
                .compactMap({ dataControl in globals.first(dataControl.managerInterface).map { (dataControl, $0) } })
                .first
            else {
                throw .unsupported(
                    "the Wayland compositor at \(name) offers no data-control protocol"
                        + " (neither ext_data_control_manager_v1 nor zwlr_data_control_manager_v1)")
            }
            guard let seatGlobal = globals.first("wl_seat") else {
                throw .unavailable("the Wayland compositor at \(name) has no seat")
            }
            let version = min(global.version, dataControl.supportedVersion)
            guard let manager = globals.bind(global, version: version),
                  let seat = globals.bind(seatGlobal, version: 1)
            else {
                throw .unavailable("could not bind \(global.interface) on \(name)")
            }
            guard let device = dataControl.getDevice(manager, seat: seat) else {
                throw .unavailable("could not get the data-control device of the seat on \(name)")
            }
            let loop = try WaylandEventLoop(display: raw)
            let session = SelectionSession(
                dataControl: dataControl, managerVersion: version, display: raw, manager: manager, seat: seat,
                device: device, delegate: delegate, loop: loop, servingIdleTimeoutMilliseconds: servingIdleTimeoutMilliseconds)
            loop.start(session)
            return WaylandClipboard(
                description: "Wayland display \(name) (\(global.interface))", selections: session.selections, loop: loop)
        } catch {
            wl_display_disconnect(raw)
            throw error
        }
    }

    public func own(_ selection: DesktopSelection, _ offer: DesktopOffer, reportsSeen: Int) {
        loop.submit { session in
            guard session.reports[selection, default: 0] <= reportsSeen else { return }
            session.own(selection, offer)
        }
    }

    public func clear(_ selection: DesktopSelection) {
        loop.submit { session in session.clear(selection) }
    }

    public func close() {
        loop.close()
    }
}
