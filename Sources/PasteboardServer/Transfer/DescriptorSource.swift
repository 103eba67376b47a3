import CDBus
import DBus
import PasteboardModel

#if canImport(Glibc)
import Glibc
#endif

/// Makes the descriptor `ReadFd` hands out, and reads payloads back into memory.
///
/// A payload in a blob file is read by opening that file read-only (the desktop bridge, an
/// upload); a `ReadFd` reader gets it through a pipe instead (``readerDescriptor(for:reader:feeder:)``).
/// An in-memory payload is copied once into a sealed memfd, and a memory blob is its sealed memfd.
enum DescriptorSource {
    /// A descriptor of the payload for the server's own reading (the desktop bridge, an upload):
    /// a store file's is the file itself, which no client may be given (see
    /// ``readerDescriptor(for:reader:feeder:)``).
    static func serverSideDescriptor(for payload: Payload) throws(PasteboardError) -> UnixFileDescriptor {
        switch payload {
        case .file(let blob):
            let fd = open(blob.path, O_RDONLY | O_CLOEXEC)
            guard fd >= 0 else { throw unavailable(errno) }
            return UnixFileDescriptor(owning: fd)
        case .promised(let promise):
            guard let payload = promise.resolved else { throw unresolved(promise) }
            return try serverSideDescriptor(for: payload)
        case .inline(let bytes):
            let fd = memfd_create("pasteboard", cdbus_MFD_CLOEXEC | cdbus_MFD_ALLOW_SEALING)
            guard fd >= 0 else { throw unavailable(errno) }
            let owned = UnixFileDescriptor(owning: fd)
            try PayloadWriter.writeAll(fd, bytes[...])
            lseek(fd, 0, SEEK_SET)
            PayloadWriter.seal(fd)
            return owned
        }
    }

    /// The descriptor `ReadFd` hands `reader`: a store file's data comes through a pipe
    /// (``StoredFileFeeder``), since the file itself could be made writable by its reader;
    /// anything else as ``serverSideDescriptor(for:)`` makes it (a sealed memfd).
    static func readerDescriptor(for payload: Payload, reader: @autoclosure () -> TransferClient, feeder: StoredFileFeeder) throws(PasteboardError) -> UnixFileDescriptor {
        switch payload {
        case .file(let blob) where !blob.id.isEmpty:
            return try feeder.pipe(for: blob, reader: reader())
        case .promised(let promise):
            guard let payload = promise.resolved else { throw unresolved(promise) }
            return try readerDescriptor(for: payload, reader: reader(), feeder: feeder)
        default:
            return try serverSideDescriptor(for: payload)
        }
    }

    /// The payload's bytes, read from its file when it has one.
    static func bytes(of payload: Payload) throws(PasteboardError) -> [UInt8] {
        switch payload {
        case .inline(let bytes):
            return bytes
        case .promised(let promise):
            guard let payload = promise.resolved else { throw unresolved(promise) }
            return try bytes(of: payload)
        case .file(let blob):
            let fd = open(blob.path, O_RDONLY | O_CLOEXEC)
            guard fd >= 0 else { throw unavailable(errno) }
            defer { close(fd) }
            var bytes = [UInt8](repeating: 0, count: Int(blob.size))
            var offset = 0
            while offset < bytes.count {
                let count = bytes.withUnsafeMutableBytes { pread(fd, $0.baseAddress! + offset, $0.count - offset, off_t(offset)) }
                if count < 0, errno == EINTR { continue }
                guard count > 0 else { throw unavailable(count < 0 ? errno : EIO) }
                offset += count
            }
            return bytes
        }
    }

    /// Runs `body` over the payload's bytes without copying them: a file's are mapped.
    static func withBytes<T>(of payload: Payload, _ body: (UnsafeRawBufferPointer) -> T) throws(PasteboardError) -> T {
        switch payload {
        case .inline(let bytes):
            return bytes.withUnsafeBytes(body)
        case .promised(let promise):
            guard let payload = promise.resolved else { throw unresolved(promise) }
            return try withBytes(of: payload, body)
        case .file(let blob):
            guard blob.size > 0 else { return body(UnsafeRawBufferPointer(start: nil, count: 0)) }
            let fd = open(blob.path, O_RDONLY | O_CLOEXEC)
            guard fd >= 0 else { throw unavailable(errno) }
            defer { close(fd) }
            guard let mapping = mmap(nil, Int(blob.size), PROT_READ, MAP_SHARED, fd, 0), mapping != MAP_FAILED else { throw unavailable(errno) }
            defer { munmap(mapping, Int(blob.size)) }
            return body(UnsafeRawBufferPointer(start: mapping, count: Int(blob.size)))
        }
    }

    private static func unresolved(_ promise: Promise) -> PasteboardError {
        .providerFailed("the \(promise.type) data of '\(promise.name)' has not been provided yet")
    }

    static func unavailable(_ code: Int32) -> PasteboardError {
        let cause = switch code {
        case ENOENT, EACCES, ENOTDIR, ELOOP: "the server's state directory may have been changed by hand"
        case EMFILE, ENFILE, ENOMEM: "the server is short of descriptors or memory; try again"
        default: "the disk or file system holding the server's state directory failed"
        }
        return .noSuchItem("the stored data cannot be read (\(String(cString: strerror(code)))); \(cause)")
    }
}
