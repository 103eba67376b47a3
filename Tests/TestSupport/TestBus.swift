import Foundation

/// A private `dbus-daemon` for one test, started with the project's test configuration and
/// killed when the value is released. Tests hand its ``address`` to everything explicitly and
/// never touch the developer's session bus.
public final class TestBus: Sendable {
    public let address: String
    private let process: Process

    public init() throws {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: try Paths.executable(named: "dbus-daemon"))
        process.arguments = ["--config-file=\(Paths.repository)/dbus/session-test.conf", "--nofork", "--print-address=1"]
        let output = Pipe()
        process.standardOutput = output
        process.standardError = FileHandle.nullDevice
        try process.run()
        self.process = process
        // The daemon prints its address, one line, once it listens.
        var line = Data()
        while !line.contains(UInt8(ascii: "\n")) {
            let chunk = output.fileHandleForReading.availableData
            guard !chunk.isEmpty else { throw TestSupportError("dbus-daemon exited before printing its address") }
            line.append(chunk)
        }
        address = String(decoding: line, as: UTF8.self).trimmingCharacters(in: .whitespacesAndNewlines)
    }

    deinit {
        if process.isRunning {
            kill(process.processIdentifier, SIGKILL)
            // Wait until it is gone, leaving the reaping to Foundation: `waitUntilExit()` can
            // wait forever when many tests spawn processes at once.
            var info = siginfo_t()
            while waitid(P_PID, id_t(process.processIdentifier), &info, WEXITED | WNOWAIT) != 0, errno == EINTR {}
        }
    }
}

public struct TestSupportError: Error, CustomStringConvertible {
    public let description: String
    public init(_ description: String) { self.description = description }
}

/// Where the repository, the built products and system tools are.
public enum Paths {
    /// The repository root (this file is `Tests/TestSupport/TestBus.swift`).
    public static let repository: String = {
        URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent().path
    }()

    /// The folder holding the test bundle, which is also where SwiftPM puts the built products.
    public static let products: String = {
        let me = (try? FileManager.default.destinationOfSymbolicLink(atPath: "/proc/self/exe")) ?? CommandLine.arguments[0]
        return URL(fileURLWithPath: me).deletingLastPathComponent().path
    }()

    /// A product of this package (`pasteboardd`, `pbctl`), built by `swift build`.
    public static func product(_ name: String) throws -> String {
        let candidate = products + "/" + name
        guard FileManager.default.isExecutableFile(atPath: candidate) else {
            throw TestSupportError("\(candidate) is missing: run `swift build` before `swift test` (scripts/test does both)")
        }
        return candidate
    }

    /// A program found on PATH or in the usual system folders.
    public static func executable(named name: String) throws -> String {
        let path = ProcessInfo.processInfo.environment["PATH"] ?? ""
        for folder in path.split(separator: ":").map(String.init) + ["/usr/bin", "/bin", "/usr/sbin"] {
            let candidate = folder + "/" + name
            if FileManager.default.isExecutableFile(atPath: candidate) { return candidate }
        }
        throw TestSupportError("\(name) is not installed")
    }

    /// A new empty directory, for a server's state.
    public static func temporaryDirectory(_ label: String = "pasteboardd-test") throws -> String {
        let url = FileManager.default.temporaryDirectory.appendingPathComponent("\(label)-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: url, withIntermediateDirectories: true)
        return url.path
    }
}
