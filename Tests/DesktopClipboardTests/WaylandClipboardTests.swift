import DBus
import DesktopClipboard
import Foundation
import Synchronization
import Testing
import TestSupport

/// The Wayland bridge against a real compositor: a headless sway per test, with wl-clipboard's
/// `wl-copy` and `wl-paste` as the other apps. Serialized: each test starts a compositor, and
/// two 32 MiB copies at once on a small machine would only measure the machine.
@Suite(.serialized)
struct WaylandClipboardTests {
    // MARK: pasteboardd owns a selection

    @Test func ownedClipboardIsPastedWithItsTypesInOrder() async throws {
        let fixture = try await WaylandFixture()
        let types = ["text/plain;charset=utf-8", "text/plain", "application/x-pasteboardd-test"]
        fixture.clipboard.own(.clipboard, Self.offer(types, data: Data("hello from pasteboardd".utf8)))

        let pasted = try await fixture.pasteOnceOwned(["-t", "text/plain"])
        #expect(pasted.status == 0, "\(pasted)")
        #expect(pasted.out == "hello from pasteboardd")
        let listed = try await fixture.paste(["-l"])
        #expect(listed.out.split(separator: "\n").map(String.init) == types, "\(listed)")
        fixture.finish()
    }

    @Test func ownedLargePayloadStreamsByteExact() async throws {
        let fixture = try await WaylandFixture()
        let payload = try Self.randomBytes(32 << 20)
        fixture.clipboard.own(.clipboard, Self.offer(["application/octet-stream"], data: payload))

        let pasted = try await fixture.pasteOnceOwned(["-t", "application/octet-stream"])
        #expect(pasted.status == 0, "\(pasted.err)")
        #expect(pasted.stdout.count == payload.count)
        #expect(pasted.stdout == payload)
        fixture.finish()
    }

    @Test func readerLeavingEarlyIsHarmless() async throws {
        let fixture = try await WaylandFixture()
        let payload = try Self.randomBytes(32 << 20)
        fixture.clipboard.own(.clipboard, Self.offer(["application/octet-stream"], data: payload))
        // Once the compositor has the selection (`own` returns before it does).
        #expect(try await fixture.pasteOnceOwned(["-l"]).status == 0)

        // The reader takes 16 bytes and goes: the copy meets EPIPE, which must end it quietly
        // (not SIGPIPE the test process), and the next request is served in full.
        let shell = try Paths.executable(named: "sh")
        let early = try await runProgram(
            shell, ["-c", "wl-paste -n -t application/octet-stream | head -c 16 | wc -c"],
            environment: fixture.sway.environment, timeout: .seconds(10))
        #expect(early.out.trimmingCharacters(in: .whitespacesAndNewlines) == "16", "\(early)")
        let pasted = try await fixture.pasteOnceOwned(["-t", "application/octet-stream"])
        #expect(pasted.stdout == payload)
        fixture.finish()
    }

    // MARK: Another app owns a selection

    @Test func copiedTextAndImageAreReportedAndFetched() async throws {
        let fixture = try await WaylandFixture()
        let text = try fixture.copy(["hello from wl-copy"])
        let textSource = try await fixture.nextSource(.clipboard)
        #expect(textSource.types.contains("text/plain"), "\(textSource.types)")
        #expect(try await Self.read(textSource.fetch("text/plain", timeout: .seconds(5), maxBytes: 1 << 30)) == Data("hello from wl-copy".utf8))

        let image = Data((0..<4096).map { UInt8(truncatingIfNeeded: $0 &* 31) })
        let png = try fixture.copy(["-t", "image/png"], input: image)
        let imageSource = try await fixture.nextSource(.clipboard)
        #expect(imageSource.types.contains("image/png"), "\(imageSource.types)")
        #expect(try await Self.read(imageSource.fetch("image/png", timeout: .seconds(5), maxBytes: 1 << 30)) == image)

        // Each copy was told once.
        try await Task.sleep(for: .milliseconds(200))
        #expect(fixture.recorder.changes(of: .clipboard).count == 3)  // the initial empty one, then two
        await #expect(throws: DesktopClipboardError.self) {
            _ = try await imageSource.fetch("text/html", timeout: .seconds(1), maxBytes: 1 << 30)
        }
        withExtendedLifetime((text, png)) {}
        fixture.finish()
    }

    @Test func copiedLargePayloadIsFetchedByteExact() async throws {
        let fixture = try await WaylandFixture()
        let payload = try Self.randomBytes(32 << 20)
        let copier = try fixture.copy(["-t", "application/octet-stream"], input: payload)
        let source = try await fixture.nextSource(.clipboard, timeout: .seconds(20))
        let fetched = try await Self.read(source.fetch("application/octet-stream", timeout: .seconds(5), maxBytes: 1 << 30))
        #expect(fetched.count == payload.count)
        #expect(fetched == payload)
        withExtendedLifetime(copier) {}
        fixture.finish()
    }

    @Test func ownChangeIsNotEchoedButTheNextCopyIs() async throws {
        let fixture = try await WaylandFixture()
        fixture.clipboard.own(.clipboard, Self.offer(["text/plain"], data: Data("ours".utf8)))
        // Make sure the compositor has it (and has sent its echo) before looking.
        #expect(try await fixture.pasteOnceOwned(["-t", "text/plain"]).out == "ours")
        try await Task.sleep(for: .milliseconds(300))
        #expect(fixture.recorder.changes(of: .clipboard).count == 1)  // only the initial one

        let copier = try fixture.copy(["theirs"])
        let source = try await fixture.nextSource(.clipboard)
        #expect(try await Self.read(source.fetch("text/plain", timeout: .seconds(5), maxBytes: 1 << 30)) == Data("theirs".utf8))
        try await Task.sleep(for: .milliseconds(300))
        #expect(fixture.recorder.changes(of: .clipboard).count == 2)
        withExtendedLifetime(copier) {}
        fixture.finish()
    }

    @Test func disownClearsTheSelectionWithoutAnEcho() async throws {
        let fixture = try await WaylandFixture()
        fixture.clipboard.own(.clipboard, Self.offer(["text/plain"], data: Data("ours".utf8)))
        #expect(try await fixture.pasteOnceOwned(["-t", "text/plain"]).out == "ours")
        fixture.clipboard.clear(.clipboard)
        #expect(await eventually { (try? await fixture.paste(["-t", "text/plain"]).status) != 0 })
        try await Task.sleep(for: .milliseconds(300))
        #expect(fixture.recorder.changes(of: .clipboard).count == 1)
        fixture.finish()
    }

    // MARK: Primary selection

    @Test func primarySelectionBothWays() async throws {
        let fixture = try await WaylandFixture()
        #expect(fixture.clipboard.selections == [.clipboard, .primary])
        fixture.clipboard.own(.primary, Self.offer(["text/plain"], data: Data("selected".utf8)))
        let pasted = try await fixture.pasteOnceOwned(["--primary", "-t", "text/plain"])
        #expect(pasted.out == "selected", "\(pasted)")

        let copier = try fixture.copy(["--primary", "middle click"])
        let source = try await fixture.nextSource(.primary)
        #expect(try await Self.read(source.fetch("text/plain", timeout: .seconds(5), maxBytes: 1 << 30)) == Data("middle click".utf8))
        #expect(fixture.recorder.changes(of: .clipboard).count == 1)  // only the initial one
        withExtendedLifetime(copier) {}
        fixture.finish()
    }

    // MARK: Owners and compositors going away

    @Test func ownerQuittingEmptiesTheSelection() async throws {
        let fixture = try await WaylandFixture()
        let copier = try fixture.copy(["short-lived"])
        let source = try await fixture.nextSource(.clipboard)
        copier.kill()
        #expect(await eventually { fixture.recorder.changes(of: .clipboard).count == 3 })
        let last = fixture.recorder.changes(of: .clipboard).last
        #expect(last != nil && last!.source == nil)
        await #expect(throws: DesktopClipboardError.self) {
            _ = try await source.fetch("text/plain", timeout: .seconds(1), maxBytes: 1 << 30)
        }
        do {
            _ = try await source.fetch("text/plain", timeout: .seconds(1), maxBytes: 1 << 30)
        } catch {
            guard case .ownerGone = error else {
                Issue.record("expected ownerGone, got \(error)")
                return
            }
        }
        fixture.finish()
    }

    @Test func noCompositorIsUnavailable() throws {
        let directory = try Paths.temporaryDirectory("pasteboardd-no-wayland")
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let error = try #require(connectionError(display: directory + "/wayland-9"))
        #expect(error == .unavailable(error.description) && error.description.contains("no Wayland compositor"), "\(error)")
    }

    /// A compositor that answers but has no data-control protocol: unsupported, which no
    /// retry mends, unlike one that cannot be reached.
    @Test func aCompositorWithoutDataControlIsUnsupported() throws {
        let compositor = try BareCompositor()
        let error = try #require(connectionError(display: compositor.environment["XDG_RUNTIME_DIR"]! + "/" + compositor.environment["WAYLAND_DISPLAY"]!))
        #expect(error == .unsupported(error.description) && error.description.contains("offers no data-control protocol"), "\(error)")
    }

    /// Why connecting to `display` failed; nil, recorded as an issue, when it did not.
    private func connectionError(display: String) -> DesktopClipboardError? {
        do {
            let clipboard = try WaylandClipboard.connect(display: display, delegate: WaylandRecorder())
            clipboard.close()
            Issue.record("joined \(display)")
            return nil
        } catch {
            return error
        }
    }

    @Test func compositorQuittingIsReported() async throws {
        let fixture = try await WaylandFixture()
        #expect(fixture.clipboard.description == "Wayland display \(fixture.sway.socketPath) (zwlr_data_control_manager_v1)")
        fixture.sway.kill()
        #expect(await eventually { !fixture.recorder.lost.isEmpty })
        try await Task.sleep(for: .milliseconds(100))
        #expect(fixture.recorder.lost.count == 1)
        fixture.finish()
    }

    // MARK: Helpers

    /// An offer of `types`, each opening a memfd holding `data`.
    static func offer(_ types: [String], data: Data) -> DesktopOffer {
        DesktopOffer(types: types) { _ in
            let file = try UnixFileDescriptor.memoryFile(name: "offer")
            try data.withUnsafeBytes { buffer in
                var done = 0
                while done < buffer.count {
                    let count = write(file.rawValue, buffer.baseAddress! + done, buffer.count - done)
                    guard count > 0 else { throw SystemCallError("write") }
                    done += count
                }
            }
            lseek(file.rawValue, 0, SEEK_SET)
            return file
        }
    }

    static func randomBytes(_ count: Int) throws -> Data {
        guard let random = FileHandle(forReadingAtPath: "/dev/urandom") else { throw TestSupportError("no /dev/urandom") }
        defer { try? random.close() }
        var data = Data()
        while data.count < count, let chunk = try random.read(upToCount: count - data.count), !chunk.isEmpty {
            data.append(chunk)
        }
        guard data.count == count else { throw TestSupportError("/dev/urandom gave \(data.count) bytes") }
        return data
    }

    /// Everything `descriptor` reads to its end, read on a thread of its own (a pipe blocks).
    static func read(_ descriptor: UnixFileDescriptor) async -> Data {
        await withCheckedContinuation { continuation in
            Thread.detachNewThread {
                var data = Data()
                let buffer = UnsafeMutableRawPointer.allocate(byteCount: 1 << 20, alignment: 16)
                defer { buffer.deallocate() }
                while true {
                    let count = Glibc.read(descriptor.rawValue, buffer, 1 << 20)
                    if count < 0, errno == EINTR { continue }
                    guard count > 0 else { break }
                    data.append(buffer.assumingMemoryBound(to: UInt8.self), count: count)
                }
                continuation.resume(returning: data)
            }
        }
    }
}

/// One test's compositor, bridge and delegate.
final class WaylandFixture: Sendable {
    let sway: HeadlessSway
    let recorder = WaylandRecorder()
    let clipboard: WaylandClipboard
    /// How many changes of each selection had been reported when the last ``copy(_:input:)``
    /// started: its report is the first after that, however soon it arrives.
    private let marks = Mutex<[DesktopSelection: Int]>([:])

    /// Starts sway, connects, and waits for the initial report of each selection.
    ///
    /// - Parameter servingIdleTimeoutMilliseconds: How long an app that asked for the data this
    ///   clipboard owns may read none (the bridge's 30 s unless a test holds requests longer).
    init(servingIdleTimeoutMilliseconds: Int32 = WaylandClipboard.defaultServingIdleTimeoutMilliseconds) async throws {
        sway = try await HeadlessSway()
        clipboard = try WaylandClipboard.connect(display: sway.socketPath, delegate: recorder, servingIdleTimeoutMilliseconds: servingIdleTimeoutMilliseconds)
        let initial = await eventually { [recorder, clipboard] in recorder.changes.count >= clipboard.selections.count }
        #expect(initial, "the current selections were not reported after connecting")
        for change in recorder.changes { #expect(change.source == nil, "\(change.selection) was not empty") }
    }

    func finish() {
        clipboard.close()
    }

    /// Runs `wl-paste -n` with `arguments` against this compositor.
    func paste(_ arguments: [String]) async throws -> Outcome {
        try await runProgram(
            try Paths.executable(named: "wl-paste"), ["-n"] + arguments, environment: sway.environment,
            timeout: .seconds(10))
    }

    /// Runs `wl-paste -n` with `arguments` until it succeeds (within 5 s): `own` returns before
    /// the compositor has the new selection, and a paste started at once may still find none.
    func pasteOnceOwned(_ arguments: [String]) async throws -> Outcome {
        let deadline = ContinuousClock.now + .seconds(5)
        while true {
            let outcome = try await paste(arguments)
            if outcome.status == 0 || ContinuousClock.now > deadline { return outcome }
            try await Task.sleep(for: .milliseconds(20))
        }
    }

    /// Starts `wl-copy --foreground` with `arguments` (and `input` on its standard input); it
    /// owns the selection until killed.
    func copy(_ arguments: [String], input: Data = Data()) throws -> ChildProcess {
        marks.withLock { marks in
            for selection in DesktopSelection.allCases { marks[selection] = recorder.changes(of: selection).count }
        }
        let child = try sway.client(try Paths.executable(named: "wl-copy"), ["--foreground"] + arguments)
        child.send(input)
        return child
    }

    /// Waits for the next report of another app's data on `selection`.
    func nextSource(_ selection: DesktopSelection, timeout: Duration = .seconds(15)) async throws -> any DesktopSource {
        let seen = marks.withLock { $0[selection] } ?? recorder.changes(of: selection).count
        var found: (any DesktopSource)?
        _ = await eventually(timeout: timeout) {
            let changes = recorder.changes(of: selection)
            // The first source reported since; the report of the empty selection found at
            // connecting may still be on its way, and is passed over.
            found = changes.dropFirst(seen).lazy.compactMap(\.source).first
            return found != nil
        }
        guard let found else { throw TestSupportError("no new \(selection) was reported") }
        return found
    }
}

/// Records what the bridge tells its delegate.
final class WaylandRecorder: DesktopClipboardDelegate {
    struct Change: Sendable {
        let selection: DesktopSelection
        let source: (any DesktopSource)?
    }

    private let state = Mutex<(changes: [Change], lost: [String])>(([], []))

    var changes: [Change] { state.withLock { $0.changes } }
    var lost: [String] { state.withLock { $0.lost } }

    func changes(of selection: DesktopSelection) -> [Change] {
        changes.filter { $0.selection == selection }
    }

    func desktopSelectionChanged(_ selection: DesktopSelection, source: (any DesktopSource)?) {
        state.withLock { $0.changes.append(Change(selection: selection, source: source)) }
    }

    func desktopConnectionLost(_ reason: String) {
        state.withLock { $0.lost.append(reason) }
    }
}
