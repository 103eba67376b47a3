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
    /// - Parameter onReload: Told of each database read from now on, the first one and each
    ///   after a change (the server logs the problems of ``DeclaredTypes``); called on the
    ///   thread that used ``shared``, outside the database's lock.
    /// - Returns: Whether inotify watches the folders; when the process may not have another
    ///   inotify instance, their timestamps are compared on each use instead (a few `stat`
    ///   calls), with the same guarantee.
    @discardableResult
    public static func followChanges(onReload: (@Sendable (MIMEDatabase) -> Void)? = nil) -> Bool {
        LiveMIMEDatabase.instance.follow(onReload: onReload)
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

    private struct State: ~Copyable {
        var database: MIMEDatabase?
        var monitor: (any MIMEChangeDetector)?
        var onReload: (@Sendable (MIMEDatabase) -> Void)?
    }

    private let state = Mutex(State())

    func current() -> MIMEDatabase {
        let (database, loaded, onReload) = state.withLock { state -> (MIMEDatabase, Bool, (@Sendable (MIMEDatabase) -> Void)?) in
            let changed = state.monitor?.hasChanged() ?? false
            if let database = state.database, !changed {
                return (database, false, nil)
            }
            let directories = MIMEDatabase.searchDirectories(environment: ProcessInfo.processInfo.environment)
            // Watch before reading, so that a change made during the read is seen next time.
            state.monitor?.watch(directories)
            let database = MIMEDatabase(directories: directories)
            state.database = database
            return (database, true, state.onReload)
        }
        if loaded { onReload?(database) }
        return database
    }

    func follow(onReload: (@Sendable (MIMEDatabase) -> Void)?) -> Bool {
        state.withLock { state in
            state.onReload = onReload
            if let monitor = state.monitor { return monitor is MIMEDirectoryMonitor }
            let inotify = MIMEDirectoryMonitor()
            state.monitor = inotify ?? MIMEFolderTimestamps()
            // Read again under the watch: nothing read before it started can be trusted.
            state.database = nil
            if let inotify { startReading(after: inotify) }
            return inotify != nil
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
