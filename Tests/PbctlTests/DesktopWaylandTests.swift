import DBus
import DesktopClipboard
import Foundation
import Testing
import TestSupport

/// The desktop bridge on Wayland: a real headless sway (wlroots' data-control protocol),
/// `wl-copy` and `wl-paste` as the other apps, the real `pasteboardd` bridging to it and the
/// real `pbctl`.
@Suite("Desktop bridge: Wayland")
struct DesktopWaylandTests {
    @Test("A wl-copy is one change of general, pasted byte-exact by pbctl, its data fetched only when read")
    func copyFromWayland() async throws {
        let desktop = try await WaylandWorld()
        let before = try await desktop.world.changeCount()
        let (app, count) = try await desktop.copyWithWlCopy(Data("hello from Wayland ✓".utf8), type: "text/plain;charset=utf-8")
        defer { app.kill() }
        #expect(count == before + 1)
        let info = try await desktop.world.pbctl("info")
        #expect(info.out.contains("desktop: Wayland display \(desktop.sway.display) (zwlr_data_control_manager_v1) clipboard\n"), "\(info)")
        #expect(info.out.contains("text/plain;charset=utf-8\tpromised"), "\(info)")
        expectSuccess(try await desktop.world.pbctl("paste"), stdout: "hello from Wayland ✓")
        #expect(try await desktop.world.changeCount() == count)
    }

    @Test("A PNG and 32 MiB copied with wl-copy are pasted byte-exact")
    func largeAndBinaryFromWayland() async throws {
        let desktop = try await WaylandWorld()
        let png = pngBytes(extra: 4096)
        let (pngApp, _) = try await desktop.copyWithWlCopy(png, type: "image/png")
        let pasted = try await desktop.world.pbctl("paste", "-t", "image/png")
        #expect(pasted.status == 0, "\(pasted.err)")
        #expect(pasted.stdout == png)
        pngApp.kill()

        let large = randomBytes(32 << 20)
        let (app, _) = try await desktop.copyWithWlCopy(large, type: "application/octet-stream")
        defer { app.kill() }
        let output = try await desktop.world.pbctl("paste", "-t", "application/octet-stream")
        #expect(output.status == 0, "\(output.err)")
        #expect(output.stdout == large)
    }

    @Test("pbctl copy makes pasteboardd the selection's source: types listed, text aliases, a PNG and 32 MiB streamed")
    func copyToWayland() async throws {
        let desktop = try await WaylandWorld()
        expectSuccess(try await desktop.world.pbctl("copy", input: "from pbctl"))
        let types = try await desktop.waitUntilOffered("UTF8_STRING")
        #expect(types == ["text/plain;charset=utf-8", "text/plain", "UTF8_STRING", "TEXT", "STRING"])
        for type in types {
            expectSuccess(try await desktop.wlPaste("--no-newline", "--type", type), stdout: "from pbctl")
        }

        let png = pngBytes(extra: 100_000)
        let pngFile = try temporaryFile(png)
        defer { try? FileManager.default.removeItem(atPath: pngFile) }
        expectSuccess(try await desktop.world.pbctl("copy", pngFile))
        #expect(try await desktop.waitUntilOffered("image/png") == ["image/png"])
        #expect(try await desktop.wlPaste("--type", "image/png").stdout == png)

        let large = randomBytes(32 << 20)
        let largeFile = try temporaryFile(large)
        defer { try? FileManager.default.removeItem(atPath: largeFile) }
        expectSuccess(try await desktop.world.pbctl("copy", "-t", "application/x-test-large", largeFile))
        try await desktop.waitUntilOffered("application/x-test-large")
        let pasted = try await desktop.wlPaste("--type", "application/x-test-large")
        #expect(pasted.status == 0, "\(pasted.err)")
        #expect(pasted.stdout == large)
    }

    @Test("The primary selection is the pasteboard named primary, both ways")
    func primarySelection() async throws {
        let desktop = try await WaylandWorld()
        let (app, _) = try await desktop.copyWithWlCopy(Data("selected".utf8), type: "text/plain", primary: true)
        defer { app.kill() }
        expectSuccess(try await desktop.world.pbctl("-p", "primary", "paste"), stdout: "selected")
        #expect(try await desktop.world.changeCount("general") == 0)

        expectSuccess(try await desktop.world.pbctl("-p", "primary", "copy", input: "middle click"))
        try await desktop.waitUntilOffered("UTF8_STRING", primary: true)
        expectSuccess(try await desktop.wlPaste("--primary", "--no-newline"), stdout: "middle click")
    }

    @Test("wl-paste --watch sees each pbctl copy exactly once, and pbctl watch each wl-copy once")
    func eachCopyOnce() async throws {
        let desktop = try await WaylandWorld()
        let log = try Paths.temporaryDirectory("wl-watch") + "/changes"
        let watching = try ChildProcess(
            try X11World.tool("wl-paste", package: "wl-clipboard"), ["--watch", "sh", "-c", "cat >> '\(log)'; echo >> '\(log)'"],
            environment: desktop.sway.environment)
        watching.send(Data())
        defer { watching.kill() }
        // wl-paste may report the empty selection it finds first as an empty line, late on a
        // loaded machine: leading empty lines are that report, not a copy.
        try await Task.sleep(for: .milliseconds(300))

        for text in ["one", "two", "three"] {
            expectSuccess(try await desktop.world.pbctl("copy", input: text))
            try await waitUntil { lines(log).last == text }
        }
        try await Task.sleep(for: .milliseconds(500))
        #expect(Array(lines(log).drop { $0.isEmpty }) == ["one", "two", "three"])

        let watcher = try desktop.world.watch("watch", "--json")
        defer { watcher.stop() }
        let primed = try await watcher.prime(desktop.world) { "{\"name\":\"general\",\"count\":\($0),\"types\":[\"text/plain;charset=utf-8\"]}" }
        let start = try await desktop.world.changeCount()
        let (app, count) = try await desktop.copyWithWlCopy(Data("<p>x</p>".utf8), type: "text/html")
        defer { app.kill() }
        #expect(count == start + 1)
        try await Task.sleep(for: .milliseconds(500))
        #expect(try await desktop.world.changeCount() == count)
        // wl-copy offers HTML as text too; the X11 names of text are folded into UTF-8 text.
        #expect(Array(try await watcher.waitForLines(primed + 1).dropFirst(primed)) == [
            "{\"name\":\"general\",\"count\":\(count),\"types\":[\"text/html\",\"text/plain\",\"text/plain;charset=utf-8\"]}"
        ])
    }

    @Test("An app that quits before anyone read its copy gives ProviderFailed")
    func appQuits() async throws {
        let desktop = try await WaylandWorld()
        let (app, _) = try await desktop.copyWithWlCopy(Data("never read".utf8), type: "text/html")
        app.kill()
        try await Task.sleep(for: .milliseconds(200))
        let failed = try await desktop.world.pbctl("paste", "-t", "text/html")
        #expect(failed.status == 1, "\(failed)")
        do {
            _ = try await desktop.world.call("ReadData", [.string("general"), .uint32(0), .string("text/html"), .uint64(0)])
            Issue.record("ReadData of a vanished app's copy succeeded")
        } catch {
            #expect(error.name == "org.pasteboardd.Error.ProviderFailed")
        }
    }

    @Test("An app that quits while its data is read gives ProviderFailed, never the data cut short")
    func appQuitsHalfway() async throws {
        let desktop = try await WaylandWorld()
        let before = try await desktop.world.changeCount()
        // The app: a Wayland client whose data comes from a pipe the test writes.
        var ends: [Int32] = [0, 0]
        #expect(pipe(&ends) == 0)
        let readEnd = UnixFileDescriptor(owning: ends[0])
        let delegate = IgnoringDelegate()
        let app = try WaylandClipboard.connect(display: desktop.sway.socketPath, delegate: delegate)
        app.own(.clipboard, DesktopOffer(types: ["application/x-partial"]) { _ in try readEnd.duplicate() })
        _ = try await desktop.world.waitForCount(above: before)

        async let paste = desktop.world.pbctl("paste", "-t", "application/x-partial")
        let chunk = [UInt8](repeating: 0x70, count: 256 << 10)
        let writeEnd = ends[1]
        await withCheckedContinuation { (done: CheckedContinuation<Void, Never>) in
            Thread.detachNewThread {
                _ = chunk.withUnsafeBytes { write(writeEnd, $0.baseAddress, $0.count) }
                done.resume()
            }
        }
        // The app quits, and only then does its data end.
        app.close()
        try await Task.sleep(for: .milliseconds(100))
        close(writeEnd)
        let failed = try await paste
        #expect(failed.status == 1, "\(failed)")
        #expect(failed.err.contains("quit or copied something else while"), "\(failed.err)")
        #expect(failed.stdout.isEmpty)
        withExtendedLifetime(delegate) {}
    }

    @Test("An app that never sends its data gives ProviderFailed within provider-timeout-ms")
    func appNeverSends() async throws {
        let desktop = try await WaylandWorld(limits: ["provider-timeout-ms=1000"])
        let before = try await desktop.world.changeCount()
        // The app hands over a pipe it never writes to, nor closes.
        var ends: [Int32] = [0, 0]
        #expect(pipe(&ends) == 0)
        let (readEnd, writeEnd) = (UnixFileDescriptor(owning: ends[0]), UnixFileDescriptor(owning: ends[1]))
        let delegate = IgnoringDelegate()
        let app = try WaylandClipboard.connect(display: desktop.sway.socketPath, delegate: delegate)
        defer { app.close() }
        app.own(.clipboard, DesktopOffer(types: ["text/html"]) { _ in try readEnd.duplicate() })
        _ = try await desktop.world.waitForCount(above: before)
        let started = ContinuousClock.now
        let failed = try await desktop.world.pbctl("paste", "-t", "text/html")
        #expect(failed.status == 1, "\(failed)")
        #expect(failed.err.contains("did not send its text/html data: no data arrived"), "\(failed.err)")
        #expect(failed.err.contains("(provider-timeout-ms)"), "\(failed.err)")
        #expect(ContinuousClock.now - started < .seconds(20))
        withExtendedLifetime((delegate, writeEnd)) {}
    }

    @Test("Concealed contents carry the password manager hint; transient ones are not offered")
    func secrets() async throws {
        let desktop = try await WaylandWorld()
        expectSuccess(try await desktop.world.pbctl("copy", "--concealed", input: "hunter2"))
        let types = try await desktop.waitUntilOffered("x-kde-passwordManagerHint")
        #expect(types.contains("text/plain;charset=utf-8"))
        expectSuccess(try await desktop.wlPaste("--no-newline"), stdout: "hunter2")
        expectSuccess(try await desktop.wlPaste("--no-newline", "--type", "x-kde-passwordManagerHint"), stdout: "secret")
        // Transient contents: see DesktopTests.

        // Cleared by an app (a password manager's timeout): the secret goes, and is not taken back.
        let count = try await desktop.world.changeCount()
        expectSuccess(try await desktop.wlCopy("--clear"))
        #expect(try await desktop.world.waitForCount(above: count) == count + 1)
        #expect(try await desktop.world.pbctl("paste").status == 1)
        try await Task.sleep(for: .milliseconds(300))
        #expect(try await desktop.wlPaste("--no-newline").status != 0, "the secret is not offered again")
        #expect(try await desktop.world.changeCount() == count + 1)
    }

    @Test("Losing the compositor leaves the server serving")
    func compositorGoes() async throws {
        let desktop = try await WaylandWorld()
        desktop.sway.kill()
        try await Task.sleep(for: .milliseconds(200))
        expectSuccess(try await desktop.world.pbctl("copy", input: "no compositor"))
        expectSuccess(try await desktop.world.pbctl("paste"), stdout: "no compositor")
        // The bridge notices the loss on its own thread; on a loaded machine that may come
        // after the paste.
        try await waitUntil { desktop.world.server?.log.contains("lost the Wayland display") == true }
        let info = try await desktop.world.pbctl("info")
        #expect(!info.out.contains("desktop:"), "\(info)")
    }

    private func lines(_ path: String) -> [String] {
        let text = (try? String(contentsOfFile: path, encoding: .utf8)) ?? ""
        return text.split(separator: "\n", omittingEmptySubsequences: false).dropLast().map(String.init)
    }

    private func waitUntil(_ condition: () -> Bool) async throws {
        let deadline = ContinuousClock.now + .seconds(30)
        while !condition() {
            guard ContinuousClock.now < deadline else { throw TestSupportError("condition not met within 30 s") }
            try await Task.sleep(for: .milliseconds(20))
        }
    }
}
