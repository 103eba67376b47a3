import CWaylandClient
import WaylandDataControl

/// The globals a compositor announces, read once at connection time with a roundtrip on the
/// connecting thread, before the display thread exists (the one exchange it waits for, like
/// the D-Bus `Hello`, for at most ``answerTimeout``), and bound from there.
///
/// A seat or manager that appears later is not picked up: the bridge binds the first seat, and
/// a compositor without data control at connection time is reported as unsupported. The
/// registry is destroyed by ``release()`` once the globals are bound, before any other dispatch.
final class WaylandGlobals {
    struct Global {
        let name: UInt32
        let interface: String
        let version: UInt32
    }

    private(set) var globals: [Global] = []
    private let registry: OpaquePointer
    private let listener: UnsafeMutablePointer<wl_registry_listener>

    /// Lists the globals of `display`; nil when the roundtrip fails (the compositor went away).
    ///
    /// - Throws: when the compositor closes the connection, or does not answer within
    ///   ``answerTimeout``.
    static func scan(_ display: OpaquePointer, name: String) throws(DesktopClipboardError) -> WaylandGlobals {
        guard let registry = wl_display_get_registry(display) else { throw .unavailable("the Wayland compositor at \(name) closed the connection") }
        let scan = WaylandGlobals(registry: registry)
        switch WaylandRoundTrip.run(display, within: answerTimeout) {
        case .answered:
            return scan
        case .failed:
            scan.release()
            throw .unavailable("the Wayland compositor at \(name) closed the connection")
        case .timedOut:
            scan.release()
            throw .unavailable("the Wayland compositor at \(name) did not answer within \(answerTimeout)")
        }
    }

    /// How long a compositor is given to list its globals.
    static let answerTimeout = Duration.seconds(5)

    private init(registry: OpaquePointer) {
        self.registry = registry
        listener = .allocate(capacity: 1)
        listener.initialize(to: wl_registry_listener(
            global: { data, _, name, interface, version in
                guard let data, let interface else { return }
                let scan = Unmanaged<WaylandGlobals>.fromOpaque(data).takeUnretainedValue()
                scan.globals.append(Global(name: name, interface: String(cString: interface), version: version))
            },
            global_remove: { _, _, _ in }))
        _ = wl_registry_add_listener(registry, listener, Unmanaged.passUnretained(self).toOpaque())
    }

    /// The first global named `interface`.
    func first(_ interface: String) -> Global? {
        globals.first { $0.interface == interface }
    }

    /// Binds `global` at `version`; nil for an interface the glue has no table for.
    func bind(_ global: Global, version: UInt32) -> OpaquePointer? {
        wdc_registry_bind(registry, global.name, global.interface, version).map(OpaquePointer.init)
    }

    /// Destroys the registry (later announcements are dropped) and frees its listener.
    func release() {
        wl_registry_destroy(registry)
        listener.deallocate()
    }
}
