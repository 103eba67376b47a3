import Synchronization

/// Whether a task was cancelled, for work that runs where the task cannot be asked: set by a
/// cancellation handler, read by a call starting on a connection's loop, or between the steps
/// of blocking work on another thread. A cancel may come before the work has started anywhere
/// it could be cancelled, and the flag is how the work learns of it then.
package final class CancellationFlag: Sendable {
    private let flag = Atomic<Bool>(false)

    package init() {}

    package var isSet: Bool { flag.load(ordering: .acquiring) }

    package func set() {
        flag.store(true, ordering: .releasing)
    }
}
