#if canImport(Glibc)
import Glibc
#endif
import PasteboardModel

/// Turns incoming bytes into a ``Payload``: kept in memory when small, written to a blob file
/// when not. Safe from any thread (it only creates files).
struct PayloadWriter: Sendable {
    let blobDirectory: String

    /// A payload for bytes already in memory.
    func payload(for bytes: [UInt8]) throws(PasteboardError) -> Payload {
        guard bytes.count > Payload.inlineThreshold else { return .inline(bytes) }
        let file = try createFile()
        let blob = Blob(id: file.id, directory: blobDirectory, size: UInt64(bytes.count))
        defer { close(file.fd) }
        try Self.writeAll(file.fd, bytes[...])
        return .file(blob)
    }

    /// A new empty blob file, open for writing.
    func createFile() throws(PasteboardError) -> (id: String, fd: Int32) {
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
