import Foundation

#if canImport(Glibc)
import Glibc
#endif

/// A listening unix socket where a Wayland client looks for a compositor: `name` in a
/// temporary `XDG_RUNTIME_DIR` of its own. The stand-in compositors of the tests listen on one.
struct WaylandSocket {
    /// `XDG_RUNTIME_DIR` and `WAYLAND_DISPLAY` naming it.
    let environment: [String: String]
    /// The temporary folder, for the owner to remove.
    let directory: String
    /// The listening descriptor, for the owner to close.
    let listener: Int32

    init(name: String) throws {
        let directory = try Paths.temporaryDirectory("pasteboardd-\(name)")
        let path = directory + "/" + name
        let listener = socket(AF_UNIX, Int32(SOCK_STREAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0)
        guard listener >= 0 else { throw TestSupportError("socket: \(String(cString: strerror(errno)))") }
        var address = sockaddr_un()
        address.sun_family = sa_family_t(AF_UNIX)
        withUnsafeMutableBytes(of: &address.sun_path) { $0.copyBytes(from: Array(path.utf8)) }
        let bound = withUnsafePointer(to: &address) { pointer in
            pointer.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(listener, $0, socklen_t(MemoryLayout<sockaddr_un>.size)) == 0 }
        }
        guard bound, listen(listener, 64) == 0 else {
            close(listener)
            throw TestSupportError("cannot listen on \(path): \(String(cString: strerror(errno)))")
        }
        self.directory = directory
        self.listener = listener
        environment = ["XDG_RUNTIME_DIR": directory, "WAYLAND_DISPLAY": name]
    }
}
