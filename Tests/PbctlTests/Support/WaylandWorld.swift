import Foundation
import Testing
import TestSupport

/// A test's Wayland desktop: a private headless sway, and a ``PbctlHarness`` whose server
/// bridges `general` and `primary` to it, with wl-clipboard (`wl-copy`, `wl-paste`) as the
/// other apps.
final class WaylandWorld: Sendable {
    let sway: HeadlessSway
    let world: PbctlHarness

    init(limits: [String] = []) async throws {
        sway = try await HeadlessSway()
        world = try await PbctlHarness(limits: limits, desktop: DesktopDisplay(mode: "wayland", environment: sway.environment))
        try await world.waitUntilBridged(to: "Wayland")
    }

    /// Runs `wl-paste ARGUMENTS...` on the test's compositor to completion.
    func wlPaste(_ arguments: String...) async throws -> Outcome {
        try await runProgram(try X11World.tool("wl-paste", package: "wl-clipboard"), arguments, environment: sway.environment, timeout: .seconds(60))
    }

    /// Runs `wl-copy ARGUMENTS...` (with nothing on its input) on the test's compositor, to
    /// completion: `--clear`, say.
    func wlCopy(_ arguments: String...) async throws -> Outcome {
        try await runProgram(try X11World.tool("wl-copy", package: "wl-clipboard"), arguments, environment: sway.environment, timeout: .seconds(60))
    }

    /// Copies `data` as `type` with a `wl-copy` that stays in the foreground (killed when the
    /// returned process is), and waits until the copy is the pasteboard's change.
    func copyWithWlCopy(_ data: Data, type: String, primary: Bool = false) async throws -> (app: ChildProcess, count: UInt64) {
        let name = primary ? "primary" : "general"
        let before = try await world.changeCount(name)
        let app = try sway.client(
            try X11World.tool("wl-copy", package: "wl-clipboard"), ["--foreground", "--type", type] + (primary ? ["--primary"] : []))
        app.send(data)
        let count = try await world.waitForCount(of: name, above: before)
        return (app, count)
    }

    /// Waits until the compositor's selection offers `type` (pasteboardd took it after a write),
    /// and returns the types then listed.
    @discardableResult
    func waitUntilOffered(_ type: String, primary: Bool = false) async throws -> [String] {
        let deadline = ContinuousClock.now + .seconds(30)
        while true {
            let listed = primary ? try await wlPaste("--primary", "--list-types") : try await wlPaste("--list-types")
            let types = listed.out.split(separator: "\n").map(String.init)
            if listed.status == 0, types.contains(type) { return types }
            guard ContinuousClock.now < deadline else { throw TestSupportError("the selection never offered \(type); it offers \(types) (\(listed.err))") }
            try await Task.sleep(for: .milliseconds(20))
        }
    }
}
