/// What a command does once its command line is read, whether ArgumentParser read it or
/// ``QuickLine`` did; both build the same job, so the two readings cannot act differently.
protocol Job: Sendable {
    /// Does the work; throws a ``Failure`` for everything the contract gives an exit status.
    func run() async throws
}

/// The pasteboard and the bus every command works on: `-p`/`--pasteboard` and `--address`.
struct Target: Sendable {
    /// The pasteboard name as given; checked before anything is asked of the server
    /// (``Session/run(_:_:)``).
    var pasteboard: String
    /// The bus address; nil for the session bus.
    var address: String?
}
