import Dispatch
import Synchronization

/// Runs `operation` as a task to its end while the calling thread waits: for the threads that
/// must have an answer of the bus or of the database before they go on (the service queue, a
/// transfer's thread). Never from the bus's thread, which delivers the bus's answers, nor from
/// one of the tasks' pool, which `operation` may need. Nil when `deadline` passed first (the
/// task runs on, its outcome dropped).
func waitForTask<Value: Sendable, Failure: Error>(
    within deadline: DispatchTimeInterval?, _ operation: @escaping @Sendable () async throws(Failure) -> Value
) throws(Failure) -> Value? {
    let outcome = Mutex<Result<Value, Failure>?>(nil)
    let done = DispatchSemaphore(value: 0)
    Task {
        do throws(Failure) {
            let value = try await operation()
            outcome.withLock { $0 = .success(value) }
        } catch {
            outcome.withLock { $0 = .failure(error) }
        }
        done.signal()
    }
    if let deadline {
        guard done.wait(timeout: .now() + deadline) == .success else { return nil }
    } else {
        done.wait()
    }
    return try outcome.withLock { $0! }.get()
}

/// ``waitForTask(within:_:)`` with no deadline, for an operation that cannot fail.
func waitForTask<Value: Sendable>(_ operation: @escaping @Sendable () async -> Value) -> Value {
    waitForTask(within: nil, operation)!
}
