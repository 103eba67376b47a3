import CXCB

#if canImport(Glibc)
import Glibc
#endif

/// One connection to an X server, with what the clipboard needs of it: atoms by name, an
/// invisible window of its own to own selections and receive data with, property reads and
/// writes, and the server's clock.
///
/// libxcb rather than Xlib: it is the library Xlib itself is built on, asynchronous by design
/// (a request returns a cookie; replies are waited for only when needed, so several atoms are
/// interned in one round trip), thread-safe, and has no global error handler that exits the
/// process when the display goes away. Used only on the display thread.
final class X11Display {
    let connection: OpaquePointer
    let window: xcb_window_t
    /// The event code of XFixes' SelectionNotify (the extension's first event).
    let selectionNotifyEvent: UInt8
    /// The most data one ChangeProperty may carry on this server; larger data goes `INCR`.
    let maxPropertyBytes: Int
    /// Events read while waiting for something else, handled before any new one.
    var deferred: [UnsafeMutablePointer<xcb_generic_event_t>] = []
    let name: String
    private var atomsByName: [String: xcb_atom_t] = [:]
    private var namesByAtom: [xcb_atom_t: String] = [:]

    /// Connects to `display` (a `DISPLAY` value; nil: the environment's), makes the window, and
    /// asks XFixes to report every change of owner of `selections`.
    init(display: String?) throws(DesktopClipboardError) {
        var screenNumber: Int32 = 0
        let name = display ?? getenv("DISPLAY").map { String(cString: $0) } ?? ""
        self.name = name
        guard !name.isEmpty else { throw .unavailable("no X display: DISPLAY is not set") }
        guard let connection = xcb_connect(name, &screenNumber), xcb_connection_has_error(connection) == 0 else {
            throw .unavailable("cannot connect to the X display \(name)")
        }
        self.connection = connection
        guard let extensionData = xcb_get_extension_data(connection, cxcb_xfixes_extension()), extensionData.pointee.present != 0 else {
            xcb_disconnect(connection)
            throw .unsupported("the X display \(name) has no XFixes extension, which reports clipboard changes")
        }
        selectionNotifyEvent = extensionData.pointee.first_event + UInt8(XCB_XFIXES_SELECTION_NOTIFY)
        free(xcb_xfixes_query_version_reply(connection, xcb_xfixes_query_version(connection, 5, 0), nil))

        var screens = xcb_setup_roots_iterator(xcb_get_setup(connection))
        for _ in 0..<max(screenNumber, 0) where screens.rem > 0 { xcb_screen_next(&screens) }
        guard let screen = screens.data else {
            xcb_disconnect(connection)
            throw .unavailable("the X display \(name) has no screen \(screenNumber)")
        }
        window = xcb_generate_id(connection)
        var values: [UInt32] = [XCB_EVENT_MASK_PROPERTY_CHANGE.rawValue]
        xcb_create_window(
            connection, UInt8(XCB_COPY_FROM_PARENT), window, screen.pointee.root, 0, 0, 1, 1, 0,
            UInt16(XCB_WINDOW_CLASS_INPUT_ONLY.rawValue), screen.pointee.root_visual, XCB_CW_EVENT_MASK.rawValue, &values)
        let title = Array("pasteboardd".utf8)
        xcb_change_property(connection, UInt8(XCB_PROP_MODE_REPLACE.rawValue), window, XCB_ATOM_WM_NAME.rawValue, XCB_ATOM_STRING.rawValue, 8, UInt32(title.count), title)
        // Units of four bytes; ChangeProperty's own header takes 24 bytes of it.
        let maxRequest = Int(xcb_get_maximum_request_length(connection)) * 4
        maxPropertyBytes = max(min(maxRequest - 64, Self.largestProperty), 4096)
    }

    /// Data up to this size is answered in one property even when the server would take more,
    /// and larger data in `INCR` steps of this size: an app asking for a large item gets it in
    /// steps it can follow. Under 4,000,000 bytes, which is as much of a property as `xsel`
    /// reads (it asks for 1,000,000 units of four bytes): a larger one reached it cut short.
    static let largestProperty = 1 << 20

    func watch(_ selection: xcb_atom_t) {
        let mask = XCB_XFIXES_SELECTION_EVENT_MASK_SET_SELECTION_OWNER.rawValue
            | XCB_XFIXES_SELECTION_EVENT_MASK_SELECTION_WINDOW_DESTROY.rawValue
            | XCB_XFIXES_SELECTION_EVENT_MASK_SELECTION_CLIENT_CLOSE.rawValue
        xcb_xfixes_select_selection_input(connection, window, selection, mask)
    }

    func disconnect() {
        for event in deferred { free(event) }
        deferred.removeAll()
        xcb_disconnect(connection)
    }

    var fileDescriptor: Int32 { xcb_get_file_descriptor(connection) }
    var hasFailed: Bool { xcb_connection_has_error(connection) != 0 }

    func flush() {
        xcb_flush(connection)
    }

    // MARK: Atoms

    /// The atom named `name`, interned on first use.
    func atom(_ name: String) -> xcb_atom_t {
        atoms([name])[0]
    }

    /// The atoms named `names`, interned in one round trip.
    func atoms(_ names: [String]) -> [xcb_atom_t] {
        let missing = names.filter { atomsByName[$0] == nil }
        let cookies = missing.map { name in
            xcb_intern_atom(connection, 0, UInt16(clamping: name.utf8.count), name)
        }
        for (name, cookie) in zip(missing, cookies) {
            guard let reply = xcb_intern_atom_reply(connection, cookie, nil) else { continue }
            atomsByName[name] = reply.pointee.atom
            namesByAtom[reply.pointee.atom] = name
            free(reply)
        }
        return names.map { atomsByName[$0] ?? xcb_atom_t(XCB_ATOM_NONE.rawValue) }
    }

    /// The names of `atoms`, asked in one round trip ("" for an atom that has none).
    func names(of atoms: [xcb_atom_t]) -> [String] {
        let missing = Array(Set(atoms.filter { namesByAtom[$0] == nil }))
        let cookies = missing.map { xcb_get_atom_name(connection, $0) }
        for (atom, cookie) in zip(missing, cookies) {
            guard let reply = xcb_get_atom_name_reply(connection, cookie, nil) else { continue }
            let length = Int(xcb_get_atom_name_name_length(reply))
            let bytes = UnsafeRawBufferPointer(start: xcb_get_atom_name_name(reply), count: length)
            let name = String(decoding: bytes, as: UTF8.self)
            namesByAtom[atom] = name
            atomsByName[name] = atom
            free(reply)
        }
        return atoms.map { namesByAtom[$0] ?? "" }
    }

    // MARK: Properties

    struct Property {
        let type: xcb_atom_t
        let format: UInt8
        let bytes: [UInt8]
    }

    /// The whole value of `property` on `window`, deleted from it when `delete` (which tells an
    /// `INCR` sender to go on); nil when there is no such property.
    func property(_ property: xcb_atom_t, of window: xcb_window_t, delete: Bool) -> Property? {
        let cookie = xcb_get_property(connection, delete ? 1 : 0, window, property, xcb_atom_t(XCB_GET_PROPERTY_TYPE_ANY.rawValue), 0, UInt32.max / 4)
        guard let reply = xcb_get_property_reply(connection, cookie, nil) else { return nil }
        defer { free(reply) }
        guard reply.pointee.type != xcb_atom_t(XCB_ATOM_NONE.rawValue) else { return nil }
        let length = Int(xcb_get_property_value_length(reply))
        let bytes = length > 0 ? [UInt8](UnsafeRawBufferPointer(start: xcb_get_property_value(reply), count: length)) : []
        return Property(type: reply.pointee.type, format: reply.pointee.format, bytes: bytes)
    }

    /// Replaces `property` on `window` with `bytes`, read as `format`-bit units.
    func setProperty(_ property: xcb_atom_t, of window: xcb_window_t, type: xcb_atom_t, format: UInt8, bytes: UnsafeRawBufferPointer) {
        let units = UInt32(bytes.count / Int(format / 8))
        xcb_change_property(connection, UInt8(XCB_PROP_MODE_REPLACE.rawValue), window, property, type, format, units, bytes.baseAddress)
    }

    func setProperty(_ property: xcb_atom_t, of window: xcb_window_t, atoms: [xcb_atom_t], type: xcb_atom_t = xcb_atom_t(XCB_ATOM_ATOM.rawValue)) {
        atoms.withUnsafeBytes { setProperty(property, of: window, type: type, format: 32, bytes: $0) }
    }

    // MARK: Selections

    /// Tells `requestor` its request was answered in `property` (or refused: `XCB_ATOM_NONE`).
    func notify(_ requestor: xcb_window_t, selection: xcb_atom_t, target: xcb_atom_t, property: xcb_atom_t, time: xcb_timestamp_t) {
        var event = xcb_selection_notify_event_t()
        event.response_type = UInt8(XCB_SELECTION_NOTIFY)
        event.time = time
        event.requestor = requestor
        event.selection = selection
        event.target = target
        event.property = property
        withUnsafeBytes(of: &event) { raw in
            // SendEvent takes a full 32-byte event.
            var padded = [CChar](repeating: 0, count: 32)
            for (index, byte) in raw.prefix(32).enumerated() { padded[index] = CChar(bitPattern: byte) }
            xcb_send_event(connection, 0, requestor, 0, padded)
        }
    }

    /// The server's current time, for taking ownership as the ICCCM asks (never `CurrentTime`):
    /// a zero-length append to a property of the window, whose PropertyNotify carries the time.
    /// Events read meanwhile are kept in ``deferred``.
    func serverTime() -> xcb_timestamp_t {
        let clock = atom("_PASTEBOARDD_CLOCK")
        xcb_change_property(connection, UInt8(XCB_PROP_MODE_APPEND.rawValue), window, clock, XCB_ATOM_INTEGER.rawValue, 32, 0, nil)
        flush()
        while let event = xcb_wait_for_event(connection) {
            if event.pointee.response_type & 0x7f == XCB_PROPERTY_NOTIFY {
                let notify = UnsafeRawPointer(event).load(as: xcb_property_notify_event_t.self)
                if notify.window == window, notify.atom == clock {
                    free(event)
                    return notify.time
                }
            }
            deferred.append(event)
        }
        return xcb_timestamp_t(XCB_CURRENT_TIME)
    }

    /// Changes which events of `window` (another app's) this connection hears.
    func listen(to window: xcb_window_t, propertyChanges: Bool) {
        var values: [UInt32] = [propertyChanges ? XCB_EVENT_MASK_PROPERTY_CHANGE.rawValue : 0]
        xcb_change_window_attributes(connection, window, XCB_CW_EVENT_MASK.rawValue, &values)
    }
}
