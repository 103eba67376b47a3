import Synchronization

/// Runs async operations one at a time, in the order they come: the writes of one
/// ``Pasteboard`` object, whose ``WriteSession`` each reads, then updates once its write is
/// answered. Two at once (a `Pasteboard` is `Sendable`, and `.general` is the whole process's)
/// would both add to the same change, and one would undo the other.
final class AsyncSerialGate: Sendable {
    private let state = Mutex<(busy: Bool, waiting: [CheckedContinuation<Void, Never>])>((false, []))

    /// Runs `body` once every operation that came before has ended.
    func run<T>(_ body: () async throws -> T) async throws -> T {
        await enter()
        defer { leave() }
        return try await body()
    }

    private func enter() async {
        await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
            let now = state.withLock { state in
                guard state.busy else {
                    state.busy = true
                    return true
                }
                state.waiting.append(continuation)
                return false
            }
            if now { continuation.resume() }
        }
    }

    /// Hands the gate to the next waiting operation, or opens it.
    private func leave() {
        let next = state.withLock { state -> CheckedContinuation<Void, Never>? in
            guard !state.waiting.isEmpty else {
                state.busy = false
                return nil
            }
            return state.waiting.removeFirst()
        }
        next?.resume()
    }
}
