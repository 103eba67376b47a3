import DBus
import Foundation
import Synchronization
import TestSupport

@testable import Pasteboard

// A stand-in for xdg-desktop-portal, for the sharing tests: a real second connection on the
// test's private bus that owns `org.freedesktop.portal.Desktop` and exports the OpenURI and
// Email interfaces at `/org/freedesktop/portal/desktop`. It checks and records every call
// (the descriptor's bytes are read while the call is answered), replies with the request
// handle the portal documentation prescribes, and then emits `Request.Response` on it.

/// What the peer does with the next calls.
enum PortalAnswer: Sendable {
    /// Replies with the handle `/org/freedesktop/portal/desktop/request/SENDER/TOKEN`, then
    /// emits `Response` with this code on it (0 success, 1 cancelled, 2 other).
    case response(UInt32)
    /// As a portal before 0.9: replies with another handle and answers there with this code,
    /// after a `Response` of 2 on the predicted handle, which the caller must not take.
    case responseOnAnotherHandle(UInt32)
    /// Replies with the handle and exports a request object there, but never answers: as a
    /// dialog the person has not finished with. `Request.Close` on it is recorded.
    case noResponse
    /// As ``noResponse``, but the reply too waits, until ``PortalPeer/releaseHeldReplies()``.
    case holdReply
}

/// One call the peer received, decoded and checked.
struct PortalCall: Sendable {
    let interface: String
    let member: String
    let signature: String
    let parentWindow: String?
    /// The `uri` of OpenURI.OpenURI.
    let uri: String?
    /// The options, each value out of its variant.
    let options: [String: DBusValue]
    /// The bytes of each descriptor passed (`fd` of OpenFile, `attachment_fds` of ComposeEmail).
    let files: [Data]
    /// The paths the descriptors are open on (as the portal finds them, from /proc).
    let paths: [String]
    /// Whether every descriptor was open read-only.
    let readOnly: Bool
    /// The handle replied.
    let handle: String
    /// What the portal documentation would reject; empty for a correct call.
    let problems: [String]
}

final class PortalPeer: DBusObject {
    static let openURI = DesktopPortal.openURIInterface
    static let email = DesktopPortal.emailInterface

    let connection: Connection
    let interfaces: Set<String>
    private let state: Mutex<(answer: PortalAnswer, calls: [PortalCall])>
    private let nextLegacyHandle = Atomic<Int>(1)
    /// Replies withheld by ``PortalAnswer/holdReply``.
    private let heldReplies = Mutex<[(call: MethodCall, handle: String)]>([])

    /// Sends the replies withheld so far.
    func releaseHeldReplies() {
        for held in heldReplies.withLock({ held in defer { held = [] }; return held }) {
            held.call.reply([.objectPath(held.handle)])
        }
    }

    /// The request handles `Request.Close` was called on.
    let closedRequests = Collected<String>()

    /// Owns the portal's name on the bus at `address` and exports `interfaces`.
    init(address: String, interfaces: Set<String> = [openURI, email], answer: PortalAnswer = .response(0)) async throws {
        connection = try Connection.connect(address: address)
        self.interfaces = interfaces
        state = Mutex((answer, []))
        try connection.export(self, at: DesktopPortal.objectPath)
        guard try await connection.requestName(DesktopPortal.busName) == .primaryOwner else {
            throw TestSupportError("could not own \(DesktopPortal.busName) on the test bus")
        }
    }

    deinit {
        connection.close()
    }

    /// Every call received so far, in order.
    var calls: [PortalCall] {
        state.withLock { $0.calls }
    }

    /// Sets what the next calls get.
    func answer(_ answer: PortalAnswer) {
        state.withLock { $0.answer = answer }
    }

    /// The handle xdg-desktop-portal 0.9 and later makes from the caller and its token.
    static func requestPath(sender: String, token: String) -> String {
        let name = sender.dropFirst(sender.hasPrefix(":") ? 1 : 0).replacing(".", with: "_")
        return "/org/freedesktop/portal/desktop/request/\(name)/\(token)"
    }

    // MARK: DBusObject

    var introspectionXML: String {
        var xml = "<node>\n"
        for interface in interfaces.sorted() { xml += "  <interface name=\"\(interface)\"/>\n" }
        return xml + "</node>\n"
    }

    func properties(of interface: String) async throws(DBusError) -> [(name: String, value: DBusValue)] {
        guard interfaces.contains(interface) else { throw .unknownInterface("no interface \(interface)") }
        return [("version", .uint32(interface == Self.email ? 4 : 5))]
    }

    func handle(_ call: MethodCall) {
        guard let interface = call.interface, interfaces.contains(interface) else {
            // What GDBus answers, as the real portal does without a backend for the interface.
            return call.fail(.unknownMethod("No such interface “\(call.interface ?? "")” on object at path \(call.path)"))
        }
        var problems: [String] = []
        let signatures = interface == Self.email ? ["ComposeEmail": "sa{sv}"] : ["OpenFile": "sha{sv}", "OpenURI": "ssa{sv}"]
        guard let expected = signatures[call.member] else {
            return call.fail(.unknownMethod("this peer answers only \(signatures.keys.sorted()) of \(interface), not \(call.member)"))
        }
        if call.signature != expected { problems.append("signature \(call.signature), not \(expected)") }

        let arguments = call.arguments
        let parentWindow = arguments.first?.stringValue
        var options: [String: DBusValue] = [:]
        for (key, value) in arguments.last?.dictionaryEntries ?? [] {
            guard let key = key.stringValue, let inner = value.variantValue else {
                problems.append("an option that is not a string key with a variant value")
                continue
            }
            options[key] = inner
        }

        var descriptors: [UnixFileDescriptor] = []
        if call.member == "OpenURI" {
            if arguments.count < 2 || arguments[1].stringValue == nil { problems.append("no uri") }
        } else if interface == Self.openURI {
            if let fd = arguments.dropFirst().first?.fileDescriptorValue { descriptors.append(fd) } else { problems.append("no fd") }
        } else if let attachments = options["attachment_fds"] {
            if case .array("h", let elements) = attachments {
                descriptors = elements.compactMap(\.fileDescriptorValue)
            } else {
                problems.append("attachment_fds is \(attachments.signature), not ah")
            }
        }
        problems += Self.typeProblems(options, interface: interface)

        let token = options["handle_token"]?.stringValue ?? ""
        if token.isEmpty || !token.allSatisfy({ $0.isASCII && ($0.isLetter || $0.isNumber || $0 == "_") }) {
            problems.append("handle_token '\(token)' is not a valid object path element")
        }
        let predicted = Self.requestPath(sender: call.sender, token: token)

        let answer = state.withLock { $0.answer }
        var handle = predicted
        var signals: [Message] = []
        switch answer {
        case .response(let code):
            signals.append(Self.response(code, on: predicted))
        case .responseOnAnotherHandle(let code):
            handle = "/org/freedesktop/portal/desktop/request/legacy/\(nextLegacyHandle.wrappingAdd(1, ordering: .relaxed).oldValue)"
            signals.append(Self.response(2, on: predicted))
            signals.append(Self.response(code, on: handle))
        case .noResponse, .holdReply:
            try? connection.export(PendingRequest(closed: closedRequests), at: predicted)
        }

        let record = PortalCall(
            interface: interface, member: call.member, signature: call.signature, parentWindow: parentWindow,
            uri: call.member == "OpenURI" ? arguments.dropFirst().first?.stringValue : nil, options: options, files: descriptors.map(Self.contents), paths: descriptors.map(Self.path),
            readOnly: descriptors.allSatisfy { fcntl($0.rawValue, F_GETFL) & O_ACCMODE == O_RDONLY },
            handle: handle, problems: problems)
        state.withLock { $0.calls.append(record) }
        if case .holdReply = answer {
            heldReplies.withLock { $0.append((call, handle)) }
            return
        }
        call.reply([.objectPath(handle)], followedBy: signals)
    }

    /// The option types the portal documentation gives, for the options present.
    private static func typeProblems(_ options: [String: DBusValue], interface: String) -> [String] {
        let types: [String: String] =
            interface == email
            ? ["handle_token": "s", "address": "s", "addresses": "as", "cc": "as", "bcc": "as", "subject": "s", "body": "s",
               "attachment_fds": "ah", "activation_token": "s"]
            : ["handle_token": "s", "ask": "b", "writable": "b", "activation_token": "s"]
        return options.compactMap { key, value in
            guard let type = types[key] else { return "unknown option \(key)" }
            return value.signature == type ? nil : "option \(key) is \(value.signature), not \(type)"
        }
    }

    private static func response(_ code: UInt32, on path: String) -> Message {
        // swift-format-ignore
        try! Message.signal(
            path: path, interface: DesktopPortal.requestInterface, name: "Response",
            arguments: [.uint32(code), .dictionary(key: "s", value: "v", [])])
    }

    /// The whole file behind `fd`, read from the start without moving its offset.
    private static func contents(_ fd: UnixFileDescriptor) -> Data {
        var data = Data()
        var buffer = [UInt8](repeating: 0, count: 65536)
        var offset: off_t = 0
        while true {
            let count = pread(fd.rawValue, &buffer, buffer.count, offset)
            guard count > 0 else { break }
            data.append(contentsOf: buffer[..<count])
            offset += off_t(count)
        }
        return data
    }

    private static func path(_ fd: UnixFileDescriptor) -> String {
        (try? FileManager.default.destinationOfSymbolicLink(atPath: "/proc/self/fd/\(fd.rawValue)")) ?? ""
    }
}

/// A request the peer leaves open; records `org.freedesktop.portal.Request.Close`.
private final class PendingRequest: DBusObject {
    private let closed: Collected<String>

    init(closed: Collected<String>) {
        self.closed = closed
    }

    var introspectionXML: String {
        "<node>\n  <interface name=\"\(DesktopPortal.requestInterface)\"/>\n</node>\n"
    }

    func properties(of interface: String) async throws(DBusError) -> [(name: String, value: DBusValue)] {
        throw .unknownInterface("no properties")
    }

    func handle(_ call: MethodCall) {
        guard call.interface == DesktopPortal.requestInterface, call.member == "Close", call.signature.isEmpty else {
            return call.fail(.unknownMethod("only \(DesktopPortal.requestInterface).Close"))
        }
        closed.append(call.path)
        call.reply()
    }
}
