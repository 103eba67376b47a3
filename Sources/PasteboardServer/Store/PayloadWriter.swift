#if canImport(Glibc)
import Glibc
#endif
import CDBus
import PasteboardModel

/// Turns incoming bytes into a ``Payload``: kept in memory when small, written to a blob file
/// when not. Safe from any thread (it only creates files).
struct PayloadWriter: Sendable {
    let blobDirectory: String
    /// Keep everything off the disk (concealed and transient data): large payloads go to memfds.
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
        let file = try createFile()
        do {
            try Self.writeAll(file.fd, bytes[...])
        } catch {
            file.discard()
            throw error
        }
        return .file(try file.finish(size: UInt64(bytes.count)))
    }

    /// A new empty file for one payload, open for writing.
    func createFile() throws(PasteboardError) -> BlobFile {
        if volatile {
            let fd = memfd_create("pasteboard", cdbus_MFD_CLOEXEC)
            guard fd >= 0 else { throw .quotaExceeded("the server is out of memory for this data (\(String(cString: strerror(errno))))") }
            return BlobFile(fd: fd, id: nil, directory: blobDirectory)
        }
        // An unnamed file in the blob directory: it gets its name only once complete, so a
        // transfer cut short (an error, SIGTERM, kill -9) leaves nothing behind.
        let unnamed = open(blobDirectory, cdbus_O_TMPFILE | O_WRONLY | O_CLOEXEC, 0o600)
        if unnamed >= 0 {
            return BlobFile(fd: unnamed, id: nil, directory: blobDirectory, unnamed: true)
        }
        let file = try createStoreFile()
        return BlobFile(fd: file.fd, id: file.id, directory: blobDirectory)
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
        throw .quotaExceeded("the server cannot store data on disk right now (\(String(cString: strerror(errno)))); free some disk space and try again")
    }

    /// Writes every byte of `bytes` to `fd`.
    static func writeAll(_ fd: Int32, _ bytes: ArraySlice<UInt8>) throws(PasteboardError) {
        let failure: Int32 = bytes.withUnsafeBytes { buffer in
            var offset = 0
            while offset < buffer.count {
                let written = write(fd, buffer.baseAddress! + offset, buffer.count - offset)
                if written < 0 {
                    if errno == EINTR { continue }
                    return errno
                }
                offset += written
            }
            return 0
        }
        guard failure == 0 else {
            throw .quotaExceeded("the server could not write data to disk (\(String(cString: strerror(failure)))); free some disk space and try again")
        }
    }
}

/// A payload file being written: an unnamed store file, a named one (with an id), or a memfd.
struct BlobFile {
    let fd: Int32
    let id: String?
    let directory: String
    /// Opened with `O_TMPFILE`: named by ``finish(size:)``.
    var unnamed = false

    /// Ends writing and wraps the file: a store file is named (if need be) and its descriptor
    /// closed (the blob reopens it by path); a memfd's stays open, owned by the blob.
    func finish(size: UInt64) throws(PasteboardError) -> Blob {
        if unnamed {
            defer { close(fd) }
            for _ in 0..<8 {
                let id = Store.randomID()
                if linkat(AT_FDCWD, "/proc/self/fd/\(fd)", AT_FDCWD, directory + "/" + id, cdbus_AT_SYMLINK_FOLLOW) == 0 {
                    return Blob(id: id, directory: directory, size: size)
                }
                if errno != EEXIST { break }
            }
            throw .quotaExceeded("the server could not store the data (\(String(cString: strerror(errno)))); free some disk space and try again")
        }
        guard let id else { return Blob(memoryFD: fd, size: size) }
        close(fd)
        return Blob(id: id, directory: directory, size: size)
    }

    /// Gives up on the file (an error while writing it).
    func discard() {
        close(fd)
        if let id { unlink(directory + "/" + id) }
    }
}
