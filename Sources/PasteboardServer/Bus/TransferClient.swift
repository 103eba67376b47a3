/// Whom a descriptor transfer is counted against in `max-transfers`: the client's process,
/// as the bus knows it (`GetConnectionUnixProcessID`), so that a process opening several
/// connections holds no more transfers than one connection would; its connection only when
/// the bus cannot say (the client left before the question, or a bus without credentials).
enum TransferClient: Hashable, Sendable {
    case process(UInt32)
    case connection(String)

    /// The client's process, when the bus named it (what owner-only data is kept for).
    var processID: UInt32? {
        if case .process(let pid) = self { pid } else { nil }
    }
}
