import Dispatch
import Synchronization

#if canImport(Glibc)
import Glibc
#endif

/// Runs pbctl's one task on the main thread, which it keeps: no thread pool is started and the
/// main thread never exits.
///
/// Why not an `async` `main`: the Swift runtime then parks the main thread with libdispatch's
/// `dispatch_main`, which calls `pthread_exit`, and in a statically linked program glibc
/// `dlopen`s libgcc_s to unwind it: 10 to 20 ms, several times all the rest of a `pbctl
/// paste`. And the global executor starts pool threads and hops between them, which cost
/// about 0.8 ms of a `pbctl paste` on a busy two-core machine. Here the main thread runs each
/// job of the task as it is enqueued, from the bus's event-loop thread or anywhere else, and
/// sleeps in between.
///
/// ```swift
/// MainThreadExecutor.run {
///     await work()
///     exit(0)
/// }
/// ```
final class MainThreadExecutor: TaskExecutor {
    private let queue = Mutex<[UnownedJob]>([])
    private let jobsWaiting = DispatchSemaphore(value: 0)

    private init() {}

    func enqueue(_ job: consuming ExecutorJob) {
        let job = UnownedJob(job)
        queue.withLock { $0.append(job) }
        jobsWaiting.signal()
    }

    /// Starts `body` as a task preferring the main thread and runs its jobs there until the
    /// process exits: `body` ends by calling `exit`.
    ///
    /// The task is started here, outside any actor: started on the main actor it would wait
    /// for the main actor's queue, which nothing drains.
    static func run(_ body: @escaping @Sendable () async -> Never) -> Never {
        let executor = MainThreadExecutor()
        Task(executorPreference: executor) {
            await body()
        }
        while true {
            executor.jobsWaiting.wait()
            let job = executor.queue.withLock { $0.isEmpty ? nil : $0.removeFirst() }
            job?.runSynchronously(on: executor.asUnownedTaskExecutor())
        }
    }
}
