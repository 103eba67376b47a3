import DesktopClipboard

/// Which display system's clipboard `general` and `primary` are joined to (`--desktop`).
public enum DesktopMode: String, Sendable, CaseIterable {
    /// Wayland when `WAYLAND_DISPLAY` names a compositor with a data-control protocol, else X11
    /// when `DISPLAY` is set, else none.
    case auto
    case x11
    case wayland
    case off
}

extension DesktopMode {
    /// Connects to the first display system `self` allows that answers, with the displays
    /// `environment` names; nil when none does. The reason says why, in words for the log.
    /// `lasting` tells a failure that trying again cannot mend: every system allowed is either
    /// not named (the environment does not change) or answered without what the bridge needs.
    func choose(
        environment: [String: String], delegate: any DesktopClipboardDelegate
    ) -> (clipboard: (any DesktopClipboard)?, reason: String, lasting: Bool) {
        let wayland = environment["WAYLAND_DISPLAY"].flatMap { $0.isEmpty ? nil : $0 }
        let x11 = environment["DISPLAY"].flatMap { $0.isEmpty ? nil : $0 }
        var reasons: [String] = []
        var lasting = true
        if self == .auto || self == .wayland {
            if let wayland {
                do {
                    let clipboard = try WaylandClipboard.connect(display: wayland, delegate: delegate)
                    return (clipboard, self == .auto ? "WAYLAND_DISPLAY is set and the compositor has a data-control protocol" : "--desktop wayland", false)
                } catch {
                    reasons.append("Wayland: \(error.description)")
                    if case .unsupported = error {} else { lasting = false }
                }
            } else {
                reasons.append("Wayland: WAYLAND_DISPLAY is not set")
            }
        }
        if self == .auto || self == .x11 {
            if let x11 {
                do {
                    let clipboard = try X11Clipboard.connect(display: x11, delegate: delegate)
                    return (clipboard, self == .auto ? "DISPLAY is set\(wayland == nil ? "" : " (\(reasons.joined()))")" : "--desktop x11", false)
                } catch {
                    reasons.append("X11: \(error.description)")
                    if case .unsupported = error {} else { lasting = false }
                }
            } else {
                reasons.append("X11: DISPLAY is not set")
            }
        }
        return (nil, reasons.joined(separator: "; "), lasting)
    }
}
