import DBus
@testable import DesktopClipboard
import Foundation
import Synchronization
import Testing
import TestSupport

/// pasteboardd's claims on the X11 clipboard against an app's copy made at nearly the same
/// moment: whichever the bridge learns of last must not leave the clipboard owned by nobody who
/// can answer (a script copying with `xclip` and `pbctl copy` back to back did).
@Suite("X11 ownership races")
struct X11OwnershipRaceTests {
    /// Counts what the display reports, by selection.
    final class Recorder: DesktopClipboardDelegate {
        private let counts = Mutex<[DesktopSelection: Int]>([:])
        func desktopSelectionChanged(_ selection: DesktopSelection, source: (any DesktopSource)?) {
            counts.withLock { $0[selection, default: 0] += 1 }
        }
        func desktopConnectionLost(_ reason: String) {}
        func reported(_ selection: DesktopSelection) -> Int { counts.withLock { $0[selection, default: 0] } }
    }

    static func text(_ text: String) -> DesktopOffer {
        DesktopOffer(types: ["UTF8_STRING", "text/plain;charset=utf-8"]) { _ in
            let memory = try UnixFileDescriptor.memoryFile(name: "text")
            _ = Array(text.utf8).withUnsafeBytes { write(memory.rawValue, $0.baseAddress, $0.count) }
            lseek(memory.rawValue, 0, SEEK_SET)
            return memory
        }
    }

    /// A display, and a clipboard of the bridge's on it whose first word (nobody owns the
    /// clipboard) has been reported.
    static func bridged() async throws -> (VirtualX11, X11Clipboard, Recorder) {
        let x11 = try await VirtualX11()
        let recorder = Recorder()
        let bridge = try X11Clipboard.connect(display: x11.display, delegate: recorder)
        guard await eventually({ recorder.reported(.clipboard) == 1 }) else {
            bridge.close()
            x11.stop()
            throw TestSupportError("the display never reported the clipboard's first owner")
        }
        return (x11, bridge, recorder)
    }

    static func paste(_ x11: VirtualX11) async throws -> Outcome {
        try await runProgram(try X11World.tool("xclip", package: "xclip"), ["-selection", "clipboard", "-o"], environment: x11.environment, timeout: .seconds(20))
    }

    @Test("An offer decided before an app's copy was reported is not made: the app keeps the clipboard")
    func offerDecidedBeforeACopyIsDropped() async throws {
        let (x11, bridge, recorder) = try await Self.bridged()
        defer { bridge.close(); x11.stop() }
        let app = try X11Clipboard.connect(display: x11.display, delegate: IgnoringDelegate())
        defer { app.close() }
        app.own(.clipboard, Self.text("the app's copy"))
        #expect(await eventually(timeout: .seconds(10)) { recorder.reported(.clipboard) == 2 })

        // Decided after one report, made after two: dropped.
        bridge.own(.clipboard, Self.text("stale"), reportsSeen: 1)
        try await Task.sleep(for: .milliseconds(300))
        expectSuccess(try await Self.paste(x11), stdout: "the app's copy")
        // Decided after both: made.
        bridge.own(.clipboard, Self.text("current"), reportsSeen: 2)
        #expect(try await eventually { try await Self.paste(x11).out == "current" })
    }

    @Test("An app's ownership that a later claim ended, its event read after the claim, leaves the claim standing")
    func staleOwnerEventAfterAClaim() async throws {
        let (x11, bridge, recorder) = try await Self.bridged()
        defer { bridge.close(); x11.stop() }
        let xclip = try X11World.tool("xclip", package: "xclip")
        let done = Flag()
        // In one turn of the bridge's loop, so that it reads no event in between: an app takes
        // the clipboard, then the bridge claims it. (xclip's parent returns before its child's
        // request to own the clipboard has reached the X server: waited for here.)
        let command = "printf \"the app's\" | DISPLAY=\(x11.display) \(xclip) -selection clipboard -i"
        _ = bridge.loop.submit {
            _ = system(command)
            let deadline = ContinuousClock.now + .seconds(15)
            while bridge.owner(of: .clipboard) == 0, ContinuousClock.now < deadline { usleep(5_000) }
            bridge.takeOwnership(.clipboard, Self.text("ours, later"))
            done.set()
        }
        // Waited for by suspending, not by holding a thread of the tests' small pool.
        #expect(await eventually(timeout: .seconds(30)) { done.isSet })
        // The app's ownership event comes now, older than the claim.
        try await Task.sleep(for: .milliseconds(300))
        expectSuccess(try await Self.paste(x11), stdout: "ours, later")
        #expect(recorder.reported(.clipboard) == 1, "the app's ended copy is not reported")
    }
}
