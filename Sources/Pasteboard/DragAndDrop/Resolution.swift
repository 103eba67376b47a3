import Synchronization

/// A value that arrives once, awaited by any number of tasks, each of which can stop waiting
/// when it is cancelled (unlike `Task.value`, which waits on regardless): how callers wait for
/// a ``DragSession``'s outcome.
final class Resolution<Value: Sendable>: Sendable {
    private struct State {
        var value: Value?
        var waiters: [UInt64: CheckedContinuation<Value, any Error>] = [:]
        var nextWaiter: UInt64 = 0
    }

    private let state = Mutex(State())

    /// Sets the value, once; later calls do nothing. Every waiter gets it.
    func resolve(_ value: Value) {
        let waiters = state.withLock { state -> [CheckedContinuation<Value, any Error>] in
            guard state.value == nil else { return [] }
            state.value = value
            defer { state.waiters = [:] }
            return Array(state.waiters.values)
        }
        for waiter in waiters { waiter.resume(returning: value) }
    }

    /// The value, waiting for it if need be.
    ///
    /// - Throws: `CancellationError` when the waiting task is cancelled first.
    var value: Value {
        get async throws {
            let id = state.withLock { state in
                state.nextWaiter += 1
                return state.nextWaiter
            }
            return try await withTaskCancellationHandler {
                try await withCheckedThrowingContinuation { continuation in
                    let ready: Result<Value, any Error>? = state.withLock { state in
                        if let value = state.value { return .success(value) }
                        if Task.isCancelled { return .failure(CancellationError()) }
                        state.waiters[id] = continuation
                        return nil
                    }
                    if let ready { continuation.resume(with: ready) }
                }
            } onCancel: {
                let waiter = state.withLock { $0.waiters.removeValue(forKey: id) }
                waiter?.resume(throwing: CancellationError())
            }
        }
    }
}
