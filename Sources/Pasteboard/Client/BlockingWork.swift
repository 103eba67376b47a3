import DBus
import Dispatch

/// Work that holds a thread for as long as it takes (a large stream read to its end, into
/// memory or a file), run on a dispatch queue's thread rather than on the cooperative pool of
/// Swift's tasks. That pool has only as many threads as the machine has cores: a gigabyte read
/// on one of them holds up every other task of the app for as long.
enum BlockingWork {
    /// Runs `work` on a global dispatch queue and returns what it returns, or throws what it
    /// throws. Cancelling the calling task makes `isCancelled` true for `work`, which asks it
    /// between its steps (a thread of dispatch's has no task to ask).
    static func run<Value: Sendable>(
        _ work: @escaping @Sendable (_ isCancelled: @Sendable () -> Bool) throws -> Value
    ) async throws -> Value {
        let cancelled = CancellationFlag()
        return try await withTaskCancellationHandler {
            try await withCheckedThrowingContinuation { continuation in
                DispatchQueue.global().async {
                    continuation.resume(with: Result { try work { cancelled.isSet } })
                }
            }
        } onCancel: {
            cancelled.set()
        }
    }
}
