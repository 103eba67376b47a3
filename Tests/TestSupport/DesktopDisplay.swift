/// A display a test server's desktop bridge is pointed at: the `--desktop` mode, and the
/// environment naming the display (`DISPLAY`, or `WAYLAND_DISPLAY` and `XDG_RUNTIME_DIR`).
public struct DesktopDisplay: Sendable {
    public let mode: String
    public let environment: [String: String]

    public init(mode: String, environment: [String: String]) {
        self.mode = mode
        self.environment = environment
    }
}
