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
        /// One system's clipboard, or nil with why not added to `reasons`.
        func attempt(
            _ system: String, _ variable: String, _ display: String?,
            _ connect: (String) throws(DesktopClipboardError) -> any DesktopClipboard
        ) -> (any DesktopClipboard)? {
            guard let display else {
                reasons.append("\(system): \(variable) is not set")
                return nil
            }
            do throws(DesktopClipboardError) {
                return try connect(display)
            } catch {
                reasons.append("\(system): \(error.description)")
                if case .unsupported = error {} else { lasting = false }
                return nil
            }
        }
        if self == .auto || self == .wayland,
           let clipboard = attempt("Wayland", "WAYLAND_DISPLAY", wayland, { display throws(DesktopClipboardError) in
               try WaylandClipboard.connect(display: display, delegate: delegate)
           }) {
            return (clipboard, self == .auto ? "WAYLAND_DISPLAY is set and the compositor has a data-control protocol" : "--desktop wayland", false)
        }
        if self == .auto || self == .x11,
           let clipboard = attempt("X11", "DISPLAY", x11, { display throws(DesktopClipboardError) in
               try X11Clipboard.connect(display: display, delegate: delegate)
           }) {
            return (clipboard, self == .auto ? "DISPLAY is set\(wayland == nil ? "" : " (\(reasons.joined()))")" : "--desktop x11", false)
        }
        let nothingSet = self == .auto && wayland == nil && x11 == nil
        return (nil, nothingSet ? "neither WAYLAND_DISPLAY nor DISPLAY is set" : reasons.joined(separator: "; "), lasting)
    }
}
