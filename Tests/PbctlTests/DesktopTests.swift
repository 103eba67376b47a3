import Testing

/// What holds on X11 and on Wayland alike.
@Suite("Desktop bridge: X11 and Wayland")
struct DesktopTests {
    enum Display: String, CaseIterable, Sendable {
        case x11, wayland

        func world() async throws -> any DesktopApps {
            self == .x11 ? try await X11World() : try await WaylandWorld()
        }
    }

    @Test("general is the clipboard whoever made its contents: a clear or a transient copy over an app's copy empties it, and a restored app copy is offered", arguments: Display.allCases)
    func theClipboardFollowsEveryChange(_ display: Display) async throws {
        try await display.world().expectTheClipboardFollowsEveryChange()
    }
}
