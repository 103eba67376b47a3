import Synchronization

#if canImport(Glibc)
import Glibc
#endif

/// Where one representation's bytes live.
///
/// Small data stays in memory, where reads cost nothing; anything larger lives in a file of its
/// own under the state directory, so the server's memory does not grow with what it holds and
/// a large item is served by handing out a descriptor of that file.
enum Payload: Sendable {
    case inline([UInt8])
    case file(Blob)
    /// Not yet here: asked of the writer on first read (`WritePromised`).
    case promised(Promise)

    /// Data up to this size is kept in memory (and inside the database); larger data in a file.
    static let inlineThreshold = 64 * 1024

    var size: UInt64 {
        switch self {
        case .inline(let bytes): UInt64(bytes.count)
        case .file(let blob): blob.size
        case .promised(let promise): promise.resolved?.size ?? promise.size ?? 0
        }
    }

    /// The size `Items` reports: -1 for a promise not yet resolved, unless its size is known
    /// (data another server wrote, in the shared database: no promise for its readers).
    var reportedSize: Int64 {
        if case .promised(let promise) = self, promise.resolved == nil, promise.size == nil { return -1 }
        return Int64(clamping: size)
    }
}

/// A file holding one payload, deleted when nothing refers to it any more.
///
/// Blob files are written once and never changed, so a descriptor handed to a reader stays
/// valid and consistent even if the pasteboard changes (or the file is deleted) meanwhile.
///
/// "Nothing" includes the store: when the server shuts down, the blobs of the current contents
/// are released with it but the database still refers to them, so ``keepFile()`` is called on
/// those first.
///
/// Data that must stay off the disk (concealed and transient writes, and what a promise's
/// writer provides) lives in a memfd instead:
/// its ``path`` is the descriptor's `/proc/self/fd` entry, which opens like a file, and the
/// descriptor is closed (the memory freed) when nothing refers to it.
final class Blob: Sendable {
    /// The file's name inside the blob directory; empty for a memory blob.
    let id: String
    let path: String
    let size: UInt64
    /// For a memory blob, its memfd.
    private let memoryFD: Int32
    private let isKept = Atomic<Bool>(false)
    /// Where the file goes when nothing refers to it any more, instead of being deleted.
    private let spare: SpareBlobFile?

    init(id: String, directory: String, size: UInt64, spare: SpareBlobFile? = nil) {
        self.id = id
        self.path = directory + "/" + id
        self.size = size
        self.spare = spare
        memoryFD = -1
    }

    /// A blob in memory, owning `memoryFD`.
    init(memoryFD: Int32, size: UInt64) {
        id = ""
        path = "/proc/self/fd/\(memoryFD)"
        self.size = size
        self.memoryFD = memoryFD
        spare = nil
    }

    /// Whether the data is in a file of the store (rather than in memory).
    var isOnDisk: Bool { memoryFD < 0 }

    /// Leaves the file on disk when this object goes away (the store still refers to it).
    func keepFile() {
        isKept.store(true, ordering: .relaxed)
    }

    /// The file goes (to the spare or away), or the memfd is closed (its memory freed), on the
    /// retirement queue: the last reference may drop on any thread, the bus thread included,
    /// which must not wait on the file system or on freeing a gigabyte.
    deinit {
        if memoryFD >= 0 {
            let memoryFD = memoryFD
            PasteboardService.whenRetiring { close(memoryFD) }
        } else if !isKept.load(ordering: .relaxed) {
            let (path, size, spare) = (path, size, spare)
            PasteboardService.whenRetiring {
                if let spare {
                    spare.offer(path, size: size)
                } else {
                    unlink(path)
                }
            }
        }
    }
}
