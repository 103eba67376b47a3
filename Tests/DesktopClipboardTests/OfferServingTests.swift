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
        var ends: [Int32] = [0, 0]
        #expect(pipe(&ends) == 0)
        let reader = UnixFileDescriptor(owning: ends[0])
        let writer = UnixFileDescriptor(owning: ends[1])
        let source = try UnixFileDescriptor.memoryFile(name: "served")
        #expect(ftruncate(source.rawValue, 4 << 20) == 0)
        let started = ContinuousClock.now
        let finished = await withCheckedContinuation { (done: CheckedContinuation<Duration, Never>) in
            Thread.detachNewThread {
                OfferServing.copy(from: source, to: writer, idleTimeoutMilliseconds: 300)
                done.resume(returning: ContinuousClock.now - started)
            }
        }
        #expect(finished < .seconds(5), "the copy held its thread for \(finished)")
        _ = reader
    }

    /// Requests past ``OfferServing/maxConcurrentCopies`` are answered empty at once, and those
    /// within it are served, while none of the earlier ones reads.
    @Test func stalledRequestsAreBoundedAndTheRestAnsweredEmpty() async throws {
        let fixture = try await WaylandFixture()
        defer { fixture.finish() }
        let large = Data(repeating: 0x61, count: 1 << 20)
        fixture.clipboard.own(.clipboard, WaylandClipboardTests.offer(["application/x-large"], data: large))
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
        let threadsBefore = Self.threadCount()
        var held: [UnixFileDescriptor] = []
        for _ in 0..<(OfferServing.maxConcurrentCopies + 16) {
            held.append(try await offered.fetch("application/x-large", timeout: .seconds(5), maxBytes: 1 << 30))
        }
        // Every request within the bound has its thread; none past it.
        #expect(await eventually { Self.threadCount() - threadsBefore >= OfferServing.maxConcurrentCopies - 4 })
        try await Task.sleep(for: .milliseconds(300))
        let extra = Self.threadCount() - threadsBefore
        #expect(extra <= OfferServing.maxConcurrentCopies + 8, "\(extra) threads for \(held.count) requests")
        // The last one asked past the bound: answered empty.
        #expect(await WaylandClipboardTests.read(held.removeLast()).isEmpty)
        // The first is served whole once read.
        #expect(await WaylandClipboardTests.read(held.removeFirst()) == large)
    }

    /// The process's threads, as the kernel counts them.
    static func threadCount() -> Int {
        let status = (try? String(contentsOfFile: "/proc/self/status", encoding: .utf8)) ?? ""
        let line = status.split(separator: "\n").first { $0.hasPrefix("Threads:") }
        return line.flatMap { Int($0.dropFirst("Threads:".count).trimmingCharacters(in: .whitespaces)) } ?? 0
    }
}
