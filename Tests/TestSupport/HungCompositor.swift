import Foundation

#if canImport(Glibc)
import Glibc
#endif

/// A Wayland socket whose compositor never answers (hung, stopped): connections are taken by
/// the kernel's backlog, and nothing is ever read or written on them.
public final class HungCompositor: Sendable {
    /// `XDG_RUNTIME_DIR` and `WAYLAND_DISPLAY` naming it.
    public let environment: [String: String]
    private let directory: String
    private let listener: Int32

    public init() throws {
        directory = try Paths.temporaryDirectory("pasteboardd-hung-compositor")
        let path = directory + "/wayland-hung"
        let listener = socket(AF_UNIX, Int32(SOCK_STREAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0)
        self.listener = listener
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
        environment = ["XDG_RUNTIME_DIR": directory, "WAYLAND_DISPLAY": "wayland-hung"]
    }

    deinit {
        close(listener)
        try? FileManager.default.removeItem(atPath: directory)
    }
}
