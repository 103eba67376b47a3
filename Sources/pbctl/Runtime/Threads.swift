#if canImport(Glibc)
import Glibc
#endif

/// Blocking work (feeding a pipe, waiting for a child) on a thread of its own, so that it
/// never holds up the main thread, which runs everything else (see ``MainThreadExecutor``).
enum Threads {
    /// Runs `body` on a new detached thread.
    ///
    /// - Throws: a ``Failure`` when no thread can be created (a process or memory limit).
    static func detach(_ body: @escaping @Sendable () -> Void) throws(Failure) {
        let box = Unmanaged.passRetained(Box(body)).toOpaque()
        var thread = pthread_t()
        let result = pthread_create(&thread, nil, { context in
            Unmanaged<Box>.fromOpaque(context!).takeRetainedValue().body()
            return nil
        }, box)
        guard result == 0 else {
            Unmanaged<Box>.fromOpaque(box).release()
            throw Failure(message: "cannot start a thread: \(String(cString: strerror(result)))", status: .unavailable)
        }
        pthread_detach(thread)
    }

    private final class Box: Sendable {
        let body: @Sendable () -> Void

        init(_ body: @escaping @Sendable () -> Void) {
            self.body = body
        }
    }
}
