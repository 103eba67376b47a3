import Foundation
import Testing
import TestSupport

/// A test's desktop as its apps see it, on X11 (xclip) or Wayland (wl-clipboard), for the
/// checks that hold on both.
protocol DesktopApps: Sendable {
    var world: PbctlHarness { get }
    /// Copies `text` in an app that stays the owner until killed; waits until it is the
    /// pasteboard's change.
    func copyAsApp(_ text: String) async throws -> (app: ChildProcess, count: UInt64)
    /// What an app pastes as text; nil when the clipboard is empty.
    func pasteAsApp() async throws -> String?
}

extension DesktopApps {
    /// Waits until an app pastes nothing.
    func waitUntilEmpty() async throws {
        let deadline = ContinuousClock.now + .seconds(10)
        while try await pasteAsApp() != nil {
            guard ContinuousClock.now < deadline else { throw TestSupportError("the clipboard still has an owner") }
            try await Task.sleep(for: .milliseconds(20))
        }
    }

    /// `general` is the clipboard whoever made its contents: a restored app copy is offered
    /// (what was read of it), and a clear or a transient copy over an app's copy empties it.
    func expectTheClipboardFollowsEveryChange() async throws {
        let (app, count) = try await copyAsApp("from the app")
        expectSuccess(try await world.pbctl("paste"), stdout: "from the app")
        expectSuccess(try await world.pbctl("copy", input: "from the bus"))
        #expect(await eventually { (try? await pasteAsApp()) == "from the bus" })
        expectSuccess(try await world.pbctl("restore", "\(count)"), stdout: "\(count + 2)\n")
        #expect(await eventually { (try? await pasteAsApp()) == "from the app" })
        app.kill()
        for change in [["clear"], ["copy", "--transient"]] {
            let (owner, _) = try await copyAsApp("the app's")
            defer { owner.kill() }
            expectSuccess(try await world.pbctl(change, input: Data("passing".utf8)))
            try await waitUntilEmpty()
        }
        #expect(try await world.pbctl("count").out == "\(count + 6)\n")
    }
}

extension X11World: DesktopApps {
    func copyAsApp(_ text: String) async throws -> (app: ChildProcess, count: UInt64) {
        try await copyWithXclip(Data(text.utf8), type: "UTF8_STRING")
    }

    func pasteAsApp() async throws -> String? {
        let pasted = try await xclip("-selection", "clipboard", "-o")
        return pasted.status == 0 ? pasted.out : nil
    }
}

extension WaylandWorld: DesktopApps {
    func copyAsApp(_ text: String) async throws -> (app: ChildProcess, count: UInt64) {
        try await copyWithWlCopy(Data(text.utf8), type: "text/plain;charset=utf-8")
    }

    func pasteAsApp() async throws -> String? {
        let pasted = try await wlPaste("--no-newline")
        return pasted.status == 0 ? pasted.out : nil
    }
}
