import Foundation
import Synchronization
import Testing
import TestSupport

@testable import Pasteboard

/// Data larger than the server passes inline (it runs with `max-inline-bytes=65536`): it
/// travels through descriptors, with progress, and a load can be cancelled.
///
/// Serialized, as the tests look for files the library leaves in the temporary directory.
@Suite("Large transfers", .serialized)
struct LargeTransferTests {
    static let limits = ["max-inline-bytes=65536"]

    @Test("setData and data(forType:) move data above the inline limit, both ways")
    func largeData() async throws {
        let world = try await World(limits: Self.limits)
        let pasteboard = world.pasteboard()
        // Above the server's limit but below the client's own inline cutoff: refused inline,
        // then sent by descriptor. And well above both.
        for size in [65_537, 200 << 10, 3 << 20] {
            let bytes = randomBytes(size)
            #expect(try await pasteboard.setData(bytes, forType: .pdf))
            #expect(try await pasteboard.pasteboardItems?.first?.sizesByType.map(\.size) == [size])
            #expect(try await world.pasteboard().data(forType: .pdf) == bytes, "\(size) bytes")
            #expect(try await pasteboard.pasteboardItems?.first?.data(forType: .pdf) == bytes)
            #expect(try await pasteboard.loadTransferable(type: Data.self) == bytes)
            let pasted = try await world.pbctl("paste", "-t", "application/pdf")
            #expect(pasted.status == 0)
            #expect(pasted.stdout == bytes, "\(size) bytes through pbctl")
        }

        // Written by another process, read here.
        let bytes = randomBytes(1 << 20)
        let file = try temporaryFile(bytes)
        defer { try? FileManager.default.removeItem(at: file) }
        expectSuccess(try await world.pbctl("copy", file.path, "-t", "application/zip"))
        #expect(try await pasteboard.data(forType: .zip) == bytes)
    }

    /// The threads of this process streaming data to the server. Tests of other suites may run
    /// writers of their own meanwhile: waiting for none is sound, counting some is not.
    static func writerThreads() -> Int {
        let tasks = (try? FileManager.default.contentsOfDirectory(atPath: "/proc/self/task")) ?? []
        return tasks.filter { task in
            (try? String(contentsOfFile: "/proc/self/task/\(task)/comm", encoding: .utf8))?.hasPrefix("pasteboard-feed") == true
        }.count
    }

    @Test("large data streams through a pipe whose writer thread ends with the write, stored or refused")
    func writerThreadEnds() async throws {
        let world = try await World(limits: ["max-inline-bytes=65536", "max-item-bytes=4194304"])
        let pasteboard = world.pasteboard()
        let stored = randomBytes(4 << 20)
        #expect(try await pasteboard.setData(stored, forType: .pdf))
        #expect(await eventually { Self.writerThreads() == 0 })

        // Four times the limit: the server stops reading at the limit and refuses the write;
        // the writer finds nobody reading and ends.
        let error = await #expect(throws: PasteboardError.self) { try await pasteboard.setData(randomBytes(16 << 20), forType: .pdf) }
        #expect(error?.code == .tooLarge)
        #expect(await eventually { Self.writerThreads() == 0 })
        #expect(try await world.pasteboard().data(forType: .pdf) == stored)
    }

    @Test("a writer thread whose reader goes away ends")
    func writerWithoutReader() async throws {
        // This writer's own end, not a count of threads other tests may be running too.
        let finished = Mutex(false)
        let readEnd = try PipeFeeder.readEnd(streaming: randomBytes(1 << 20)) { finished.withLock { $0 = true } }
        // Blocked on a full pipe that nobody reads.
        try await Task.sleep(for: .milliseconds(100))
        #expect(!finished.withLock { $0 })
        close(readEnd)
        #expect(await eventually { finished.withLock { $0 } })
    }

    @Test("large text reads back as a string, by exact type and by conformance")
    func largeText() async throws {
        let world = try await World(limits: Self.limits)
        let pasteboard = world.pasteboard()
        let text = String(repeating: "all work and no play ", count: 10_000)
        try await pasteboard.setString(text)
        #expect(try await pasteboard.string() == text)
        #expect(try await pasteboard.string(forType: .plainText) == text)
        #expect(try await pasteboard.loadTransferable(type: String.self) == text)

        try await pasteboard.setString(text, forType: .html)
        #expect(try await pasteboard.string(forType: .plainText) == text)
    }

    @Test("a FileRepresentation load reports progress, increasing, ending at 1, and leaves only the caller's file")
    func fileProgress() async throws {
        let world = try await World(limits: Self.limits)
        let bytes = randomBytes(6 << 20 + 100)
        let source = try temporaryFile(bytes, extension: "mov")
        defer { try? FileManager.default.removeItem(at: source) }
        try await world.pasteboard().writeObjects([Clip(file: source)])

        let before = temporaryEntries(prefix: "pasteboard-")
        let fractions = Collected<Double>()
        let clip = try #require(try await world.pasteboard().loadTransferable(type: Clip.self) { fractions.append($0) })
        #expect(try Data(contentsOf: clip.file) == bytes)

        let reported = fractions.all
        #expect(reported.count >= 3, "\(reported)")
        #expect(reported.first.map { $0 > 0 && $0 < 1 } == true, "\(reported)")
        #expect(zip(reported, reported.dropFirst()).allSatisfy { $0 <= $1 }, "\(reported)")
        #expect(zip(reported, reported.dropFirst()).contains { $0 < $1 }, "\(reported)")
        #expect(reported.last == 1)
        #expect(reported.allSatisfy { (0...1).contains($0) })

        // Deleting the one file the caller was given leaves nothing of the load behind.
        try FileManager.default.removeItem(at: clip.file)
        #expect(leftovers(since: before, extension: "mov") == [])
    }

    @Test("a large load as bytes reports progress and leaves no file behind")
    func dataProgress() async throws {
        let world = try await World(limits: Self.limits)
        let bytes = randomBytes(3 << 20)
        try await world.pasteboard().setData(bytes, forType: .quickTimeMovie)

        let before = temporaryEntries(prefix: "pasteboard-")
        let fractions = Collected<Double>()
        let loaded = try await world.pasteboard().loadTransferable(type: Data.self) { fractions.append($0) }
        #expect(loaded == bytes)
        #expect(fractions.all.last == 1)
        #expect(zip(fractions.all, fractions.all.dropFirst()).allSatisfy { $0 <= $1 })
        #expect(leftovers(since: before, extension: "mov") == [])

        // A small load reports completion too.
        try await world.pasteboard().setString("small")
        let small = Collected<Double>()
        #expect(try await world.pasteboard().loadTransferable(type: String.self) { small.append($0) } == "small")
        #expect(small.all == [1])
    }

    @Test("a load whose data ends early, the server killed while sending it, fails instead of returning part of it")
    func loadCutShortFails() async throws {
        let world = try await World(limits: Self.limits)
        let server = try #require(world.server)
        let bytes = randomBytes(24 << 20)
        try await world.pasteboard().setData(bytes, forType: .quickTimeMovie)
        // The first progress report holds the reader while the server dies mid-pipe.
        let killed = Collected<Bool>()
        await #expect(throws: PasteboardError.self) {
            _ = try await world.pasteboard().loadTransferable(type: Data.self) { _ in
                guard killed.all.isEmpty else { return }
                killed.append(true)
                server.send(SIGKILL)
                usleep(500_000)
            }
        }
        #expect(killed.all == [true])
    }

    @Test("cancelling a 200 MiB load throws CancellationError and leaves no temporary file")
    func cancel() async throws {
        let world = try await World(limits: Self.limits)
        let size = 200 << 20
        // A sparse file: 200 MiB to stream, nothing to write first.
        let source = try temporaryFile(Data(), extension: "mov")
        defer { try? FileManager.default.removeItem(at: source) }
        let handle = try FileHandle(forWritingTo: source)
        try handle.truncate(atOffset: UInt64(size))
        try handle.close()
        try await world.pasteboard().writeObjects([Clip(file: source)])
        #expect(try await world.pasteboard().pasteboardItems?.first?.sizesByType.map(\.size) == [size])

        let before = temporaryEntries(prefix: "pasteboard-")
        let fractions = Collected<Double>()
        let canceller = Canceller<Clip?>()
        let started = ContinuousClock.now
        let task = Task {
            try await world.pasteboard().loadTransferable(type: Clip.self) { fraction in
                fractions.append(fraction)
                if fraction > 0 { canceller.cancel() }
            }
        }
        canceller.set(task)

        let result = await task.result
        #expect(throws: CancellationError.self) { try result.get() }
        #expect(ContinuousClock.now - started < .seconds(30))
        #expect(fractions.all.allSatisfy { $0 < 1 }, "cancelled before the end: \(fractions.all.suffix(3))")
        #expect(leftovers(since: before, extension: "mov") == [])

        // The server is unharmed and the data still there.
        #expect(try await world.pasteboard().types == [.quickTimeMovie])
        try await world.pasteboard().setString("after")
        #expect(try await world.pasteboard().string() == "after")
    }

    @Test("cancelling a load after a short delay throws CancellationError")
    func cancelAfterDelay() async throws {
        let world = try await World(limits: Self.limits)
        let size = 200 << 20
        let source = try temporaryFile(Data(), extension: "mov")
        defer { try? FileManager.default.removeItem(at: source) }
        let handle = try FileHandle(forWritingTo: source)
        try handle.truncate(atOffset: UInt64(size))
        try handle.close()
        try await world.pasteboard().writeObjects([Clip(file: source)])

        let before = temporaryEntries(prefix: "pasteboard-")
        let progressed = Flag()
        let cancelling = Flag()
        let task = Task {
            try await world.pasteboard().loadTransferable(type: Clip.self) { _ in
                // The first report holds the transfer up until the cancel below has come (at
                // most 10 s), so that it comes while data is still to come: a fast machine, or a
                // test scheduled late, could otherwise see all of it read first. (Reports come
                // from the thread that reads, which is no task's: the test's flag tells.)
                if !progressed.isSet {
                    progressed.set()
                    let deadline = ContinuousClock.now + .seconds(10)
                    while !cancelling.isSet, ContinuousClock.now < deadline { usleep(1_000) }
                }
            }
        }
        // Wait for the stream to start, then cancel from outside.
        #expect(await eventually(timeout: .seconds(10)) { progressed.isSet }, "the load never reported progress")
        cancelling.set()
        task.cancel()
        let result = await task.result
        if case .success(let clip) = result {
            try? clip.map { try FileManager.default.removeItem(at: $0.file) }
            Issue.record("the load of \(size) bytes finished although it was cancelled")
        } else {
            #expect(throws: CancellationError.self) { try result.get() }
        }
        #expect(leftovers(since: before, extension: "mov") == [])
    }
}

// MARK: - Helpers

/// Entries the library may have left in the temporary directory since `before`: `pasteboard-*`
/// files with the extension, and `pasteboard-*` directories holding such files. Other tests run
/// at the same time and make files of their own, so only those a load of this type could make
/// count.
private func leftovers(since before: Set<String>, extension pathExtension: String) -> [String] {
    let temporary = FileManager.default.temporaryDirectory
    return temporaryEntries(prefix: "pasteboard-").subtracting(before).sorted().filter { name in
        guard !name.hasPrefix("pasteboard-tests-") else { return false }
        let url = temporary.appendingPathComponent(name)
        var isDirectory: ObjCBool = false
        guard FileManager.default.fileExists(atPath: url.path, isDirectory: &isDirectory) else { return false }
        if !isDirectory.boolValue { return url.pathExtension == pathExtension }
        let contents = (try? FileManager.default.contentsOfDirectory(atPath: url.path)) ?? []
        return contents.isEmpty || contents.contains { $0.hasSuffix("." + pathExtension) }
    }
}

/// Cancels a task from its own progress callback, which may run before the task is known.
private final class Canceller<Success: Sendable>: Sendable {
    private let state = Mutex<(task: Task<Success, any Error>?, wanted: Bool)>((nil, false))

    func set(_ task: Task<Success, any Error>) {
        let wanted = state.withLock { state in
            state.task = task
            return state.wanted
        }
        if wanted { task.cancel() }
    }

    func cancel() {
        let task = state.withLock { state in
            state.wanted = true
            return state.task
        }
        task?.cancel()
    }
}

/// A QuickTime movie on disk, moved by file.
private struct Clip: Transferable {
    var file: URL

    static var transferRepresentation: some TransferRepresentation {
        FileRepresentation(contentType: .quickTimeMovie) { clip in
            SentTransferredFile(clip.file)
        } importing: { received in
            Clip(file: received.file)
        }
    }
}
