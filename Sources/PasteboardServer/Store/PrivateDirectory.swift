import Foundation

/// Refuses a state directory that other users may write to (a `--state-dir` of a shared folder,
/// of `/tmp`, of one made under a umask of 0): they could delete or replace the store, or plant
/// a file or a link under a name it is about to use. Its contents are the user's alone in any
/// case (files 0600, folders 0700), so a directory others may only read and list is taken: the
/// names they see are the store's own (`pasteboards.sqlite`, `blobs`), not the pasteboards'.
///
/// The directory is not changed: it may be the user's home, or a folder the user shares on
/// purpose. One the server makes itself is 0700.
enum PrivateDirectory {
    static func check(_ path: String) throws {
        var info = stat()
        guard stat(path, &info) == 0 else { throw PasteboardStoreError("cannot look at \(path): \(String(cString: strerror(errno)))") }
        let mode = info.st_mode & 0o7777
        guard mode & 0o022 != 0 else { return }
        throw PasteboardStoreError(
            "other users may write to it (mode \(String(mode, radix: 8))), and so delete or replace what it holds; "
                + "make it yours alone (`chmod go-w \(path)`), or choose another (--state-dir)")
    }
}
