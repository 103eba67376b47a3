@testable import PasteboardServer
import Testing

/// Work retried every second is logged at its first failure, at a failure of another kind,
/// and ever more rarely while it fails the same way.
struct RetryReportTests {
    @Test func theSameFailureIsLoggedEverMoreRarely() {
        var report = RetryReport()
        let logged = (1...1_800).filter { _ in report.failed("disk I/O error") }
        #expect(logged == [1, 10, 60, 600, 1_200, 1_800])
        #expect(report.repeats == " (1800 failures in a row)")
    }

    @Test func aFailureOfAnotherKindIsLoggedAtOnce() {
        var report = RetryReport()
        var logged: [Bool] = []
        for description in ["database is locked", "database is locked", "disk I/O error", "disk I/O error", "database is locked"] {
            logged.append(report.failed(description))
        }
        #expect(logged == [true, false, true, false, true])
        #expect(report.failures == 5)
    }

    @Test func aSuccessEndsTheRunAndTheNextFailureIsLoggedAgain() {
        var report = RetryReport()
        let none = report.succeeded()
        #expect(none == 0)
        #expect(report.repeats == "")
        _ = report.failed("gone")
        _ = report.failed("gone")
        let two = report.succeeded()
        #expect(two == 2)
        #expect(report.failures == 0)
        let loggedAgain = report.failed("gone")
        #expect(loggedAgain)
        #expect(report.repeats == "")
    }
}
