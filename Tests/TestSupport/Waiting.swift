import Synchronization

/// Polls `condition` every `interval` until it holds or `timeout` passes; returns whether it
/// held. It runs on the caller's actor, so a `@MainActor` test can poll main-actor state.
public func eventually(
    isolation: isolated (any Actor)? = #isolation,
    timeout: Duration = .seconds(5), every interval: Duration = .milliseconds(10),
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
