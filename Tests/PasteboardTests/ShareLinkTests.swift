import DBus
import Foundation
import Testing
import TestSupport

@testable import Pasteboard

// ShareLink against a portal peer (PortalPeer.swift) on a private bus, and against a real
// xdg-desktop-portal without a backend: every call and argument is checked, the descriptor's
// bytes compared with the exported item, and the temporary files looked for afterwards.

/// A world's bus without pasteboardd, a portal peer on it, and a folder for the share's
/// temporary files that the test can look into.
private struct ShareWorld {
    let world: World
    let portal: PortalPeer?
    let temporaryRoot: URL

    init(portal interfaces: Set<String>? = [PortalPeer.openURI, PortalPeer.email], answer: PortalAnswer = .response(0)) async throws {
        world = try await World(server: false)
        if let interfaces {
            portal = try await PortalPeer(address: world.address, interfaces: interfaces, answer: answer)
        } else {
            portal = nil
        }
        temporaryRoot = URL(fileURLWithPath: try Paths.temporaryDirectory("pbtest-share"))
    }

    /// A link on the world's bus whose temporary files go to ``temporaryRoot``.
    func link<Item: Transferable>(_ item: Item, subject: String? = nil, message: String? = nil, preview: SharePreview? = nil) -> ShareLink<Item> {
        var link = ShareLink(item: item, subject: subject, message: message, preview: preview, address: world.address)
        link.temporaryRoot = temporaryRoot
        return link
    }

    /// The files the shares left, relative to ``temporaryRoot``.
    var leftFiles: [String] {
        let enumerator = FileManager.default.enumerator(atPath: temporaryRoot.path)
        return (enumerator?.allObjects as? [String] ?? []).sorted()
    }

    /// The calls the portal peer received.
    var calls: [PortalCall] {
        portal?.calls ?? []
    }

    func remove() {
        try? FileManager.default.removeItem(at: temporaryRoot)
    }
}

/// Data under its own type, with the name it suggests for a file.
private struct Notes: Transferable {
    var text: String
    static var transferRepresentation: some TransferRepresentation {
        DataRepresentation(exportedContentType: .utf8PlainText) { notes in Data(notes.text.utf8) }
            .suggestedFileName { notes in "Notes \(notes.text.count).txt" }
    }
}

/// A file on disk, shared as that file.
private struct Recording: Transferable {
    let file: URL
    static var transferRepresentation: some TransferRepresentation {
        FileRepresentation(exportedContentType: .mpeg4Movie) { recording in SentTransferredFile(recording.file) }
    }
}

/// Shareable only when not private; and a representation for this process only.
private struct Diary: Transferable {
    var text: String
    var isPrivate: Bool
    static var transferRepresentation: some TransferRepresentation {
        DataRepresentation(exportedContentType: .utf8PlainText) { diary in Data(diary.text.utf8) }
            .exportingCondition { diary in !diary.isPrivate }
        DataRepresentation(exportedContentType: .json) { diary in Data("{}".utf8) }
            .visibility(.ownProcess)
    }
}

@Suite("ShareLink")
struct ShareLinkTests {
    @Test("the app chooser gets the item as a read-only descriptor of a file named by the preview")
    func appChooser() async throws {
        let share = try await ShareWorld()
        defer { share.remove() }
        let link = share.link("Hello, portal", subject: "Ignored here", preview: SharePreview("Greeting"))
        #expect(link.isAvailable)

        #expect(try await link.share() == .shared)

        let calls = share.calls
        try #require(calls.count == 1)
        let call = calls[0]
        #expect(call.problems == [])
        #expect(call.interface == "org.freedesktop.portal.OpenURI")
        #expect(call.member == "OpenFile")
        #expect(call.signature == "sha{sv}")
        #expect(call.parentWindow == "")
        #expect(Set(call.options.keys) == ["handle_token", "ask", "writable"])
        #expect(call.options["ask"] == .boolean(true))
        #expect(call.options["writable"] == .boolean(false))
        #expect(call.files == [Data("Hello, portal".utf8)])
        #expect(call.readOnly)
        // The handle the caller waited on is the documented one, made from its token.
        let token = try #require(call.options["handle_token"]?.stringValue)
        #expect(call.handle.hasPrefix("/org/freedesktop/portal/desktop/request/"))
        #expect(call.handle.hasSuffix("/" + token))
        // The file stays for the program that opens it, under the preview's title.
        #expect(call.paths.count == 1 && call.paths[0].hasSuffix("/Greeting.txt"))
        #expect(share.leftFiles.filter { $0.hasSuffix("/Greeting.txt") }.count == 1)
    }

    @Test("a parent window is passed on, and suggestedFileName names the file")
    func parentWindowAndFileName() async throws {
        let share = try await ShareWorld()
        defer { share.remove() }
        let link = share.link(Notes(text: "milk, eggs"), preview: SharePreview("Shopping"))

        #expect(try await link.share(via: .appChooser, parentWindow: "x11:3a00007") == .shared)

        let call = try #require(share.calls.first)
        #expect(call.problems == [])
        #expect(call.parentWindow == "x11:3a00007")
        #expect(call.files == [Data("milk, eggs".utf8)])
        #expect(call.paths.first?.hasSuffix("/Notes 10.txt") == true)
    }

    @Test("cancelled by the person: .cancelled, and the temporary file is gone")
    func cancelled() async throws {
        let share = try await ShareWorld(answer: .response(1))
        defer { share.remove() }

        #expect(try await share.link("draft").share() == .cancelled)

        #expect(share.calls.count == 1)
        #expect(share.leftFiles == [])
    }

    @Test("a failure response throws .failed and removes the temporary file")
    func failed() async throws {
        let share = try await ShareWorld(answer: .response(2))
        defer { share.remove() }

        let error = await #expect(throws: ShareError.self) { try await share.link("draft").share() }
        #expect(error?.code == .failed)
        #expect(error?.message.contains("response 2") == true)
        #expect(share.leftFiles == [])
    }

    @Test("a portal that returns another handle is answered on that handle, not the predicted one")
    func anotherHandle() async throws {
        let share = try await ShareWorld(answer: .responseOnAnotherHandle(0))
        defer { share.remove() }

        // The peer answers 2 on the predicted handle, then 0 on the one it returned.
        #expect(try await share.link("legacy").share() == .shared)
        #expect(share.calls.first?.handle.hasPrefix("/org/freedesktop/portal/desktop/request/legacy/") == true)
    }

    /// Cancelled while the dialog is open (`.noResponse`), and while the portal has not yet
    /// replied (`.holdReply`, released after the cancel): either way the request is closed once
    /// its handle is known.
    @Test("cancelling the task closes the portal's request and throws CancellationError", arguments: [PortalAnswer.noResponse, .holdReply])
    func taskCancelled(answer: PortalAnswer) async throws {
        let share = try await ShareWorld(answer: answer)
        defer { share.remove() }
        let link = share.link("never answered")

        let task = Task { try await link.share() }
        let called = await eventually(timeout: .seconds(20)) { share.calls.count == 1 }
        try #require(called, "the portal peer received no call")
        task.cancel()
        share.portal?.releaseHeldReplies()

        await #expect(throws: CancellationError.self) { try await task.value }
        let handle = try #require(share.calls.first?.handle)
        let closed = await eventually(timeout: .seconds(20)) { share.portal?.closedRequests.all == [handle] }
        #expect(closed, "Request.Close was not called on \(handle)")
        #expect(share.leftFiles == [])
    }

    /// A portal that does not answer the call (hung): the cancelled task ends at once, not
    /// when (if ever) the portal answers; should the answer come later, the request is closed.
    @Test("cancelling while the portal has not answered ends the task at once, and closes the request answered later")
    func cancelledWhileThePortalIsHung() async throws {
        let share = try await ShareWorld(answer: .holdReply)
        defer { share.remove() }
        let task = Task { try await share.link("hung portal").share() }
        let finished = Flag()
        Task {
            _ = await task.result
            finished.set()
        }
        let called = await eventually(timeout: .seconds(20)) { share.calls.count == 1 }
        try #require(called, "the portal peer received no call")
        task.cancel()
        // Well short of the 25 s the call would wait for the hung portal, with room for a
        // loaded machine.
        let ended = await eventually(timeout: .seconds(15)) { finished.isSet }
        #expect(ended, "the share went on waiting for a hung portal after its task was cancelled")
        await #expect(throws: CancellationError.self) { try await task.value }

        share.portal?.releaseHeldReplies()
        let handle = try #require(share.calls.first?.handle)
        let closed = await eventually(timeout: .seconds(20)) { share.portal?.closedRequests.all == [handle] }
        #expect(closed, "Request.Close was not called on \(handle)")
        #expect(share.leftFiles == [])
    }

    @Test("email: recipients, subject, body and the item attached as a descriptor, byte-exact")
    func email() async throws {
        let share = try await ShareWorld()
        defer { share.remove() }
        let source = share.temporaryRoot.appendingPathComponent("source")
        try FileManager.default.createDirectory(at: source, withIntermediateDirectories: true)
        let movie = source.appendingPathComponent("holiday.mp4")
        var generator = SystemRandomNumberGenerator()
        let bytes = Data((0..<300_000).map { _ in UInt8.random(in: 0...255, using: &generator) })
        try bytes.write(to: movie)
        let link = share.link(Recording(file: movie), subject: "Our holiday", message: "The video, as promised.")

        let outcome = try await link.share(via: .email(to: ["ada@example.com", "grace@example.com"], cc: ["alan@example.com"]))

        #expect(outcome == .shared)
        let call = try #require(share.calls.first)
        #expect(call.problems == [])
        #expect(call.interface == "org.freedesktop.portal.Email")
        #expect(call.member == "ComposeEmail")
        #expect(call.signature == "sa{sv}")
        #expect(call.parentWindow == "")
        #expect(Set(call.options.keys) == ["handle_token", "addresses", "cc", "subject", "body", "attachment_fds"])
        #expect(call.options["addresses"] == .strings(["ada@example.com", "grace@example.com"]))
        #expect(call.options["cc"] == .strings(["alan@example.com"]))
        #expect(call.options["subject"] == .string("Our holiday"))
        #expect(call.options["body"] == .string("The video, as promised."))
        #expect(call.files == [bytes])
        #expect(call.readOnly)
        // A FileRepresentation's file is shared as it is, and is the exporter's: kept.
        #expect(call.paths == [movie.resolvingSymlinksInPath().path])
        #expect(share.leftFiles == ["source", "source/holiday.mp4"])
    }

    @Test("an email without recipients, subject or message sends only the attachment")
    func bareEmail() async throws {
        let share = try await ShareWorld()
        defer { share.remove() }

        #expect(try await share.link(Data([0, 1, 2, 255])).share(via: .email()) == .shared)

        let call = try #require(share.calls.first)
        #expect(call.problems == [])
        #expect(Set(call.options.keys) == ["handle_token", "attachment_fds"])
        #expect(call.files == [Data([0, 1, 2, 255])])
    }

    @Test("a file URL shares the file it names")
    func fileURL() async throws {
        let share = try await ShareWorld()
        defer { share.remove() }
        let file = share.temporaryRoot.appendingPathComponent("report.pdf")
        try Data("%PDF-1.7".utf8).write(to: file)

        #expect(try await share.link(file).share() == .shared)

        let call = try #require(share.calls.first)
        #expect(call.files == [Data("%PDF-1.7".utf8)])
        #expect(call.paths == [file.resolvingSymlinksInPath().path])
    }

    @Test("a web link goes to OpenURI.OpenURI as itself, and into an email's body after the message")
    func webLink() async throws {
        let share = try await ShareWorld()
        defer { share.remove() }
        let url = try #require(URL(string: "https://example.com/recipes/42?lang=en"))

        #expect(try await share.link(url).share() == .shared)
        #expect(try await share.link(url, subject: "Pancakes", message: "Try these:").share(via: .email(to: ["ada@example.com"])) == .shared)

        let calls = share.calls
        try #require(calls.count == 2)
        #expect(calls.map(\.problems) == [[], []])
        #expect(calls[0].interface == "org.freedesktop.portal.OpenURI")
        #expect(calls[0].member == "OpenURI")
        #expect(calls[0].signature == "ssa{sv}")
        #expect(calls[0].uri == "https://example.com/recipes/42?lang=en")
        #expect(Set(calls[0].options.keys) == ["handle_token", "ask"])
        #expect(calls[0].options["ask"] == .boolean(true))
        #expect(calls[1].member == "ComposeEmail")
        #expect(Set(calls[1].options.keys) == ["handle_token", "addresses", "subject", "body"])
        #expect(calls[1].options["body"] == .string("Try these:\n\nhttps://example.com/recipes/42?lang=en"))
        #expect(calls[1].files == [])
        #expect(share.leftFiles == [])
    }

    @Test("an item whose exportingCondition refuses is not offered, and the portal is not called")
    func refusedByExportingCondition() async throws {
        let share = try await ShareWorld()
        defer { share.remove() }
        let link = share.link(Diary(text: "dear diary", isPrivate: true))

        // The JSON representation is .ownProcess, so it is not shared either.
        #expect(!link.isAvailable)
        let error = await #expect(throws: ShareError.self) { try await link.share() }
        #expect(error?.code == .notShareable)
        #expect(error?.message.contains("exportingCondition") == true)
        #expect(share.calls.isEmpty)
        #expect(share.leftFiles == [])

        let open = share.link(Diary(text: "dear diary", isPrivate: false))
        #expect(open.isAvailable)
        #expect(try await open.share() == .shared)
        #expect(share.calls.first?.files == [Data("dear diary".utf8)])
    }

    @Test("no portal on the bus: .portalMissing naming what to install, nothing left behind")
    func noPortal() async throws {
        let share = try await ShareWorld(portal: nil)
        defer { share.remove() }

        let error = await #expect(throws: ShareError.self) { try await share.link("hello").share() }
        #expect(error?.code == .portalMissing)
        #expect(error?.message.contains("org.freedesktop.portal.Desktop") == true)
        #expect(error?.message.contains("Install xdg-desktop-portal and a backend") == true)
        #expect(share.leftFiles == [])
    }

    @Test("a portal without the Email interface: .portalMissing naming a backend")
    func noEmailInterface() async throws {
        let share = try await ShareWorld(portal: [PortalPeer.openURI])
        defer { share.remove() }

        let error = await #expect(throws: ShareError.self) { try await share.link("hello").share(via: .email()) }
        #expect(error?.code == .portalMissing)
        #expect(error?.message.contains("org.freedesktop.portal.Email.ComposeEmail") == true)
        #expect(error?.message.contains("xdg-desktop-portal-gtk") == true)
        #expect(share.calls.isEmpty)
        #expect(share.leftFiles == [])
    }

    @Test("no bus at all: .portalMissing")
    func noBus() async throws {
        let root = URL(fileURLWithPath: try Paths.temporaryDirectory("pbtest-share"))
        defer { try? FileManager.default.removeItem(at: root) }
        var link = ShareLink(item: "hello", address: "unix:path=" + root.appendingPathComponent("no-bus").path)
        link.temporaryRoot = root

        let error = await #expect(throws: ShareError.self) { try await link.share() }
        #expect(error?.code == .portalMissing)
        #expect(try FileManager.default.contentsOfDirectory(atPath: root.path) == [])
    }

    @Test("file names are one path component: the suggestion, else the title with the type's extension")
    func fileNames() {
        #expect(ShareFile.fileName(suggested: "Notes.txt", preview: SharePreview("Ignored"), type: .utf8PlainText) == "Notes.txt")
        #expect(ShareFile.fileName(suggested: "../etc/passwd", preview: nil, type: .utf8PlainText) == "..-etc-passwd")
        #expect(ShareFile.fileName(suggested: nil, preview: SharePreview("Q3/Q4 plan"), type: .utf8PlainText) == "Q3-Q4 plan.txt")
        #expect(ShareFile.fileName(suggested: nil, preview: SharePreview("plan.TXT"), type: .utf8PlainText) == "plan.TXT")
        #expect(ShareFile.fileName(suggested: " ", preview: SharePreview(".."), type: .utf8PlainText) == "Shared item.txt")
        #expect(ShareFile.fileName(suggested: nil, preview: nil, type: .png) == "Shared item.png")
        // A declared type without an extension of its own takes its nearest supertype's; one
        // that conforms to nothing with an extension gets none.
        let todo = UTType(exportedAs: "com.example.share-todo", conformingTo: .json)
        #expect(ShareFile.fileName(suggested: nil, preview: SharePreview("Groceries"), type: todo) == "Groceries.json")
        let note = UTType(exportedAs: "com.example.share-note", conformingTo: UTType(exportedAs: "com.example.share-rich", conformingTo: .html))
        #expect(ShareFile.fileName(suggested: nil, preview: nil, type: note) == "Shared item.html")
        #expect(ShareFile.fileName(suggested: nil, preview: nil, type: UTType(exportedAs: "com.example.share-opaque")) == "Shared item")
    }

    @Test("the real xdg-desktop-portal without a backend has no OpenURI: .portalMissing")
    func realPortalWithoutBackend() async throws {
        let share = try await ShareWorld(portal: nil)
        defer { share.remove() }
        let executable = try RealPortal.executable()
        // An empty folder of backends: a backend installed on this machine is never loaded.
        let backends = share.temporaryRoot.appendingPathComponent("no-backends").path
        try FileManager.default.createDirectory(atPath: backends, withIntermediateDirectories: true)
        let pid = try spawnDetached(
            executable, [], environment: ["DBUS_SESSION_BUS_ADDRESS": share.world.address, "XDG_DESKTOP_PORTAL_DIR": backends],
            newProcessGroup: true)
        defer {
            kill(pid, SIGKILL)
            _ = reap(pid)
        }
        let watcher = try Connection.connect(address: share.world.address)
        defer { watcher.close() }
        let started = try await eventually(timeout: .seconds(20)) { try await watcher.nameOwner(DesktopPortal.busName) != nil }
        try #require(started, "\(executable) did not take \(DesktopPortal.busName) within 20 s")

        let error = await #expect(throws: ShareError.self) { try await share.link("hello").share() }
        #expect(error?.code == .portalMissing)
        #expect(error?.message.contains("org.freedesktop.portal.OpenURI.OpenFile") == true)
        #expect(share.leftFiles == ["no-backends"])
    }
}

/// Where distributions install xdg-desktop-portal (it is not on PATH).
enum RealPortal {
    static func executable() throws -> String {
        for candidate in ["/usr/libexec/xdg-desktop-portal", "/usr/lib/xdg-desktop-portal", "/usr/lib/xdg-desktop-portal/xdg-desktop-portal"]
        where FileManager.default.isExecutableFile(atPath: candidate) {
            return candidate
        }
        throw TestSupportError("xdg-desktop-portal is not installed: run scripts/install-deps")
    }
}
