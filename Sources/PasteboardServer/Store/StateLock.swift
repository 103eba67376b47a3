import Foundation

/// An exclusive lock on a state directory, held for the server's lifetime.
///
/// Two servers on one directory would delete each other's blob files as orphans; the second
/// one is refused instead, whatever bus it is on.
final class StateLock: Sendable {
    private let fd: Int32

    init(directory: String) throws {
        let path = directory + "/lock"
        fd = open(path, O_RDWR | O_CREAT | O_CLOEXEC, 0o600)
        guard fd >= 0 else { throw PasteboardStoreError("cannot open \(path): \(String(cString: strerror(errno)))") }
        guard flock(fd, LOCK_EX | LOCK_NB) == 0 else {
            close(fd)
            throw PasteboardStoreError("another pasteboardd is using it")
        }
    }

    deinit {
        close(fd)
    }
}
