import CDBus
import Dispatch
import Synchronization

#if canImport(Glibc)
import Glibc
#endif

/// The last large blob file let go of, kept for a while so that the next large write can
/// overwrite it instead of starting a new file.
///
/// Writing a new file needs as much fresh page cache as it has data, which the kernel has to
/// find (a virtual machine that handed freed memory back to its host fills it at a fraction of
/// memory speed: 300–700 MiB/s here, against 3.5 GB/s into pages already cached). A file just
/// let go of still has its pages cached and its blocks allocated: overwriting it costs a copy.
///
/// A blob file is never changed while someone can read it: a reader may still hold a
/// descriptor from `ReadFd`. So a spare is taken only if the kernel grants a write lease on
/// it, which it does only when no other open file refers to the file; otherwise it is deleted
/// (the reader keeps its copy) and the write starts a new file as usual.
///
/// One spare at most, renamed `spare-…` so that no row refers to it: deleted when a newer one
/// replaces it, after ``idleSeconds`` unused, at shutdown, or (after a crash) at the next start
/// with the other files no row names.
final class SpareBlobFile: Sendable {
    /// Smaller files are deleted: reusing them saves little.
    static let minimumSize: UInt64 = 1 << 20
    static let idleSeconds = 30

    private let directory: String
    private let spare = Mutex<(path: String, generation: UInt64)?>(nil)
    private let generations = Atomic<UInt64>(0)

    init(directory: String) {
        self.directory = directory
    }

    /// Takes the file at `path`, which nothing refers to any more: kept as the spare if large
    /// enough, else deleted.
    func offer(_ path: String, size: UInt64) {
        let sparePath = directory + "/spare-" + Store.randomID()
        // A stored file is read-only (``BlobFile/finish(size:)``); the spare is to be written.
        // Made writable before it takes the spare's name, so that a spare is never seen
        // read-only (nothing refers to the file by its old name any more).
        guard size >= Self.minimumSize, chmod(path, 0o600) == 0, rename(path, sparePath) == 0 else {
            unlink(path)
            return
        }
        let generation = generations.add(1, ordering: .relaxed).newValue
        let replaced = spare.withLock { spare in
            defer { spare = (sparePath, generation) }
            return spare?.path
        }
        if let replaced { Self.delete(replaced) }
        DispatchQueue.global(qos: .utility).asyncAfter(deadline: .now() + .seconds(Self.idleSeconds)) { [self] in
            let idle = spare.withLock { spare -> String? in
                guard let current = spare, current.generation == generation else { return nil }
                spare = nil
                return current.path
            }
            if let idle { unlink(idle) }
        }
    }

    /// The spare, open for writing from its start; nil when there is none, or when someone
    /// still has it open (it is deleted then).
    func take() -> (path: String, fd: Int32)? {
        guard let path = spare.withLock({ spare in
            defer { spare = nil }
            return spare?.path
        }) else { return nil }
        let fd = open(path, O_WRONLY | O_CLOEXEC)
        guard fd >= 0 else {
            Self.delete(path)
            return nil
        }
        // Granted only while no other open file refers to it: no reader is left.
        if cdbus_fcntl_int(fd, cdbus_F_SETLEASE, Int32(F_WRLCK)) == 0 {
            _ = cdbus_fcntl_int(fd, cdbus_F_SETLEASE, Int32(F_UNLCK))
            return (path, fd)
        }
        close(fd)
        Self.delete(path)
        return nil
    }

    /// Deletes a large file off the calling thread, which may be the service queue: freeing a
    /// gigabyte's blocks takes a while.
    static func delete(_ path: String) {
        DispatchQueue.global(qos: .utility).async { unlink(path) }
    }

    /// Deletes the spare (at shutdown).
    func discard() {
        if let path = spare.withLock({ spare in
            defer { spare = nil }
            return spare?.path
        }) {
            unlink(path)
        }
    }
}
