import DBus

/// One change of a pasteboard, from the server's `Changed` signal.
public struct PasteboardChange: Sendable, Equatable {
    /// The pasteboard that changed.
    public let name: Pasteboard.Name
    /// Its change count after the change.
    public let changeCount: Int
    /// Its types after the change (empty when cleared, removed, or concealed).
    public let types: [UTType]
    /// True when the connection to the server was lost and re-established: changes may have
    /// happened meanwhile without being reported. ``changeCount`` and ``types`` are the current
    /// state, so a consumer that refreshes from this change misses nothing.
    public let mayHaveMissedChanges: Bool

    /// A change, as the sequence reports one; for tests and previews of code that consumes
    /// changes.
    public init(name: Pasteboard.Name, changeCount: Int, types: [UTType], mayHaveMissedChanges: Bool = false) {
        self.name = name
        self.changeCount = changeCount
        self.types = types
        self.mayHaveMissedChanges = mayHaveMissedChanges
    }
}

/// The changes of one pasteboard, or of all, as an `AsyncSequence` that ends when the consuming
/// task is cancelled. It survives the server and the bus restarting (see
/// ``PasteboardChange/mayHaveMissedChanges``).
public struct PasteboardChanges: AsyncSequence, Sendable {
    /// Each element is one change.
    public typealias Element = PasteboardChange
    let name: Pasteboard.Name?
    let address: String?
    /// Yield the current state first, once subscribed, so that a consumer that needs the state
    /// and then every change (``PasteButton``) misses nothing between the two.
    var startsWithCurrentState = false

    /// Makes the iterator; each iterator subscribes to the signals on its own.
    public func makeAsyncIterator() -> AsyncStream<PasteboardChange>.Iterator {
        let (stream, continuation) = AsyncStream<PasteboardChange>.makeStream(bufferingPolicy: .unbounded)
        let feed = ChangeFeed(name: name, address: address, startsWithCurrentState: startsWithCurrentState)
        let task = Task { await feed.run(into: continuation) }
        continuation.onTermination = { _ in task.cancel() }
        return stream.makeAsyncIterator()
    }
}

/// Follows `Changed` signals, reconnecting with a growing pause whenever the bus or the server
/// goes away, and reporting the current state after each reconnection.
struct ChangeFeed {
    let name: Pasteboard.Name?
    let address: String?
    var startsWithCurrentState = false

    func run(into continuation: AsyncStream<PasteboardChange>.Continuation) async {
        var reconnecting = false
        var pause = Duration.milliseconds(50)
        while !Task.isCancelled {
            do {
                let proxy = try SharedConnection.proxy(address: address)
                let signals = try await proxy.changes(of: name?.rawValue)
                let restarts = try await proxy.serverRestarts()
                if reconnecting {
                    do {
                        try await reportCurrentState(proxy, into: continuation)
                    } catch let error as PasteboardConnectionError where Self.isServerAbsent(error) {
                        // No server now: its arrival (a restart) reports the state instead.
                    }
                } else if startsWithCurrentState {
                    // Without a server yet, its arrival (a restart) reports the state instead.
                    try? await reportCurrentState(proxy, into: continuation, missed: false)
                }
                pause = .milliseconds(50)
                await withTaskGroup(of: Void.self) { group in
                    group.addTask {
                        for await change in signals {
                            continuation.yield(PasteboardChange(
                                name: Pasteboard.Name(change.name), changeCount: Int(clamping: change.count),
                                types: change.types.map(UTType.types(for:))))
                        }
                    }
                    group.addTask {
                        // The server restarted: signals sent while it was away are lost.
                        for await _ in restarts {
                            try? await reportCurrentState(proxy, into: continuation)
                        }
                    }
                    await group.next()
                    group.cancelAll()
                }
            } catch {
                // No bus or no server yet: try again shortly.
            }
            reconnecting = true
            try? await Task.sleep(for: pause)
            pause = min(pause * 2, .seconds(2))
        }
        continuation.finish()
    }

    /// The calls fail this way when no server owns the bus name (they do not start one).
    private static func isServerAbsent(_ error: PasteboardConnectionError) -> Bool {
        error.dbusErrorName == DBusError.serviceUnknownName || error.dbusErrorName == DBusError.nameHasNoOwnerName
    }

    /// Yields the current state; never starts a stopped server (bus activation), so that
    /// listening to changes does not keep the server running.
    private func reportCurrentState(_ proxy: PasteboardProxy, into continuation: AsyncStream<PasteboardChange>.Continuation, missed: Bool = true) async throws {
        let names: [String]
        if let name {
            names = [name.rawValue]
        } else {
            names = try await proxy.listPasteboards(autoStart: false)
        }
        for name in names {
            let (count, types) = try await proxy.types(name, autoStart: false)
            continuation.yield(PasteboardChange(
                name: Pasteboard.Name(name), changeCount: Int(clamping: count),
                types: types.map(UTType.types(for:)), mayHaveMissedChanges: missed))
        }
    }
}
