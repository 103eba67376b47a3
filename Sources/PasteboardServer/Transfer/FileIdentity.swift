import DBus

#if canImport(Glibc)
import Glibc
#endif

/// An open file's identity (device and inode), to notice one file passed for several types.
struct FileIdentity: Hashable {
    let device: UInt64
    let inode: UInt64

    init?(_ descriptor: UnixFileDescriptor) {
        var info = stat()
        guard fstat(descriptor.rawValue, &info) == 0 else { return nil }
        device = UInt64(info.st_dev)
        inode = UInt64(info.st_ino)
    }
}
