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
        let socket = try WaylandSocket(name: "wayland-hung")
        (environment, directory, listener) = (socket.environment, socket.directory, socket.listener)
    }

    deinit {
        close(listener)
        try? FileManager.default.removeItem(atPath: directory)
    }
}
