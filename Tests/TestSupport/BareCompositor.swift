import Foundation

#if canImport(Glibc)
import Glibc
#endif

/// A Wayland compositor with no data-control protocol (GNOME's, say, or weston's): it answers
/// the registry with `wl_compositor` and `wl_seat` alone, and every roundtrip, on the Wayland
/// wire protocol itself; nothing else it is asked is answered.
public final class BareCompositor: Sendable {
    /// `XDG_RUNTIME_DIR` and `WAYLAND_DISPLAY` naming it.
    public let environment: [String: String]
    private let directory: String
    private let listener: Int32

    /// The globals announced: name, interface, version.
    private static let globals: [(UInt32, String, UInt32)] = [(1, "wl_compositor", 4), (2, "wl_seat", 7)]

    public init() throws {
        let socket = try WaylandSocket(name: "wayland-bare")
        (environment, directory, listener) = (socket.environment, socket.directory, socket.listener)
        let listener = listener
        Thread.detachNewThread {
            // Until deinit shuts the listener down; only then is it closed, here, so that its
            // number is never another socket's while this thread may still accept on it.
            while true {
                let client = accept(listener, nil, nil)
                if client >= 0 {
                    Thread.detachNewThread { Self.serve(client) }
                } else if errno != EINTR && errno != ECONNABORTED {
                    break
                }
            }
            close(listener)
        }
    }

    deinit {
        shutdown(listener, Int32(SHUT_RDWR))
        try? FileManager.default.removeItem(atPath: directory)
    }

    /// Answers `wl_display.get_registry` with the globals and `wl_display.sync` with `done`
    /// (and the callback's `delete_id`), until the client hangs up.
    private static func serve(_ client: Int32) {
        defer { close(client) }
        var serial: UInt32 = 0
        while let (object, opcode, arguments) = readMessage(client) {
            guard object == 1, let newID = arguments.first else { continue }
            switch opcode {
            case 0:  // sync(callback)
                serial += 1
                send(client, object: newID, opcode: 0, [serial])                 // wl_callback.done
                send(client, object: 1, opcode: 1, [newID])                      // wl_display.delete_id
            case 1:  // get_registry(registry)
                for (name, interface, version) in globals {
                    send(client, object: newID, opcode: 0, [name] + string(interface) + [version])  // wl_registry.global
                }
            default:
                continue
            }
        }
    }

    /// One message: its object, opcode and arguments as words; nil at the end.
    private static func readMessage(_ fd: Int32) -> (UInt32, UInt16, [UInt32])? {
        guard let header = readWords(fd, 2) else { return nil }
        let size = Int(header[1] >> 16)
        guard size >= 8, size % 4 == 0, let arguments = readWords(fd, (size - 8) / 4) else { return nil }
        return (header[0], UInt16(header[1] & 0xffff), arguments)
    }

    private static func readWords(_ fd: Int32, _ count: Int) -> [UInt32]? {
        var words = [UInt32](repeating: 0, count: count)
        var filled = 0
        let total = count * 4
        while filled < total {
            let got = words.withUnsafeMutableBytes { read(fd, $0.baseAddress! + filled, total - filled) }
            if got < 0, errno == EINTR { continue }
            guard got > 0 else { return nil }
            filled += got
        }
        return words
    }

    /// A string argument: its length with the NUL, then its bytes padded to a word.
    private static func string(_ text: String) -> [UInt32] {
        var bytes = Array(text.utf8) + [0]
        while bytes.count % 4 != 0 { bytes.append(0) }
        return [UInt32(text.utf8.count + 1)] + stride(from: 0, to: bytes.count, by: 4).map { index in
            bytes[index..<index + 4].withUnsafeBytes { $0.loadUnaligned(as: UInt32.self) }
        }
    }

    private static func send(_ fd: Int32, object: UInt32, opcode: UInt16, _ arguments: [UInt32]) {
        let message = [object, UInt32((8 + arguments.count * 4) << 16) | UInt32(opcode)] + arguments
        _ = message.withUnsafeBytes { Glibc.send(fd, $0.baseAddress, $0.count, Int32(MSG_NOSIGNAL)) }
    }
}
