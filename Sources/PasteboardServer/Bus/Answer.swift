import DBus
import PasteboardModel
import Synchronization

/// A call being answered, and where its answer goes: out at once, or held in the ``Outbox`` of
/// its batch until the batch's changes are committed.
struct Answer: Sendable {
    let call: MethodCall
    /// The batch's outbox, for a call answered on the service queue; nil on the bus thread.
    let outbox: Outbox?

    var sender: String { call.sender }

    /// Sends the method return, then `followUps` (the signals the call caused).
    func reply(_ values: [DBusValue] = [], followedBy followUps: [Message] = []) {
        if let outbox, outbox.hold(call, .reply(values, followUps)) { return }
        call.reply(values, followedBy: followUps)
    }

    /// Sends the error reply of the contract for `error`.
    func fail(_ error: PasteboardError) {
        let failure = DBusError(name: error.code.dbusErrorName, message: error.message)
        if let outbox, outbox.hold(call, .failure(failure)) { return }
        call.fail(failure)
    }
}

/// The answers of one batch of queued calls, held until the batch is committed, so that no
/// client hears of a change (by its reply, or by `Changed`) before it is on disk.
final class Outbox: Sendable {
    enum Held: Sendable {
        case reply([DBusValue], [Message])
        case failure(DBusError)
    }

    private let state = Mutex<(open: Bool, held: [(MethodCall, Held)])>((true, []))

    /// Keeps the answer while the batch is open; false once it has been released (the caller
    /// then sends it itself: a late answer, such as a blob read off the queue).
    func hold(_ call: MethodCall, _ answer: Held) -> Bool {
        state.withLock { state in
            guard state.open else { return false }
            state.held.append((call, answer))
            return true
        }
    }

    /// Sends everything held, in order. When the commit failed, none of the batch happened:
    /// every answer becomes that failure, and no signal goes out.
    func release(failure: PasteboardError?) {
        let held = state.withLock { state in
            state.open = false
            defer { state.held = [] }
            return state.held
        }
        let error = failure.map { DBusError(name: $0.code.dbusErrorName, message: $0.message) }
        for (call, answer) in held {
            switch (answer, error) {
            case (.reply(let values, let followUps), nil): call.reply(values, followedBy: followUps)
            case (.reply, let error?): call.fail(error)
            case (.failure(let failure), _): call.fail(failure)
            }
        }
    }
}
