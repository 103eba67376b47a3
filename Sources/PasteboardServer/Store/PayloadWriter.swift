#if canImport(Glibc)
import Glibc
#endif
import CDBus
import DBus
import PasteboardModel

/// Turns incoming bytes into a ``Payload``: kept in memory when small, written to a blob file
/// when not. Safe from any thread (it only creates files).
struct PayloadWriter: Sendable {
    let blobDirectory: String
    /// A large file let go of, to overwrite rather than start a new one.
    var spare: SpareBlobFile? = nil
    /// Told when a file cannot be made or written for a cause that puts the store in doubt.
    var health: StoreHealth? = nil
    /// Keep everything off the disk (concealed and transient data, provided promises): large
    /// payloads go to memfds.
    var volatile = false

    /// A copy writing to memory only when `volatile`.
    func volatile(_ volatile: Bool) -> PayloadWriter {
        var copy = self
        copy.volatile = volatile
        return copy
    }

    /// A payload for bytes already in memory.
    func payload(for bytes: [UInt8]) throws(PasteboardError) -> Payload {
        guard bytes.count > Payload.inlineThreshold else { return .inline(bytes) }
        let file = try createFile(sizeHint: UInt64(bytes.count))
        do {
            try Self.writeAll(file.fd, bytes[...])
        } catch {
            file.discard()
            throw error
        }
        return .file(try file.finish(size: UInt64(bytes.count)))
    }

    /// A new empty file for one payload, open for writing; for data that is large or may be
    /// (`sizeHint` at least ``SpareBlobFile/minimumSize``, or nil for a stream of unknown
    /// length), the spare file if there is one, to be overwritten.
    func createFile(sizeHint: UInt64?) throws(PasteboardError) -> BlobFile {
        if volatile {
            let fd = memfd_create("pasteboard", cdbus_MFD_CLOEXEC | cdbus_MFD_ALLOW_SEALING)
            guard fd >= 0 else { throw .quotaExceeded("the server is out of memory for this data (\(String(cString: strerror(errno))))") }
            return BlobFile(fd: fd, id: nil, directory: blobDirectory)
        }
        if sizeHint ?? .max >= SpareBlobFile.minimumSize, let reused = spare?.take() {
            return BlobFile(fd: reused.fd, id: nil, directory: blobDirectory, reusing: reused.path, spare: spare, health: health)
        }
        // An unnamed file in the blob directory: it gets its name only once complete, so a
        // transfer cut short (an error, SIGTERM, kill -9) leaves nothing behind.
        let unnamed = open(blobDirectory, cdbus_O_TMPFILE | O_WRONLY | O_CLOEXEC, 0o600)
        if unnamed >= 0 {
            return BlobFile(fd: unnamed, id: nil, directory: blobDirectory, unnamed: true, spare: spare, health: health)
        }
        let file = try createStoreFile()
        return BlobFile(fd: file.fd, id: file.id, directory: blobDirectory, spare: spare, health: health)
    }

    /// A new empty named file in the blob directory, open for writing (where the file system
    /// has no unnamed files).
    private func createStoreFile() throws(PasteboardError) -> (id: String, fd: Int32) {
        for _ in 0..<8 {
            let id = Store.randomID()
            let fd = open(blobDirectory + "/" + id, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0o600)
            if fd >= 0 { return (id, fd) }
            if errno != EEXIST { break }
        }
        let code = errno
        health?.fileFailed(code)
        throw Self.diskFailure("the server cannot store data on disk right now", code)
    }

    /// Seals a complete memfd (made with `MFD_ALLOW_SEALING`) against any change, its seals
    /// included: a reader given it, or reopening it through `/proc`, cannot alter what others
    /// read.
    static func seal(_ fd: Int32) {
        _ = cdbus_fcntl_int(fd, cdbus_F_ADD_SEALS, cdbus_F_SEAL_SHRINK | cdbus_F_SEAL_GROW | cdbus_F_SEAL_WRITE | cdbus_F_SEAL_SEAL)
    }

    /// Writes every byte of `bytes` to `fd`.
    static func writeAll(_ fd: Int32, _ bytes: ArraySlice<UInt8>) throws(PasteboardError) {
        let failure = UnixFileDescriptor.writeAll(fd, bytes)
        guard failure == 0 else { throw writeFailure(failure) }
    }

    /// `QuotaExceeded` for a store file that could not be made or written: `what` failed, with
    /// the system's reason (`code`, an `errno`) and what to do about it, which is to free disk
    /// space only when the disk is full.
    static func diskFailure(_ what: String, _ code: Int32) -> PasteboardError {
        let remedy = switch code {
        case ENOSPC, EDQUOT: "free some disk space and try again"
        case EROFS: "its file system is read-only; make it writable and restart the server"
        case ENOENT: "the state directory is gone; restart the server"
        case EACCES, EPERM: "the state directory cannot be written; give the server write access to it"
        default: "try again"
        }
        return .quotaExceeded("\(what) (\(String(cString: strerror(code)))); \(remedy)")
    }

    /// The error for a payload file that could not be written (an `errno`).
    static func writeFailure(_ code: Int32) -> PasteboardError {
        diskFailure("the server could not write data to disk", code)
    }
}

/// A payload file being written: an unnamed store file, a named one (with an id), or a memfd.
struct BlobFile {
    let fd: Int32
    let id: String?
    let directory: String
    /// Opened with `O_TMPFILE`: named by ``finish(size:)``.
    var unnamed = false
    /// The spare file being overwritten (see ``SpareBlobFile``): renamed by ``finish(size:)``.
    var reusing: String? = nil
    var spare: SpareBlobFile? = nil
    /// Told when the file cannot be stored for a cause that puts the store in doubt.
    var health: StoreHealth? = nil
    /// Bytes reserved on disk by ``preallocate(_:)``.
    private(set) var preallocated: UInt64 = 0

    /// Whether the file lives in memory (a memfd, for data kept off the disk).
    var isMemory: Bool { id == nil && !unnamed && reusing == nil }

    /// Reserves disk space for `bytes` about to be written, when their number is known
    /// beforehand (a file passed to `WriteItemsFd`).
    ///
    /// The file system then allocates its blocks at once instead of page by page as they fill
    /// (measured: a fifth off the copy of 64 MiB into ext4), and a disk too full for the data
    /// fails now instead of after most of it was written. The reservation lies past the end of
    /// the file (`FALLOC_FL_KEEP_SIZE`): the size still grows only as data is written, so after
    /// a power cut a partly written file still looks cut short, never complete with zeros. A
    /// memfd is left alone: reserving its memory would only zero pages about to be overwritten.
    mutating func preallocate(_ bytes: UInt64) throws(PasteboardError) {
        guard !isMemory, bytes > 0, bytes <= UInt64(Int64.max) else { return }
        if fallocate(fd, cdbus_FALLOC_FL_KEEP_SIZE, 0, off_t(bytes)) == 0 {
            preallocated = bytes
        } else if errno == ENOSPC || errno == EDQUOT {
            throw PayloadWriter.writeFailure(errno)
        }
        // Other failures (a file system without fallocate): the copy works without it.
    }

    /// Ends writing and wraps the file: a store file is named (if need be) and its descriptor
    /// closed (the blob reopens it by path); a memfd's stays open, owned by the blob.
    ///
    /// The file is made read-only first. `ReadFd` hands readers the file itself (a memfd, or
    /// the store's file opened read-only), and a descriptor can be opened again through
    /// `/proc/PID/fd` with the file's own permissions: a memfd sealed against writing cannot be
    /// changed by anyone, and a store file of mode 0400 not by its owner without a `chmod`.
    func finish(size: UInt64) throws(PasteboardError) -> Blob {
        // Less data came than was reserved past the end (the file shrank meanwhile), or the
        // file holds more than came (a spare overwritten, a parallel copy's range written past
        // one that came short): free the rest.
        if preallocated > size || Self.length(of: fd) > size { _ = ftruncate(fd, off_t(size)) }
        if isMemory {
            PayloadWriter.seal(fd)
        } else {
            _ = fchmod(fd, 0o400)
        }
        if let reusing {
            defer { close(fd) }
            for _ in 0..<8 {
                let id = Store.randomID()
                // Without replacing: a name taken by another blob is tried again.
                if renameat2(AT_FDCWD, reusing, AT_FDCWD, directory + "/" + id, cdbus_RENAME_NOREPLACE) == 0 {
                    return Blob(id: id, directory: directory, size: size, spare: spare)
                }
                if errno != EEXIST { break }
            }
            let failure = errno
            SpareBlobFile.delete(reusing)
            throw storeFailure(failure)
        }
        if unnamed {
            defer { close(fd) }
            for _ in 0..<8 {
                let id = Store.randomID()
                if linkat(AT_FDCWD, "/proc/self/fd/\(fd)", AT_FDCWD, directory + "/" + id, cdbus_AT_SYMLINK_FOLLOW) == 0 {
                    return Blob(id: id, directory: directory, size: size, spare: spare)
                }
                if errno != EEXIST { break }
            }
            throw storeFailure(errno)
        }
        guard let id else { return Blob(memoryFD: fd, size: size) }
        close(fd)
        return Blob(id: id, directory: directory, size: size, spare: spare)
    }

    /// The file's length, 0 when it cannot be told.
    private static func length(of fd: Int32) -> UInt64 {
        var info = stat()
        return fstat(fd, &info) == 0 ? UInt64(max(info.st_size, 0)) : 0
    }

    /// The error for a complete file that could not be named in the store (`code`, an
    /// `errno`), which the store's health hears of too.
    private func storeFailure(_ code: Int32) -> PasteboardError {
        health?.fileFailed(code)
        return PayloadWriter.diskFailure("the server could not store the data", code)
    }

    /// Gives up on the file (an error while writing it).
    func discard() {
        close(fd)
        if let id { unlink(directory + "/" + id) }
        if let reusing { SpareBlobFile.delete(reusing) }
    }
}
