import DBus
@testable import DesktopClipboard
import Foundation
import Synchronization
import Testing
import TestSupport

/// Serving our selection to Wayland apps that ask for it and then do not read: no request may
/// hold a thread for longer than the idle timeout, nor may such requests pile up without end.
@Suite(.serialized)
struct OfferServingTests {
    /// `poll` says a pipe is writable once a page of it is free; a blocking write of a chunk then
    /// waited for a reader that never read, past the idle timeout, for ever.
    @Test func aReaderThatNeverReadsIsGivenUpOnAfterTheIdleTimeout() async throws {
        let (reader, writer) = try Self.pipe()
        let source = try UnixFileDescriptor.memoryFile(name: "served")
        #expect(ftruncate(source.rawValue, 4 << 20) == 0)
        let took = await Self.timeToCopy(from: source, to: writer)
        // A 300 ms timeout, bounded with room for a stalled machine: the fault held it for ever.
        #expect(took < .seconds(30), "the copy held its thread for \(took)")
        withExtendedLifetime(reader) {}
    }

    /// Our data opened as a pipe that gives nothing (a provider that never writes): the copy
    /// ends after the idle timeout too, rather than hold its thread and its place.
    @Test func aSourceThatGivesNothingIsGivenUpOnAfterTheIdleTimeout() async throws {
        let (sourceRead, sourceWrite) = try Self.pipe()
        let (targetRead, targetWrite) = try Self.pipe()
        let took = await Self.timeToCopy(from: sourceRead, to: targetWrite)
        // A 300 ms timeout, bounded with room for a stalled machine: the fault held it for ever.
        #expect(took < .seconds(30), "the copy held its thread for \(took)")
        withExtendedLifetime((sourceWrite, targetRead)) {}
    }

    /// How long ``OfferServing/copy(from:to:idleTimeoutMilliseconds:)`` takes to give up, with
    /// an idle timeout of 300 ms, on a thread of its own (it blocks).
    static func timeToCopy(from source: UnixFileDescriptor, to target: UnixFileDescriptor) async -> Duration {
        let started = ContinuousClock.now
        return await withCheckedContinuation { done in
            Thread.detachNewThread {
                OfferServing.copy(from: source, to: target, idleTimeoutMilliseconds: 300)
                done.resume(returning: ContinuousClock.now - started)
            }
        }
    }

    static func pipe() throws -> (read: UnixFileDescriptor, write: UnixFileDescriptor) {
        var ends: [Int32] = [0, 0]
        guard Glibc.pipe(&ends) == 0 else { throw SystemCallError("pipe") }
        return (UnixFileDescriptor(owning: ends[0]), UnixFileDescriptor(owning: ends[1]))
    }
}

/// In the Wayland suite, which starts one compositor at a time.
extension WaylandClipboardTests {
    /// Requests past ``OfferServing/maxConcurrentCopies`` are answered empty at once, and those
    /// within it are served, while none of the earlier ones reads.
    @Test func stalledRequestsAreBoundedAndTheRestAnsweredEmpty() async throws {
        // Held requests must outlast the asking of all of them, which a loaded machine has
        // stretched past the bridge's 30 s (and the first copies then ended, freeing places).
        let fixture = try await WaylandFixture(servingIdleTimeoutMilliseconds: 600_000)
        defer { fixture.finish() }
        let large = Data(repeating: 0x61, count: 1 << 20)
        fixture.clipboard.own(.clipboard, Self.offer(["application/x-large"], data: large))
        // Another app: a second client of the compositor, which sees our selection.
        let recorder = WaylandRecorder()
        let app = try WaylandClipboard.connect(display: fixture.sway.socketPath, delegate: recorder)
        defer { app.close() }
        var source: (any DesktopSource)?
        #expect(await eventually {
            source = recorder.changes(of: .clipboard).lazy.compactMap(\.source).last
            return source?.types == ["application/x-large"]
        })
        let offered = try #require(source)
        var held: [UnixFileDescriptor] = []
        for _ in 0..<OfferServing.maxConcurrentCopies {
            held.append(try await offered.fetch("application/x-large", timeout: .seconds(5), maxBytes: 1 << 30))
        }
        // Each of those is being served (its copy waits for its reader): one more is answered
        // empty at once, though the data is there.
        let pastTheBound = try await offered.fetch("application/x-large", timeout: .seconds(5), maxBytes: 1 << 30)
        #expect(await Self.read(pastTheBound).isEmpty)
        // The first is served whole once read; its place is free again.
        #expect(await Self.read(held.removeFirst()) == large)
        #expect(try await eventually {
            await Self.read(try await offered.fetch("application/x-large", timeout: .seconds(5), maxBytes: 1 << 30)) == large
        })
        // The rest leave without reading: their copies end, and everyone is served again.
        held = []
        #expect(try await eventually { try await fixture.pasteOnceOwned(["-t", "application/x-large"]).stdout == large })
    }
}
