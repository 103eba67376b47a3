import CWaylandClient
import WaylandDataControl

/// Which data-control protocol the compositor offers: the standard `ext_data_control_v1`, or
/// wlroots' older `zwlr_data_control_unstable_v1` that sway and most wlroots compositors have.
///
/// The two have the same requests and events in the same order, so everything above this type
/// is written once; only the generated C functions differ, and these wrappers pick them.
/// Proxies are `OpaquePointer`s (the C structs are incomplete), used on the display thread only.
enum DataControlProtocol: Sendable {
    case ext
    case wlr

    /// The manager global's interface name, as the registry announces it.
    var managerInterface: String {
        switch self {
        case .ext: "ext_data_control_manager_v1"
        case .wlr: "zwlr_data_control_manager_v1"
        }
    }

    /// The newest manager version this code speaks.
    var supportedVersion: UInt32 {
        switch self {
        case .ext: 1
        case .wlr: 2
        }
    }

    /// Whether a manager of `version` has the primary selection (ext always; zwlr from 2).
    func hasPrimarySelection(version: UInt32) -> Bool {
        self == .ext || version >= 2
    }

    // MARK: Manager

    func createSource(_ manager: OpaquePointer) -> OpaquePointer? {
        switch self {
        case .ext: ext_data_control_manager_v1_create_data_source(manager)
        case .wlr: zwlr_data_control_manager_v1_create_data_source(manager)
        }
    }

    func getDevice(_ manager: OpaquePointer, seat: OpaquePointer) -> OpaquePointer? {
        switch self {
        case .ext: ext_data_control_manager_v1_get_data_device(manager, seat)
        case .wlr: zwlr_data_control_manager_v1_get_data_device(manager, seat)
        }
    }

    func destroyManager(_ manager: OpaquePointer) {
        switch self {
        case .ext: ext_data_control_manager_v1_destroy(manager)
        case .wlr: zwlr_data_control_manager_v1_destroy(manager)
        }
    }

    // MARK: Device

    /// Sets `source` (nil: clears) as the clipboard or the primary selection.
    func setSelection(_ device: OpaquePointer, _ selection: DesktopSelection, source: OpaquePointer?) {
        switch (self, selection) {
        case (.ext, .clipboard): ext_data_control_device_v1_set_selection(device, source)
        case (.ext, .primary): ext_data_control_device_v1_set_primary_selection(device, source)
        case (.wlr, .clipboard): zwlr_data_control_device_v1_set_selection(device, source)
        case (.wlr, .primary): zwlr_data_control_device_v1_set_primary_selection(device, source)
        }
    }

    func destroyDevice(_ device: OpaquePointer) {
        switch self {
        case .ext: ext_data_control_device_v1_destroy(device)
        case .wlr: zwlr_data_control_device_v1_destroy(device)
        }
    }

    // MARK: Source

    func offer(_ source: OpaquePointer, type: String) {
        switch self {
        case .ext: ext_data_control_source_v1_offer(source, type)
        case .wlr: zwlr_data_control_source_v1_offer(source, type)
        }
    }

    func destroySource(_ source: OpaquePointer) {
        switch self {
        case .ext: ext_data_control_source_v1_destroy(source)
        case .wlr: zwlr_data_control_source_v1_destroy(source)
        }
    }

    // MARK: Offer

    /// Asks the offer's owner to write `type` into `fd` (libwayland sends a duplicate of it).
    func receive(_ offer: OpaquePointer, type: String, into fd: Int32) {
        switch self {
        case .ext: ext_data_control_offer_v1_receive(offer, type, fd)
        case .wlr: zwlr_data_control_offer_v1_receive(offer, type, fd)
        }
    }

    func destroyOffer(_ offer: OpaquePointer) {
        switch self {
        case .ext: ext_data_control_offer_v1_destroy(offer)
        case .wlr: zwlr_data_control_offer_v1_destroy(offer)
        }
    }
}
