import Foundation

/// An exclusive lock on a state directory, held for the server's lifetime.
///
/// Two servers on one directory would hand out the same change counts and delete each other's
/// blob files as orphans; the second one is refused instead, whatever bus it is on. The lock is
/// taken on the directory's `lock` file (0600, which earlier servers lock too), and on the
/// directory itself when no other user may open it (the default state directory is 0700): a
/// lock on the file alone was lost with the file, deleted by hand, and a second server then
/// started beside the first. A directory others may read is not locked itself, as any of them
/// could hold a lock on it and keep the server from starting.
final class StateLock: Sendable {
    private let descriptors: [Int32]

    init(directory: String) throws {
        var targets = [(directory + "/lock", O_RDWR | O_CREAT | O_CLOEXEC)]
        var info = stat()
        if stat(directory, &info) == 0, info.st_mode & 0o044 == 0 { targets.insert((directory, O_RDONLY | O_DIRECTORY | O_CLOEXEC), at: 0) }
        var taken: [Int32] = []
        for (path, flags) in targets {
            let fd = open(path, flags, 0o600)
            guard fd >= 0 else {
                let reason = String(cString: strerror(errno))
                taken.forEach { close($0) }
                throw PasteboardStoreError("cannot open \(path): \(reason)")
            }
            taken.append(fd)
            guard flock(fd, LOCK_EX | LOCK_NB) == 0 else {
                let code = errno
                taken.forEach { close($0) }
                guard code == EWOULDBLOCK else { throw PasteboardStoreError("cannot lock \(path): \(String(cString: strerror(code)))") }
                throw PasteboardStoreError("another pasteboardd is using it")
            }
        }
        descriptors = taken
    }

    deinit {
        descriptors.forEach { close($0) }
    }
}
