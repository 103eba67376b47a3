import Foundation
import Testing

@testable import PasteboardModel

/// What tells the server that the MIME database changed: inotify, and the timestamps that stand
/// in for it when no inotify instance is left. Both must see a change made before the check, at
/// once, and nothing else.
@Suite("MIME database change detection")
struct MIMEChangeDetectorTests {
    static func detectors() -> [any MIMEChangeDetector] {
        let inotify: (any MIMEChangeDetector)? = MIMEDirectoryMonitor()
        return [inotify, MIMEFolderTimestamps()].compactMap { $0 }
    }

    @Test("a folder created later, a package written, a file renamed in: each seen once; nothing else")
    func changes() throws {
        for detector in Self.detectors() {
            let root = FileManager.default.temporaryDirectory.appendingPathComponent("pasteboard-watch-\(UUID().uuidString)").path
            defer { try? FileManager.default.removeItem(atPath: root) }
            try FileManager.default.createDirectory(atPath: root + "/data", withIntermediateDirectories: true)
            detector.watch([root + "/data"])
            #expect(!detector.hasChanged(), "\(type(of: detector))")

            try Data().write(to: URL(fileURLWithPath: root + "/data/unrelated"))
            #expect(!detector.hasChanged(), "a file beside the MIME folder: \(type(of: detector))")

            try FileManager.default.createDirectory(atPath: root + "/data/mime/packages", withIntermediateDirectories: true)
            #expect(detector.hasChanged(), "the MIME folder appeared: \(type(of: detector))")
            detector.watch([root + "/data"])
            #expect(!detector.hasChanged(), "\(type(of: detector))")

            try Data("x".utf8).write(to: URL(fileURLWithPath: root + "/data/mime/packages/com.example.todo.xml"))
            #expect(detector.hasChanged(), "a package written: \(type(of: detector))")
            #expect(!detector.hasChanged(), "seen once: \(type(of: detector))")

            try Data("a b".utf8).write(to: URL(fileURLWithPath: root + "/data/mime/subclasses.new"))
            _ = detector.hasChanged()
            try FileManager.default.moveItem(atPath: root + "/data/mime/subclasses.new", toPath: root + "/data/mime/subclasses")
            #expect(detector.hasChanged(), "a file renamed in: \(type(of: detector))")

            try Data().write(to: URL(fileURLWithPath: root + "/data/unrelated-too"))
            #expect(!detector.hasChanged(), "the ancestor is no longer watched: \(type(of: detector))")
        }
    }
}
