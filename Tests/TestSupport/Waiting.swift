import Synchronization

/// Polls `condition` every `interval` until it holds or `timeout` passes; returns whether it
/// held. It runs on the caller's actor, so a `@MainActor` test can poll main-actor state.
///
/// The default timeout is long (20 s): a condition that holds returns as soon as it does, and
/// the whole suite on two busy cores has been seen to take over 5 s for a signal and a call
/// (a Paste button's state, while the desktop and PostgreSQL suites ran). No test waits for a
/// condition not to hold this way.
public func eventually(
    isolation: isolated (any Actor)? = #isolation,
    timeout: Duration = .seconds(20), every interval: Duration = .milliseconds(10),
    _ condition: () async throws -> Bool
) async rethrows -> Bool {
    let deadline = ContinuousClock.now + timeout
    while true {
        if try await condition() { return true }
        guard ContinuousClock.now < deadline else { return false }
        try? await Task.sleep(for: interval)
    }
}

/// A flag set once, from any task, and read from any other.
public final class Flag: Sendable {
    private let value = Atomic<Bool>(false)

    public init() {}

    public var isSet: Bool { value.load(ordering: .sequentiallyConsistent) }

    public func set() { value.store(true, ordering: .sequentiallyConsistent) }
}
