import Foundation
@testable import PasteboardServer
import Testing
import TestSupport

/// ``CallerProcess``: a dying process is told from a live one by `/proc`, whatever the bus says.
struct CallerProcessTests {
    @Test func aLiveProcessIsNotEnding() throws {
        #expect(!CallerProcess.isEnding(UInt32(getpid())))
        let sleeper = try ChildProcess("/bin/sleep", ["30"])
        defer { sleeper.kill() }
        #expect(!CallerProcess.isEnding(UInt32(sleeper.pid)))
    }

    /// A process that has ended and is not yet reaped (as a killed client is, between its death
    /// and its parent's wait) is ending.
    @Test func aProcessThatEndedIsEnding() async throws {
        let pid = try spawnDetached("/bin/sh", ["-c", "exit 3"])
        defer { _ = reap(pid) }
        // Not reaped: the zombie stays until the deferred wait.
        let ended = await eventually(timeout: .seconds(10)) { Self.state(of: pid) == "Z" }
        #expect(ended)
        #expect(CallerProcess.isEnding(UInt32(pid)))
    }

    /// One the server cannot see (gone and reaped, or in another PID namespace) is left to the
    /// bus's answer.
    @Test func anUnknownProcessIsNotEnding() {
        #expect(!CallerProcess.isEnding(0))
        #expect(!CallerProcess.isEnding(UInt32(Int32.max)))
    }

    /// The state letter of `/proc/PID/stat`.
    static func state(of pid: pid_t) -> Character? {
        guard let stat = try? String(contentsOfFile: "/proc/\(pid)/stat", encoding: .utf8), let close = stat.lastIndex(of: ")") else { return nil }
        return stat[stat.index(close, offsetBy: 2)...].first
    }
}
