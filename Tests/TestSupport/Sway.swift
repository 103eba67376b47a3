import Foundation
import Synchronization

/// A private headless sway for one test: a real Wayland compositor with wlroots' data-control
/// protocol, no screen, no input devices and no Xwayland, on a socket in a runtime directory
/// of its own; killed when the value is released.
///
/// Clients such as `wl-copy` and `wl-paste` reach it with ``environment``; code in the test
/// process connects to ``socketPath`` (the test process's own `XDG_RUNTIME_DIR` is not its).
///
/// sway refuses to run as root ("Unable to drop root"), so as root it is started as `nobody`
/// through `setpriv` (util-linux), with the runtime directory and configuration given to
/// `nobody`; clients running as root still connect (root ignores the socket's permissions).
public final class HeadlessSway: Sendable {
    /// The socket's name in ``runtimeDirectory`` (a `WAYLAND_DISPLAY` value: `wayland-1`).
    public let display: String
    /// The compositor's `XDG_RUNTIME_DIR`, made for it with mode 0700.
    public let runtimeDirectory: String
    private let pid: pid_t
    private let exited = Mutex(false)

    /// The socket's absolute path, which `wl_display_connect` accepts as a display name.
    public var socketPath: String { runtimeDirectory + "/" + display }

    /// What a client needs to reach this compositor: `XDG_RUNTIME_DIR` and `WAYLAND_DISPLAY`.
    public var environment: [String: String] {
        ["XDG_RUNTIME_DIR": runtimeDirectory, "WAYLAND_DISPLAY": display]
    }

    /// Starts sway and waits (up to 30 s) until its socket accepts connections.
    ///
    /// - Throws: when sway is not installed (the test then fails: it needs the `sway` package),
    ///   or does not start listening in time. The wait suspends, holding no thread of the
    ///   tests' pool while sway starts.
    public init() async throws {
        let sway: String
        do {
            sway = try Paths.executable(named: "sway")
        } catch {
            throw TestSupportError("sway is not installed: the Wayland tests need the sway package (a headless compositor)")
        }
        let directory = try Paths.temporaryDirectory("pasteboardd-sway")
        let runtime = directory + "/runtime"
        let asRoot = getuid() == 0
        try FileManager.default.createDirectory(atPath: runtime, withIntermediateDirectories: false, attributes: [.posixPermissions: 0o700])
        let config = runtime + "/config"
        try "xwayland disable\n".write(toFile: config, atomically: false, encoding: .utf8)
        var executable = sway
        var arguments = ["-c", config]
        if asRoot {
            for path in [runtime, config] { chown(path, 65534, 65534) }
            executable = try Paths.executable(named: "setpriv")
            arguments = ["--reuid=nobody", "--regid=nogroup", "--clear-groups", sway] + arguments
        }
        pid = try spawn(
            executable, arguments,
            standardInput: .open("/dev/null", flags: O_RDONLY, mode: 0),
            standardOutput: .open("/dev/null", flags: O_WRONLY, mode: 0),
            standardError: .open(directory + "/sway.log", flags: O_WRONLY | O_CREAT | O_APPEND, mode: 0o600),
            environment: [
                "XDG_RUNTIME_DIR": runtime, "HOME": runtime, "WLR_BACKENDS": "headless", "WLR_LIBINPUT_NO_DEVICES": "1",
                "WLR_RENDERER": "pixman", "WAYLAND_DISPLAY": "", "DISPLAY": "",
            ],
            newProcessGroup: true)
        runtimeDirectory = runtime

        let deadline = ContinuousClock.now + .seconds(30)
        var found: String?
        while found == nil {
            found = Self.listeningSocket(in: runtime)
            if found != nil { break }
            if ContinuousClock.now >= deadline || reap(pid, wait: false) != nil {
                Glibc.kill(pid, SIGKILL)
                _ = reap(pid)
                let log = (try? String(contentsOfFile: directory + "/sway.log", encoding: .utf8)) ?? ""
                throw TestSupportError("sway did not start listening in \(runtime) within 30 s:\n\(log.suffix(2000))")
            }
            try? await Task.sleep(for: .milliseconds(5))
        }
        display = found!
    }

    deinit {
        kill()
        try? FileManager.default.removeItem(atPath: URL(fileURLWithPath: runtimeDirectory).deletingLastPathComponent().path)
    }

    /// Kills sway (SIGKILL) and reaps it; clients see their connection end.
    public func kill() {
        exited.withLock { exited in
            guard !exited else { return }
            Glibc.kill(pid, SIGKILL)
            _ = reap(pid)
            exited = true
        }
    }

    /// Starts `executable` as a client of this compositor with its connection given to it
    /// (`WAYLAND_SOCKET`), so that killing it ends that connection first: a client such as
    /// `wl-copy` then exits the way it does when the compositor goes away, removing the copy
    /// of its input it keeps in `/tmp`, which SIGKILL would leave behind.
    public func client(_ executable: String, _ arguments: [String]) throws -> ChildProcess {
        guard let connection = connectUnixSocket(socketPath) else {
            throw TestSupportError("sway does not accept connections at \(socketPath)")
        }
        var environment = self.environment
        environment["WAYLAND_SOCKET"] = "3"
        return try ChildProcess(executable, arguments, environment: environment, connection: connection)
    }

    /// The name of the `wayland-N` socket in `directory` that accepts a connection, if any.
    private static func listeningSocket(in directory: String) -> String? {
        let names = (try? FileManager.default.contentsOfDirectory(atPath: directory)) ?? []
        return names.filter { $0.hasPrefix("wayland-") && !$0.hasSuffix(".lock") }.sorted()
            .first { TestBus.accepts(directory + "/" + $0) }
    }
}
