import Foundation
import Synchronization

/// A private X server for one test: a real `Xvfb` on a display number it picks itself, killed
/// when the value is released.
///
/// X11 clients (`xclip`, `xsel`, the server's desktop bridge) reach it with ``environment``.
///
/// ```swift
/// let x11 = try await VirtualX11()
/// let copied = try await runProgram(try Paths.executable(named: "xclip"), ["-selection", "clipboard"], input: Data("hi".utf8), environment: x11.environment)
/// ```
public final class VirtualX11: Sendable {
    /// The display name (`:N`), as `DISPLAY` takes it.
    public let display: String
    private let server = Mutex<ChildProcess?>(nil)

    /// What a client needs to reach this display: `DISPLAY`.
    public var environment: [String: String] { ["DISPLAY": display] }

    /// Starts Xvfb and waits (up to 30 s) until it is ready.
    ///
    /// - Throws: when Xvfb is not installed (the test then fails: it needs the `xvfb` package),
    ///   or does not start in time.
    public init() async throws {
        let child = try ChildProcess(try Self.xvfb(), ["-displayfd", "1", "-nolisten", "tcp", "-noreset", "-screen", "0", "640x480x24"])
        child.send(Data())
        let deadline = ContinuousClock.now + .seconds(30)
        while !child.stdout.contains(UInt8(ascii: "\n")) {
            guard ContinuousClock.now < deadline, child.exitStatus == nil else {
                child.kill()
                throw TestSupportError("Xvfb did not start within 30 s: \(String(decoding: child.stderr, as: UTF8.self))")
            }
            try await Task.sleep(for: .milliseconds(5))
        }
        display = ":" + String(decoding: child.stdout, as: UTF8.self).trimmingCharacters(in: .whitespacesAndNewlines)
        server.withLock { $0 = child }
    }

    deinit {
        stop()
    }

    /// Kills the X server, as when a desktop session ends; its clients lose their connection.
    public func stop() {
        server.withLock { $0.take() }?.kill()
    }

    /// Starts the X server again on the same display number, and waits until it accepts
    /// connections.
    public func restart() async throws {
        stop()
        let number = display.dropFirst()
        let socket = "/tmp/.X11-unix/X\(number)"
        let deadline = ContinuousClock.now + .seconds(30)
        while true {
            let child = try ChildProcess(try Self.xvfb(), [display, "-nolisten", "tcp", "-noreset", "-screen", "0", "640x480x24"])
            child.send(Data())
            while child.exitStatus == nil, !FileManager.default.fileExists(atPath: socket), ContinuousClock.now < deadline {
                try await Task.sleep(for: .milliseconds(5))
            }
            // Ready once a client gets through (xdpyinfo-free: xclip -o returns at once).
            try await Task.sleep(for: .milliseconds(200))
            if child.exitStatus == nil {
                server.withLock { $0 = child }
                return
            }
            // The old server's lock may linger for a moment.
            guard ContinuousClock.now < deadline else {
                throw TestSupportError("Xvfb did not start again on \(display): \(String(decoding: child.stderr, as: UTF8.self))")
            }
            try await Task.sleep(for: .milliseconds(100))
        }
    }

    private static func xvfb() throws -> String {
        do {
            return try Paths.executable(named: "Xvfb")
        } catch {
            throw TestSupportError("Xvfb is not installed: the X11 tests need the xvfb package (scripts/install-deps installs it)")
        }
    }
}
