import Foundation

/// Keeps the state directory the user's alone, as the guarantees say, also when it existed
/// before the server made it (`--state-dir` naming a folder made with `mkdir`, a umask of 0):
/// others who may write to it may delete or replace the store and its lock, and others who may
/// read it see which pasteboards there are.
enum PrivateDirectory {
    /// Takes group and other permissions away from `path`.
    ///
    /// - Returns: the mode it had, when that had to change; nil when it was private already.
    static func makePrivate(_ path: String) throws -> mode_t? {
        var info = stat()
        guard stat(path, &info) == 0 else { throw PasteboardStoreError("cannot look at \(path): \(String(cString: strerror(errno)))") }
        let mode = info.st_mode & 0o7777
        guard mode & 0o077 != 0 else { return nil }
        guard chmod(path, 0o700) == 0 else {
            throw PasteboardStoreError(
                "it is open to other users (mode \(String(mode, radix: 8))) and cannot be made private: \(String(cString: strerror(errno))); "
                    + "run `chmod 700 \(path)` as its owner")
        }
        return mode
    }
}
