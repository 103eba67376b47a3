#if canImport(Glibc)
import Glibc
#endif

/// Tells whether the MIME databases of some data directories changed since it last said.
protocol MIMEChangeDetector: AnyObject, Sendable {
    /// Watches the MIME folders of `directories` (again: the set of folders may have changed).
    func watch(_ directories: [String])
    /// Whether a relevant change happened since the last call.
    func hasChanged() -> Bool
}

#if canImport(Glibc)
/// Tells whether the MIME databases of some data directories changed, through inotify.
///
/// Watches `DIR/mime` (where `update-mime-database` renames `subclasses`, `aliases` and the
/// rest into place) and `DIR/mime/packages` (the declarations). A directory that does not
/// exist yet is watched through its nearest existing ancestor, for the creation of the next
/// folder on the way, so that the first `pbctl types declare` of a user is seen too.
///
/// `@unchecked Sendable`: used only under ``LiveMIMEDatabase``'s lock.
final class MIMEDirectoryMonitor: MIMEChangeDetector, @unchecked Sendable {
    private let descriptor: Int32
    /// The watches of MIME folders themselves: every event of theirs matters.
    private var foldersWatched: Set<Int32> = []
    /// The watches of ancestors, with the names whose events matter (the next folder
    /// towards `mime`).
    private var awaitedNames: [Int32: Set<String>] = [:]

    /// Fails when the process may not have another inotify instance (each user may have
    /// `fs.inotify.max_user_instances`, 128 by default, in all).
    init?() {
        descriptor = inotify_init1(Int32(O_NONBLOCK | O_CLOEXEC))
        guard descriptor >= 0 else { return nil }
    }

    deinit {
        close(descriptor)
    }

    /// Waits until a change may be pending (the descriptor is readable); reads nothing.
    func waitForEvents() {
        var entry = pollfd(fd: descriptor, events: Int16(POLLIN), revents: 0)
        while poll(&entry, 1, -1) < 0, errno == EINTR {}
    }

    /// Watches the MIME folders of `directories` (again: folders created since are added, and
    /// an ancestor watched only until its folder existed is let go, so that its other events,
    /// in a busy `~/.local/share`, cost nothing).
    func watch(_ directories: [String]) {
        let mask = UInt32(IN_CREATE | IN_DELETE | IN_MODIFY | IN_CLOSE_WRITE | IN_MOVED_TO | IN_MOVED_FROM | IN_DELETE_SELF | IN_MOVE_SELF)
        let previous = foldersWatched.union(awaitedNames.keys)
        foldersWatched = []
        awaitedNames = [:]
        defer {
            for watch in previous.subtracting(foldersWatched.union(awaitedNames.keys)) {
                inotify_rm_watch(descriptor, watch)
            }
        }
        for directory in directories {
            for folder in [directory + "/mime", directory + "/mime/packages"] {
                var path = folder
                var next: String? = nil
                // Up to the nearest folder that exists, remembering which child to wait for.
                while !Self.isDirectory(path), let slash = path.lastIndex(of: "/"), slash > path.startIndex {
                    next = String(path[path.index(after: slash)...])
                    path = String(path[..<slash])
                }
                guard Self.isDirectory(path) else { continue }
                let watch = inotify_add_watch(descriptor, path, mask)
                guard watch >= 0 else { continue }
                if let next {
                    awaitedNames[watch, default: []].insert(next)
                } else {
                    foldersWatched.insert(watch)
                }
            }
        }
    }

    /// Whether a relevant change happened since the last call; reads every pending event.
    func hasChanged() -> Bool {
        var changed = false
        var buffer = [UInt8](repeating: 0, count: 4096)
        while true {
            let count = buffer.withUnsafeMutableBytes { read(descriptor, $0.baseAddress, $0.count) }
            guard count > 0 else { break }
            var offset = 0
            while offset + 16 <= count {
                let (watch, length, name) = buffer.withUnsafeBytes { bytes -> (Int32, Int, String) in
                    let watch = bytes.loadUnaligned(fromByteOffset: offset, as: Int32.self)
                    let length = Int(bytes.loadUnaligned(fromByteOffset: offset + 12, as: UInt32.self))
                    let nameBytes = bytes[(offset + 16)..<min(offset + 16 + length, count)].prefix { $0 != 0 }
                    return (watch, length, String(decoding: nameBytes, as: UTF8.self))
                }
                // A MIME folder's event (its own removal included), or the next folder towards
                // one appearing; a watch let go reports nothing that matters.
                if foldersWatched.contains(watch) || awaitedNames[watch]?.contains(name) == true {
                    changed = true
                }
                offset += 16 + length
            }
        }
        return changed
    }

    private static func isDirectory(_ path: String) -> Bool {
        var information = stat()
        return stat(path, &information) == 0 && (information.st_mode & S_IFMT) == S_IFDIR
    }
}

/// Tells whether the MIME folders changed by their timestamps: the stand-in when inotify is not
/// available. `update-mime-database` renames its files into `DIR/mime` and a declaration is
/// written into `DIR/mime/packages`, and either changes that folder's modification time (to
/// the nanosecond); a folder that appears or goes counts too. A few `stat` calls per check.
///
/// `@unchecked Sendable`: used only under ``LiveMIMEDatabase``'s lock.
final class MIMEFolderTimestamps: MIMEChangeDetector, @unchecked Sendable {
    private var folders: [String] = []
    private var seen: [[Int]] = []

    func watch(_ directories: [String]) {
        folders = directories.flatMap { [$0 + "/mime", $0 + "/mime/packages"] }
        seen = folders.map(Self.stamp)
    }

    func hasChanged() -> Bool {
        let now = folders.map(Self.stamp)
        defer { seen = now }
        return now != seen
    }

    /// The folder's inode and modification time; empty when it does not exist.
    private static func stamp(_ path: String) -> [Int] {
        var information = stat()
        guard stat(path, &information) == 0 else { return [] }
        return [Int(information.st_ino), information.st_mtim.tv_sec, information.st_mtim.tv_nsec]
    }
}
#else
/// Without inotify, changes are not followed.
final class MIMEDirectoryMonitor: MIMEChangeDetector, Sendable {
    init?() { return nil }
    func watch(_ directories: [String]) {}
    func hasChanged() -> Bool { false }
}

/// Without the system's stat, neither.
final class MIMEFolderTimestamps: MIMEChangeDetector, Sendable {
    func watch(_ directories: [String]) {}
    func hasChanged() -> Bool { false }
}
#endif
