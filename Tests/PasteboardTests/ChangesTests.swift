import Foundation
import Testing
import TestSupport

@testable import Pasteboard

/// `Pasteboard.changes`: the server's `Changed` signals as an `AsyncSequence`, across processes
/// and server restarts.
@Suite("Changes")
struct ChangesTests {
    @Test("changes yields name, count and types for writes made by another process")
    func changesFromAnotherProcess() async throws {
        let world = try await World()
        let pasteboard = world.pasteboard()
        let recorder = ChangeRecorder(pasteboard.changes)
        defer { recorder.task.cancel() }
        let start = try await recorder.waitUntilSubscribed(by: pasteboard)

        expectSuccess(try await world.pbctl("copy", input: "from pbctl"))
        let copied = try #require(await recorder.first { $0.changeCount == start + 1 })
        #expect(copied == PasteboardChange(name: .general, changeCount: start + 1, types: [.utf8PlainText]))
        #expect(!copied.mayHaveMissedChanges)

        expectSuccess(try await world.pbctl("copy", "-t", "image/png", "-t", "com.example.tests.changes.raw", input: Data([0x89, 0x50])))
        let image = try #require(await recorder.first { $0.changeCount == start + 2 })
        #expect(image.types == [.png, UTType.types(for: "com.example.tests.changes.raw")])

        expectSuccess(try await world.pbctl("clear"))
        let cleared = try #require(await recorder.first { $0.changeCount == start + 3 })
        #expect(cleared.types == [])

        // Each change once, in order.
        let counts = recorder.changes.all.map(\.changeCount).filter { $0 > start }
        #expect(counts == [start + 1, start + 2, start + 3])
        #expect(try await pasteboard.changeCount == start + 3)
    }

    @Test("a pasteboard's changes leave out other pasteboards; allChanges has them all")
    func filtering() async throws {
        let world = try await World()
        let general = world.pasteboard(.general)
        let mine = ChangeRecorder(general.changes)
        let all = ChangeRecorder(Pasteboard.allChanges(address: world.address))
        defer {
            mine.task.cancel()
            all.task.cancel()
        }
        let start = try await mine.waitUntilSubscribed(by: general)
        _ = try await all.waitUntilSubscribed(by: general)

        expectSuccess(try await world.pbctl("-p", "find", "copy", input: "needle"))
        expectSuccess(try await world.pbctl("copy", input: "hay"))
        let onFind = try #require(await all.first { $0.name == .find })
        #expect(onFind.changeCount == 1)
        #expect(onFind.types == [.utf8PlainText])
        #expect(await all.first { $0.name == .general && $0.changeCount == start + 1 } != nil)
        #expect(await mine.first { $0.changeCount == start + 1 } != nil)
        #expect(mine.changes.all.allSatisfy { $0.name == .general })
    }

    @Test("a concealed write and a removal carry no types")
    func noTypes() async throws {
        let world = try await World()
        let pasteboard = try await Pasteboard.withUniqueName(address: world.address)
        let recorder = ChangeRecorder(pasteboard.changes)
        defer { recorder.task.cancel() }
        let start = try await recorder.waitUntilSubscribed(by: pasteboard)

        expectSuccess(try await world.pbctl("-p", pasteboard.name.rawValue, "copy", "--concealed", input: "hunter2"))
        let concealed = try #require(await recorder.first { $0.changeCount == start + 1 })
        #expect(concealed.types == [])
        // The data is there all the same.
        #expect(try await pasteboard.string() == "hunter2")

        try await pasteboard.releaseGlobally()
        let removed = try #require(await recorder.first { $0.changeCount == start + 2 })
        #expect(removed.types == [])
        #expect(removed.name == pasteboard.name)
    }

    @Test("the sequence ends cleanly when the consuming task is cancelled")
    func endsOnCancel() async throws {
        let world = try await World()
        let pasteboard = world.pasteboard()
        let recorder = ChangeRecorder(pasteboard.changes)
        _ = try await recorder.waitUntilSubscribed(by: pasteboard)
        #expect(!recorder.hasFinished)

        recorder.task.cancel()
        #expect(await eventually { recorder.hasFinished })
        let seen = recorder.changes.all.count
        try await pasteboard.setString("after the end")
        try await Task.sleep(for: .milliseconds(100))
        #expect(recorder.changes.all.count == seen)

        // A sequence with no server yet also ends when cancelled.
        let empty = try await TestBus()
        let waiting = ChangeRecorder(Pasteboard(name: .general, address: empty.address).changes)
        try await Task.sleep(for: .milliseconds(100))
        waiting.task.cancel()
        #expect(await eventually { waiting.hasFinished })
    }

    @Test("after the server restarts, the sequence reports the current state as possibly missed")
    func serverRestart() async throws {
        let world = try await World()
        let server = try #require(world.server)
        let pasteboard = world.pasteboard()
        let recorder = ChangeRecorder(pasteboard.changes)
        defer { recorder.task.cancel() }
        _ = try await recorder.waitUntilSubscribed(by: pasteboard)
        expectSuccess(try await world.pbctl("copy", "-t", "text/html", input: "<p>before</p>"))
        let count = try await pasteboard.changeCount

        try await server.restart()
        let report = try #require(await recorder.first { $0.mayHaveMissedChanges })
        #expect(report.name == .general)
        #expect(report.changeCount == count)
        #expect(report.types == [.html])

        // And it goes on with the new server.
        expectSuccess(try await world.pbctl("copy", input: "after"))
        let after = try #require(await recorder.first { $0.changeCount == count + 1 })
        #expect(!after.mayHaveMissedChanges)
        #expect(after.types == [.utf8PlainText])
    }

    @Test("after a crash and restart, the sequence reports the current state as possibly missed")
    func serverCrash() async throws {
        let world = try await World()
        let server = try #require(world.server)
        let pasteboard = world.pasteboard()
        let recorder = ChangeRecorder(pasteboard.changes)
        defer { recorder.task.cancel() }
        _ = try await recorder.waitUntilSubscribed(by: pasteboard)
        let count = try await pasteboard.changeCount

        server.kill9()
        // Nothing is reported while the server is away.
        try await Task.sleep(for: .milliseconds(100))
        #expect(!recorder.changes.all.contains { $0.mayHaveMissedChanges })

        try await server.restart()
        let report = try #require(await recorder.first { $0.mayHaveMissedChanges })
        #expect(report.changeCount == count, "durable: the count survived the crash")
        #expect(report.types == [.utf8PlainText])

        try await pasteboard.clearContents()
        #expect(await recorder.first { $0.changeCount == count + 1 && $0.types == [] } != nil)
    }

    @Test("two consumers each see every change")
    func twoConsumers() async throws {
        let world = try await World()
        let pasteboard = world.pasteboard()
        let first = ChangeRecorder(pasteboard.changes)
        let second = ChangeRecorder(world.pasteboard().changes)
        defer {
            first.task.cancel()
            second.task.cancel()
        }
        _ = try await first.waitUntilSubscribed(by: pasteboard)
        let start = try await second.waitUntilSubscribed(by: pasteboard)
        expectSuccess(try await world.pbctl("copy", input: "shared"))
        #expect(await first.first { $0.changeCount == start + 1 } != nil)
        #expect(await second.first { $0.changeCount == start + 1 } != nil)
    }
}
