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
        return .file(file.finish(size: UInt64(bytes.count)))
    }

    /// A new empty file for one payload, open for writing.
    func createFile() throws(PasteboardError) -> BlobFile {
        if volatile {
            let fd = memfd_create("pasteboard", cdbus_MFD_CLOEXEC)
            guard fd >= 0 else { throw .quotaExceeded("the server is out of memory for this data (\(String(cString: strerror(errno))))") }
            return BlobFile(fd: fd, id: nil, directory: blobDirectory)
        }
        let file = try createStoreFile()
        return BlobFile(fd: file.fd, id: file.id, directory: blobDirectory)
    }

    /// A new empty file in the blob directory, open for writing.
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

/// A payload file being written: a store file (with an id) or a memfd.
struct BlobFile {
    let fd: Int32
    let id: String?
    let directory: String

    /// Ends writing and wraps the file: a store file's descriptor is closed (the blob reopens it
    /// by path); a memfd's stays open, owned by the blob.
    func finish(size: UInt64) -> Blob {
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
