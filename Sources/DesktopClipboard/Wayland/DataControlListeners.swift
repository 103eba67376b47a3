import CWaylandClient
import WaylandDataControl

#if canImport(Glibc)
import Glibc
#endif

/// The C listener tables that route the data-control events of one connection to its
/// ``SelectionSession``.
///
/// libwayland keeps a pointer to a listener for as long as the proxy lives, so the tables are
/// allocated here, once per connection, and freed with the session, after every proxy is gone.
/// The `data` each callback receives is the session, unretained (it outlives its proxies).
/// Both protocols' tables hold the same C functions: the events have the same shape.
final class DataControlListeners {
    private let device: UnsafeMutableRawPointer
    private let source: UnsafeMutableRawPointer
    private let offer: UnsafeMutableRawPointer
    private let free: () -> Void
    let dataControl: DataControlProtocol

    init(_ dataControl: DataControlProtocol) {
        self.dataControl = dataControl
        switch dataControl {
        case .ext:
            let device = UnsafeMutablePointer<ext_data_control_device_v1_listener>.allocate(capacity: 1)
            device.initialize(to: .init(
                data_offer: Callbacks.dataOffer, selection: Callbacks.selection, finished: Callbacks.finished,
                primary_selection: Callbacks.primarySelection))
            let source = UnsafeMutablePointer<ext_data_control_source_v1_listener>.allocate(capacity: 1)
            source.initialize(to: .init(send: Callbacks.send, cancelled: Callbacks.cancelled))
            let offer = UnsafeMutablePointer<ext_data_control_offer_v1_listener>.allocate(capacity: 1)
            offer.initialize(to: .init(offer: Callbacks.offerType))
            (self.device, self.source, self.offer) = (.init(device), .init(source), .init(offer))
            free = { device.deallocate(); source.deallocate(); offer.deallocate() }
        case .wlr:
            let device = UnsafeMutablePointer<zwlr_data_control_device_v1_listener>.allocate(capacity: 1)
            device.initialize(to: .init(
                data_offer: Callbacks.dataOffer, selection: Callbacks.selection, finished: Callbacks.finished,
                primary_selection: Callbacks.primarySelection))
            let source = UnsafeMutablePointer<zwlr_data_control_source_v1_listener>.allocate(capacity: 1)
            source.initialize(to: .init(send: Callbacks.send, cancelled: Callbacks.cancelled))
            let offer = UnsafeMutablePointer<zwlr_data_control_offer_v1_listener>.allocate(capacity: 1)
            offer.initialize(to: .init(offer: Callbacks.offerType))
            (self.device, self.source, self.offer) = (.init(device), .init(source), .init(offer))
            free = { device.deallocate(); source.deallocate(); offer.deallocate() }
        }
    }

    deinit {
        free()
    }

    func listen(toDevice proxy: OpaquePointer, _ session: UnsafeMutableRawPointer) {
        switch dataControl {
        case .ext: _ = ext_data_control_device_v1_add_listener(proxy, device.assumingMemoryBound(to: ext_data_control_device_v1_listener.self), session)
        case .wlr: _ = zwlr_data_control_device_v1_add_listener(proxy, device.assumingMemoryBound(to: zwlr_data_control_device_v1_listener.self), session)
        }
    }

    func listen(toSource proxy: OpaquePointer, _ session: UnsafeMutableRawPointer) {
        switch dataControl {
        case .ext: _ = ext_data_control_source_v1_add_listener(proxy, source.assumingMemoryBound(to: ext_data_control_source_v1_listener.self), session)
        case .wlr: _ = zwlr_data_control_source_v1_add_listener(proxy, source.assumingMemoryBound(to: zwlr_data_control_source_v1_listener.self), session)
        }
    }

    func listen(toOffer proxy: OpaquePointer, _ session: UnsafeMutableRawPointer) {
        switch dataControl {
        case .ext: _ = ext_data_control_offer_v1_add_listener(proxy, offer.assumingMemoryBound(to: ext_data_control_offer_v1_listener.self), session)
        case .wlr: _ = zwlr_data_control_offer_v1_add_listener(proxy, offer.assumingMemoryBound(to: zwlr_data_control_offer_v1_listener.self), session)
        }
    }
}

/// The C functions of the listener tables: each finds the session in `data` and hands the
/// event over. They run on the display thread, inside `wl_display_dispatch_pending`.
private enum Callbacks {
    typealias ObjectEvent = @convention(c) (UnsafeMutableRawPointer?, OpaquePointer?, OpaquePointer?) -> Void
    typealias PlainEvent = @convention(c) (UnsafeMutableRawPointer?, OpaquePointer?) -> Void

    static let dataOffer: ObjectEvent = { data, _, offer in
        guard let offer else { return }
        SelectionSession.from(data).announced(offer)
    }
    static let selection: ObjectEvent = { data, _, offer in
        SelectionSession.from(data).selectionChanged(.clipboard, to: offer)
    }
    static let primarySelection: ObjectEvent = { data, _, offer in
        SelectionSession.from(data).selectionChanged(.primary, to: offer)
    }
    static let finished: PlainEvent = { data, _ in
        SelectionSession.from(data).deviceFinished()
    }
    static let send: @convention(c) (UnsafeMutableRawPointer?, OpaquePointer?, UnsafePointer<CChar>?, Int32) -> Void = {
        data, source, type, fd in
        guard let source, let type else {
            if fd >= 0 { _ = Glibc.close(fd) }
            return
        }
        SelectionSession.from(data).send(source, type: String(cString: type), into: fd)
    }
    static let cancelled: PlainEvent = { data, source in
        guard let source else { return }
        SelectionSession.from(data).cancelled(source)
    }
    static let offerType: @convention(c) (UnsafeMutableRawPointer?, OpaquePointer?, UnsafePointer<CChar>?) -> Void = {
        data, offer, type in
        guard let offer, let type else { return }
        SelectionSession.from(data).offer(offer, adds: String(cString: type))
    }
}
