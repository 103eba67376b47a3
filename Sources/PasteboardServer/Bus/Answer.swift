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

    /// Sends the method return, then `followUps` (the signals the call caused), made once the
    /// reply is on its way: building a signal should not hold up the reply.
    func reply(_ values: [DBusValue] = [], followedBy followUps: @autoclosure @escaping @Sendable () -> [Message] = []) {
        send(.reply(values, followUps))
    }

    /// Sends the error reply of the contract for `error`.
    func fail(_ error: PasteboardError) {
        send(.failure(DBusError(error)))
    }

    private func send(_ answer: Outbox.Held) {
        let answer = outbox?.hold(call, answer) ?? .sendNow(answer)
        switch answer {
        case .held: break
        case .sendNow(.reply(let values, let followUps)): call.reply(values, then: followUps)
        case .sendNow(.failure(let error)): call.fail(error)
        }
    }
}

/// The answers of one batch of calls, held until the batch is committed (or recorded in the
/// commit log), so that no client hears of a change (by its reply, or by `Changed`) before it
/// is durable.
final class Outbox: Sendable {
    enum Held: Sendable {
        case reply([DBusValue], @Sendable () -> [Message])
        case failure(DBusError)
    }

    /// What ``hold(_:_:)`` did with an answer.
    enum Holding: Sendable {
        case held
        /// The batch is released: send this (the answer, or the batch's failure) yourself.
        case sendNow(Held)
    }

    /// Open while the batch runs; then how it ended (nil: committed).
    private enum Outcome {
        case open
        case released(failure: DBusError?)
    }

    private let state = Mutex<(outcome: Outcome, held: [(MethodCall, Held)])>((.open, []))

    /// Keeps the answer while the batch is open. After, the caller sends it itself (a late
    /// answer: a blob read off the queue, a promise provided later), as the batch's failure if
    /// the batch failed, since it may have been made from changes that never happened.
    func hold(_ call: MethodCall, _ answer: Held) -> Holding {
        state.withLock { state in
            switch state.outcome {
            case .open:
                state.held.append((call, answer))
                return .held
            case .released(let failure?):
                return .sendNow(.failure(failure))
            case .released(nil):
                return .sendNow(answer)
            }
        }
    }

    /// Sends everything held, in order. When the commit failed, none of the batch happened:
    /// every answer, errors included (they may speak of changes that were undone), becomes
    /// that failure, and no signal goes out.
    func release(failure: PasteboardError?) {
        let error = failure.map(DBusError.init)
        let held = state.withLock { state in
            state.outcome = .released(failure: error)
            defer { state.held = [] }
            return state.held
        }
        for (call, answer) in held {
            switch (answer, error) {
            case (.reply(let values, let followUps), nil): call.reply(values, then: followUps)
            case (.failure(let failure), nil): call.fail(failure)
            case (_, let error?): call.fail(error)
            }
        }
    }
}
