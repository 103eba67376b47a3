import DBus
import Foundation
import Synchronization

/// One request to xdg-desktop-portal (`org.freedesktop.portal.Desktop` on the session bus):
/// a method call that answers at once with a request handle, and the outcome that comes later
/// as the `org.freedesktop.portal.Request.Response` signal on that handle, once the person has
/// picked an app or composed the mail.
///
/// Every request gets a connection of its own: the handle is made from the connection's unique
/// name, shares are rare, and closing the connection afterwards leaves no subscription behind.
final class DesktopPortal: Sendable {
    static let busName = "org.freedesktop.portal.Desktop"
    static let objectPath = "/org/freedesktop/portal/desktop"
    static let requestInterface = "org.freedesktop.portal.Request"
    static let openURIInterface = "org.freedesktop.portal.OpenURI"
    static let emailInterface = "org.freedesktop.portal.Email"

    private let connection: Connection
    /// Whether a request's call is in flight, and whether ``close()`` was asked meanwhile: the
    /// connection then stays open until the call has ended, so that a request whose handle
    /// comes after its task was cancelled can still be closed on it.
    private let lifetime = Mutex<(callPending: Bool, closeAsked: Bool)>((false, false))

    /// Connects to the bus at `address`, or to the session bus when it is nil.
    ///
    /// - Throws: ``ShareError/Code/portalMissing`` when there is no bus to find a portal on.
    init(address: String?) throws(ShareError) {
        do {
            connection = try Connection.connect(address: address)
            // Answers and `Response`s are then taken only from the portal (see
            // `Connection.followOwner(of:)`), not from another client in its place.
            connection.followOwner(of: Self.busName)
        } catch {
            throw ShareError(
                .portalMissing,
                "There is no session bus to reach the desktop portal on (\(error.message)). Sharing needs a desktop "
                    + "session running xdg-desktop-portal with a backend: " + Self.backends + ".")
        }
    }

    /// Closes the connection, once a request's call in flight has ended (see ``lifetime``); a
    /// request still waiting for its `Response` ends as failed.
    func close() {
        let now = lifetime.withLock { state in
            state.closeAsked = true
            return !state.callPending
        }
        if now { connection.close() }
    }

    /// A request's call has ended: closes the connection if that was asked meanwhile.
    private func endCall() {
        let asked = lifetime.withLock { state in
            state.callPending = false
            return state.closeAsked
        }
        if asked { connection.close() }
    }

    /// Calls `method` of `interface` on the portal with `arguments` followed by the options
    /// (plus a fresh `handle_token`), and waits for the request's `Response`.
    ///
    /// The subscription is made before the call, as the portal's documentation asks, so that
    /// an answer sent at once is not missed. It takes every `Response` the portal sends this
    /// connection rather than only those on the handle predicted from the token
    /// (`/org/freedesktop/portal/desktop/request/SENDER/TOKEN`): portals before 0.9 return
    /// another handle, and this way the answer on that one is not missed either. Only the
    /// returned handle's answer counts.
    ///
    /// When the task is cancelled, the request is closed once its handle is known
    /// (`Request.Close` ends the dialog) and `CancellationError` is thrown.
    ///
    /// - Returns: `.shared` for the response 0, `.cancelled` for 1.
    /// - Throws: ``ShareError/Code/portalMissing`` when nobody owns the portal's name or it
    ///   lacks `interface`; ``ShareError/Code/failed`` for any other error or response.
    func request(
        interface: String, method: String, arguments: [DBusValue], options: [(String, DBusValue)]
    ) async throws -> ShareOutcome {
        let token = "pasteboard_" + UUID().uuidString.replacing("-", with: "")
        let rule = MatchRule(sender: Self.busName, interface: Self.requestInterface, member: "Response")
        let responses: AsyncStream<Message>
        do {
            responses = try await connection.signals(matching: rule)
        } catch {
            throw ShareError(.failed, "Could not subscribe to the desktop portal's answers: \(error.message)")
        }
        let optionEntries = ([("handle_token", DBusValue.string(token))] + options).map { (DBusValue.string($0.0), DBusValue.variant($0.1)) }
        let handle: String
        do {
            // Not cancelled with the task: a call cancelled in flight would leave a dialog
            // open whose handle nobody knows. The task stops waiting for it at once, and the
            // handle, when it comes, is closed. A portal answers the call at once (the person's
            // choice comes later, as `Response`): one that does not within
            // ``callTimeout`` is hung.
            lifetime.withLock { $0.callPending = true }
            let call = Task { [connection] () async throws(DBusError) -> [DBusValue] in
                try await connection.call(
                    destination: Self.busName, path: Self.objectPath, interface: interface, method: method,
                    arguments: arguments + [.dictionary(key: "s", value: "v", optionEntries)], timeout: Self.callTimeout)
            }
            let reply: [DBusValue]
            do {
                reply = try await Self.value(of: call) { [self] result in
                    if case .success(let reply) = result, case .objectPath(let path)? = reply.first { closeRequest(path) }
                    endCall()
                }
            } catch is CancellationError {
                // The call goes on; its end is handled by the closure above.
                throw CancellationError()
            } catch {
                endCall()
                throw error
            }
            endCall()
            guard case .objectPath(let path)? = reply.first else {
                throw ShareError(.failed, "The desktop portal answered \(interface).\(method) without a request handle.")
            }
            handle = path
        } catch let error as DBusError {
            if error.name == DBusError.noReplyName {
                throw ShareError(
                    .failed,
                    "The desktop portal did not answer \(interface).\(method) within \(Self.callTimeout); it may be hung. "
                        + "Restart it (systemctl --user restart xdg-desktop-portal) and share again.")
            }
            throw Self.convert(error, interface: interface, method: method)
        }
        // The stream ends when the task is cancelled, or the connection lost.
        for await response in responses where !Task.isCancelled && response.path == handle {
            let values = response.arguments()
            switch values.first?.uint32Value {
            case 0: return .shared
            case 1: return .cancelled
            case let code:
                throw ShareError(
                    .failed,
                    "The desktop portal could not complete \(interface).\(method) (response \(code.map(String.init) ?? "missing")). "
                        + "Its log says why: journalctl --user -u xdg-desktop-portal.")
            }
        }
        if Task.isCancelled {
            closeRequest(handle)
            throw CancellationError()
        }
        throw ShareError(.failed, "The connection to the desktop portal was lost before it answered \(interface).\(method).")
    }

    /// How long the portal may take to answer a request's call (with its handle, not the
    /// person's choice): D-Bus's own default.
    static let callTimeout = Duration.seconds(25)

    /// The value of `call`, or `CancellationError` as soon as the task is cancelled. The call
    /// itself goes on: when it ends after the task stopped waiting, `abandoned` gets its result
    /// (to close what it opened).
    static func value<T: Sendable>(
        of call: Task<T, any Error>, abandoned: @escaping @Sendable (Result<T, any Error>) -> Void
    ) async throws -> T {
        let waiter = Waiter<T>()
        return try await withTaskCancellationHandler {
            try await withCheckedThrowingContinuation { continuation in
                waiter.wait(continuation)
                Task {
                    let result = await call.result
                    if !waiter.resume(with: result) { abandoned(result) }
                }
            }
        } onCancel: {
            _ = waiter.resume(with: .failure(CancellationError()))
        }
    }

    /// Who waits for a value, resumed once: by the value or by a cancellation, whichever comes
    /// first (a cancellation may come before the wait starts).
    private final class Waiter<T: Sendable>: Sendable {
        private let state = Mutex<(continuation: CheckedContinuation<T, any Error>?, early: Result<T, any Error>?, done: Bool)>((nil, nil, false))

        func wait(_ continuation: CheckedContinuation<T, any Error>) {
            let early: Result<T, any Error>? = state.withLock { state in
                guard let early = state.early else {
                    state.continuation = continuation
                    return nil
                }
                return early
            }
            if let early { continuation.resume(with: early) }
        }

        /// Resumes the waiter with `result`; false when it had been resumed already.
        func resume(with result: Result<T, any Error>) -> Bool {
            let (continuation, first): (CheckedContinuation<T, any Error>?, Bool) = state.withLock { state in
                guard !state.done else { return (nil, false) }
                state.done = true
                guard let continuation = state.continuation else {
                    state.early = result
                    return (nil, true)
                }
                state.continuation = nil
                return (continuation, true)
            }
            continuation?.resume(with: result)
            return first
        }
    }

    /// Ends the request's dialog; the portal sends no `Response` then, so nobody waits for one.
    private func closeRequest(_ handle: String) {
        guard let close = try? Message.methodCall(
            destination: Self.busName, path: handle, interface: Self.requestInterface, method: "Close", noReply: true)
        else { return }
        connection.send([close])
    }

    /// The packages of the portal backends that provide OpenURI and Email, for the errors.
    static let backends = "xdg-desktop-portal-gnome, xdg-desktop-portal-kde or xdg-desktop-portal-gtk"

    /// An error reply, as something to act on: a missing portal or interface names what to
    /// install.
    static func convert(_ error: DBusError, interface: String, method: String) -> ShareError {
        switch error.name {
        case DBusError.serviceUnknownName, DBusError.nameHasNoOwnerName:
            ShareError(
                .portalMissing,
                "No desktop portal on the session bus: nobody owns \(busName) and none could be started. Install "
                    + "xdg-desktop-portal and a backend for your desktop (" + backends + "), then log in again.")
        case "org.freedesktop.DBus.Error.UnknownMethod", "org.freedesktop.DBus.Error.UnknownInterface",
            "org.freedesktop.DBus.Error.UnknownObject":
            ShareError(
                .portalMissing,
                "The desktop portal has no \(interface).\(method): xdg-desktop-portal provides it only with a backend "
                    + "that implements it. Install one for your desktop (" + backends + "), then log in again. "
                    + "(\(error.message))")
        default:
            ShareError(.failed, "The desktop portal refused \(interface).\(method): \(error).")
        }
    }
}
