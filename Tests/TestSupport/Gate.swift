import Synchronization

/// An asynchronous counting semaphore.
///
/// ```swift
/// private static let gate = Gate(width: 8)
/// private let pass: Gate.Pass      // inside for as long as the value lives
///
/// init() async throws {
///     pass = await Self.gate.pass()
///     // ... what may throw: the pass is released with the half-made value
/// }
/// ```
public final class Gate: Sendable {
    private let state: Mutex<(free: Int, waiting: [CheckedContinuation<Void, Never>])>

    public init(width: Int) {
        state = Mutex((width, []))
    }

    /// Waits until fewer than `width` callers are inside.
    func enter() async {
        await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
            let admitted = state.withLock { state in
                guard state.free > 0 else {
                    state.waiting.append(continuation)
                    return false
                }
                state.free -= 1
                return true
            }
            if admitted { continuation.resume() }
        }
    }

    /// Lets the next waiting caller in.
    func leave() {
        let next = state.withLock { state in
            guard !state.waiting.isEmpty else {
                state.free += 1
                return nil as CheckedContinuation<Void, Never>?
            }
            return state.waiting.removeFirst()
        }
        next?.resume()
    }

    /// Waits until fewer than `width` callers are inside, and returns a pass that leaves when
    /// it is released.
    public func pass() async -> Pass {
        await enter()
        return Pass(self)
    }

    /// Being inside a ``Gate``, until released.
    public final class Pass: Sendable {
        private let gate: Gate

        fileprivate init(_ gate: Gate) {
            self.gate = gate
        }

        deinit {
            gate.leave()
        }
    }
}
