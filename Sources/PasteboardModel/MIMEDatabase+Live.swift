import Foundation
import Synchronization

/// The database of this process's data directories, kept current.
extension MIMEDatabase {
    /// The database read from this user's data directories, loaded on first use.
    ///
    /// Looks in `$XDG_DATA_HOME` (default `~/.local/share`), then each of `$XDG_DATA_DIRS`
    /// (default `/usr/local/share:/usr/share`). Once ``followChanges(onReload:)`` has been
    /// called (the server does), a change of those directories' MIME databases (a type
    /// declared with `pbctl types declare`, a package installed) is read again on the next
    /// use: every later call sees it, with no restart.
    public static var shared: MIMEDatabase {
        LiveMIMEDatabase.instance.current()
    }

    /// Watches the data directories' MIME databases, so that ``shared`` follows them.
    ///
    /// A thread reads the database again soon after each change, so that the thread that next
    /// uses ``shared`` (the server's bus thread, say) does not have to. That use still checks
    /// for a change pending (one `read` of the inotify descriptor, which the kernel fills
    /// before the writer's call returns) and reads the database itself if one is, so a request
    /// made after `pbctl types declare` has returned always sees the declaration.
    ///
    /// The watch starts with the first read of the database. When the process may not have
    /// another inotify instance then, the folders' timestamps are compared on each use instead
    /// (a few `stat` calls), with the same guarantee, and no thread reads ahead.
    ///
    /// - Parameters:
    ///   - onReload: Told of each database read from now on, the first one and each after a
    ///     change (the server logs the problems of ``DeclaredTypes``); called on the thread
    ///     that read it, outside the database's lock.
    ///   - onTimestampsOnly: Told, once, that inotify was not available.
    public static func followChanges(
        onReload: (@Sendable (MIMEDatabase) -> Void)? = nil, onTimestampsOnly: (@Sendable () -> Void)? = nil
    ) {
        LiveMIMEDatabase.instance.follow(.init(onReload: onReload, onTimestampsOnly: onTimestampsOnly))
    }

    /// Forgets the database read so far: the next use of ``shared`` reads it again (after
    /// this process declared a type itself).
    public static func reload() {
        LiveMIMEDatabase.instance.invalidate()
    }
}

/// Holds the current database and the watch that says when it is out of date.
final class LiveMIMEDatabase: Sendable {
    static let instance = LiveMIMEDatabase()

    /// What ``MIMEDatabase/followChanges(onReload:onTimestampsOnly:)`` asked for.
    struct Following: Sendable {
        var onReload: (@Sendable (MIMEDatabase) -> Void)?
        var onTimestampsOnly: (@Sendable () -> Void)?
    }

    private struct State: ~Copyable {
        var database: MIMEDatabase?
        var monitor: (any MIMEChangeDetector)?
        var following: Following?
    }

    private let state = Mutex(State())

    func current() -> MIMEDatabase {
        let (database, loaded, following, fellBack) = state.withLock { state -> (MIMEDatabase, Bool, Following?, Bool) in
            let changed = state.monitor?.hasChanged() ?? false
            if let database = state.database, !changed {
                return (database, false, nil, false)
            }
            // The watch starts with the first read: a server that never matches types (most
            // of the tests' hundred at once) holds no inotify instance, of which each user
            // may have 128.
            var fellBack = false
            if state.following != nil, state.monitor == nil {
                let inotify = MIMEDirectoryMonitor()
                state.monitor = inotify ?? MIMEFolderTimestamps()
                if let inotify { startReading(after: inotify) } else { fellBack = true }
            }
            let directories = MIMEDatabase.searchDirectories(environment: ProcessInfo.processInfo.environment)
            // Watch before reading, so that a change made during the read is seen next time.
            state.monitor?.watch(directories)
            let database = MIMEDatabase(directories: directories)
            state.database = database
            return (database, true, state.following, fellBack)
        }
        if fellBack { following?.onTimestampsOnly?() }
        if loaded { following?.onReload?(database) }
        return database
    }

    func follow(_ following: Following) {
        state.withLock { state in
            state.following = following
            // Read again under the watch: nothing read before it started can be trusted.
            if state.monitor == nil { state.database = nil }
        }
    }

    /// Reads the database again after each change, off the threads that answer calls. The
    /// pause lets `update-mime-database` finish its burst of renames first, so one read does.
    private func startReading(after monitor: MIMEDirectoryMonitor) {
        let thread = Thread { [self] in
            while true {
                monitor.waitForEvents()
                Thread.sleep(forTimeInterval: 0.05)
                _ = current()
            }
        }
        thread.name = "MIME database"
        thread.start()
    }

    func invalidate() {
        state.withLock { $0.database = nil }
    }
}
