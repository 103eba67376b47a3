/// The answer to a call: its reply, or why there is none.
///
/// A type of its own rather than `Result<Message, DBusError>`, and an unsafe continuation in
/// release builds rather than a checked one: the first use of either generic type in a process
/// makes its type metadata, and for that the Swift runtime checks its requirements
/// (`Failure: Error`, `E: Error`) by searching every protocol conformance the executable holds.
/// In the static `pbctl`, which starts for every copy and paste, those searches were a tenth of
/// its CPU time. This type and `UnsafeContinuation` (of fixed layout) need none of that.
enum CallOutcome: Sendable {
    case success(Message)
    case failure(DBusError)

    func get() throws(DBusError) -> Message {
        switch self {
        case .success(let message): message
        case .failure(let error): throw error
        }
    }

    #if DEBUG
    /// Debug builds (the tests) keep the checks of a checked continuation: a call answered
    /// twice, or never, is reported there.
    typealias Continuation = CheckedContinuation<CallOutcome, Never>

    static func awaited(_ body: (Continuation) -> Void) async -> CallOutcome {
        await withCheckedContinuation(body)
    }
    #else
    /// Each call's continuation is resumed exactly once: by ``ConnectionState/finish(_:_:serial:)``
    /// after it is taken out of the pending calls, or where it is refused before it is kept.
    typealias Continuation = UnsafeContinuation<CallOutcome, Never>

    static func awaited(_ body: (Continuation) -> Void) async -> CallOutcome {
        await withUnsafeContinuation(body)
    }
    #endif
}
