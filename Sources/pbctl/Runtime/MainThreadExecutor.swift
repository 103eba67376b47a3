import DBus
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
/// job of the task as it is enqueued, and in between drives the bus connection (``drive(_:)``)
/// or sleeps.
///
/// ```swift
/// MainThreadExecutor.run {
///     await work()
///     exit(0)
/// }
/// ```
final class MainThreadExecutor: TaskExecutor {
    /// The executor of the main thread, made by ``run(_:)``.
    static let shared = MainThreadExecutor()

    /// The jobs to run, and the bus connection the main thread drives while it has none.
    private let state = Mutex<(jobs: [UnownedJob], bus: Connection?)>(([], nil))
    /// Wakes the main thread when it drives no connection.
    private let jobsWaiting = DispatchSemaphore(value: 0)
    private let mainThread = pthread_self()

    private init() {}

    func enqueue(_ job: consuming ExecutorJob) {
        let job = UnownedJob(job)
        let bus = state.withLock { state in
            state.jobs.append(job)
            return state.bus
        }
        // The main thread looks at the queue before it waits again.
        if pthread_equal(pthread_self(), mainThread) != 0 { return }
        if let bus { bus.wake() } else { jobsWaiting.signal() }
    }

    /// Lets the main thread drive `connection` (made with `drivenByCaller`) whenever it has no
    /// job to run: replies and signals are then read, and calls sent, on the main thread
    /// itself, with no thread of the connection's to start and no hop to it and back per call.
    func drive(_ connection: Connection) {
        // Made on another thread, the connection would not wake the main thread for that
        // thread's own submissions; a second one would strand the calls of the first.
        precondition(pthread_equal(pthread_self(), mainThread) != 0, "drive(_:) off the main thread")
        state.withLock { state in
            precondition(state.bus == nil, "the main thread already drives a connection")
            state.bus = connection
        }
    }

    /// Starts `body` as a task preferring the main thread and runs its jobs there until the
    /// process exits: `body` ends by calling `exit`.
    ///
    /// The task is started here, outside any actor: started on the main actor it would wait
    /// for the main actor's queue, which nothing drains.
    static func run(_ body: @escaping @Sendable () async -> Never) -> Never {
        let executor = shared
        Task(executorPreference: executor) {
            await body()
        }
        while true {
            let (job, bus) = executor.state.withLock { state in
                (state.jobs.isEmpty ? nil : state.jobs.removeFirst(), state.bus)
            }
            if let job {
                job.runSynchronously(on: executor.asUnownedTaskExecutor())
            } else if let bus {
                // A connection that has ended has nothing more to drive: from then on other
                // threads wake the main thread through the semaphore.
                if !bus.turn() { executor.state.withLock { $0.bus = nil } }
            } else {
                executor.jobsWaiting.wait()
            }
        }
    }
}
