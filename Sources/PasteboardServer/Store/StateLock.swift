import Foundation

/// An exclusive lock on a state directory, held for the server's lifetime.
///
/// Two servers on one directory would hand out the same change counts and delete each other's
/// blob files as orphans; the second one is refused instead, whatever bus it is on. The lock is
/// taken on the directory itself, which cannot be deleted while it holds the store, and on its
/// `lock` file, which earlier servers lock: a lock on the file alone was lost with the file
/// (deleted by hand, or by another user of a directory open to others), and a second server
/// then started beside the first.
final class StateLock: Sendable {
    private let descriptors: [Int32]

    init(directory: String) throws {
        var taken: [Int32] = []
        for (path, flags) in [(directory, O_RDONLY | O_DIRECTORY | O_CLOEXEC), (directory + "/lock", O_RDWR | O_CREAT | O_CLOEXEC)] {
            let fd = open(path, flags, 0o600)
            guard fd >= 0 else {
                let reason = String(cString: strerror(errno))
                taken.forEach { close($0) }
                throw PasteboardStoreError("cannot open \(path): \(reason)")
            }
            taken.append(fd)
            guard flock(fd, LOCK_EX | LOCK_NB) == 0 else {
                taken.forEach { close($0) }
                throw PasteboardStoreError("another pasteboardd is using it")
            }
        }
        descriptors = taken
    }

    deinit {
        descriptors.forEach { close($0) }
    }
}
