import DBus
@testable import DesktopClipboard
import Foundation
import Testing
import TestSupport

/// A test's desktop: a private Xvfb, and a ``PbctlHarness`` whose server bridges `general` and
/// `primary` to it, with the X11 clipboard tools (`xclip`, `xsel`) as the other apps.
final class X11World: Sendable {
    let x11: VirtualX11
    let world: PbctlHarness

    /// - Parameter limits: `KEY=VALUE` settings for the server's `--limit`.
    init(limits: [String] = []) async throws {
        x11 = try await VirtualX11()
        world = try await PbctlHarness(limits: limits, desktop: DesktopDisplay(mode: "x11", environment: x11.environment))
        try await waitUntilBridged()
    }

    /// Waits until the server's bridge has joined the display (again).
    func waitUntilBridged() async throws {
        try await world.waitUntilBridged(to: "X11")
    }

    /// Runs `xclip ARGUMENTS...` on the test's display to completion (`-o` reads).
    func xclip(_ arguments: String...) async throws -> Outcome {
        try await runProgram(try Self.tool("xclip", package: "xclip"), arguments, environment: x11.environment, timeout: .seconds(60))
    }

    /// Runs `xsel ARGUMENTS...` on the test's display to completion.
    func xsel(_ arguments: String...) async throws -> Outcome {
        try await runProgram(try Self.tool("xsel", package: "xsel"), arguments, environment: x11.environment)
    }

    /// Copies `data` as `type` with an `xclip` that stays in the foreground (killed when the
    /// returned process is), and waits until the copy is the pasteboard's change.
    ///
    /// - Returns: the copying app, and the change count its copy became.
    func copyWithXclip(_ data: Data, type: String, selection: String = "clipboard") async throws -> (app: ChildProcess, count: UInt64) {
        let name = selection == "clipboard" ? "general" : "primary"
        let before = try await world.changeCount(name)
        let file = try temporaryFile(data, "x11-copy")
        defer { try? FileManager.default.removeItem(atPath: file) }
        let app = try ChildProcess(try Self.tool("xclip", package: "xclip"), ["-quiet", "-selection", selection, "-t", type, "-i", file], environment: x11.environment)
        app.send(Data())
        let count = try await world.waitForCount(of: name, above: before)
        return (app, count)
    }

    /// An app of the test's own (the project's X11 client, which can misbehave as the test
    /// says) that takes the clipboard offering `types`, their data opened by `open`; waits
    /// until its copy is the pasteboard's change. Closed by the caller.
    func appOwningTheClipboard(
        _ types: [String], open: @escaping @Sendable (String) async throws -> UnixFileDescriptor
    ) async throws -> X11Clipboard {
        let before = try await world.changeCount()
        let app = try X11Clipboard.connect(display: x11.display, delegate: IgnoringDelegate())
        app.own(.clipboard, DesktopOffer(types: types, open: open))
        _ = try await world.waitForCount(above: before)
        return app
    }

    /// Waits until the desktop's `selection` offers `type` (pasteboardd took it after a write),
    /// and returns the targets then listed.
    @discardableResult
    func waitUntilOffered(_ type: String, selection: String = "clipboard") async throws -> [String] {
        let deadline = ContinuousClock.now + .seconds(30)
        while true {
            let targets = try await xclip("-selection", selection, "-o", "-t", "TARGETS")
            let listed = targets.out.split(separator: "\n").map(String.init)
            if targets.status == 0, listed.contains(type) { return listed }
            guard ContinuousClock.now < deadline else { throw TestSupportError("the \(selection) never offered \(type); it offers \(listed) (\(targets.err))") }
            try await Task.sleep(for: .milliseconds(20))
        }
    }

    static func tool(_ name: String, package: String) throws -> String {
        do {
            return try Paths.executable(named: name)
        } catch {
            throw TestSupportError("\(name) is not installed: the desktop bridge's tests need the \(package) package (scripts/install-deps installs it)")
        }
    }
}

/// A small valid PNG (a 1×1 image) followed by `extra` random bytes in a private chunk, so that
/// each test's image differs.
func pngBytes(extra: Int) -> Data {
    var png = Data([0x89, 0x50, 0x4E, 0x47, 0x0D, 0x0A, 0x1A, 0x0A])
    func chunk(_ type: String, _ body: Data) {
        withUnsafeBytes(of: UInt32(body.count).bigEndian) { png.append(contentsOf: $0) }
        let typed = Data(type.utf8) + body
        png.append(typed)
        withUnsafeBytes(of: crc32(typed).bigEndian) { png.append(contentsOf: $0) }
    }
    chunk("IHDR", Data([0, 0, 0, 1, 0, 0, 0, 1, 8, 0, 0, 0, 0]))
    chunk("prVt", randomBytes(extra))
    chunk("IDAT", Data([0x78, 0x9C, 0x63, 0x60, 0x00, 0x00, 0x00, 0x02, 0x00, 0x01]))
    chunk("IEND", Data())
    return png
}

private func crc32(_ data: Data) -> UInt32 {
    var crc: UInt32 = 0xFFFF_FFFF
    for byte in data {
        crc ^= UInt32(byte)
        for _ in 0..<8 { crc = crc & 1 == 1 ? (crc >> 1) ^ 0xEDB8_8320 : crc >> 1 }
    }
    return ~crc
}
