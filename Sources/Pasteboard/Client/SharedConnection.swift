import Synchronization

/// One bus connection per address per process, shared by every ``Pasteboard``, and opened
/// again on the next call after it is lost (the bus restarted, the session ended).
///
/// A server restart needs nothing: calls go to the bus name, whoever owns it now.
enum SharedConnection {
    private static let proxies = Mutex<[String: PasteboardProxy]>([:])

    /// The session bus when `address` is nil.
    static func proxy(address: String?) throws(PasteboardConnectionError) -> PasteboardProxy {
        let key = address ?? ""
        if let proxy = proxies.withLock({ $0[key] }), proxy.isConnected {
            return proxy
        }
        let proxy = try PasteboardProxy.connect(address: address)
        return proxies.withLock { cache in
            // Another thread may have reconnected first; keep one connection.
            if let existing = cache[key], existing.isConnected { return existing }
            cache[key] = proxy
            return proxy
        }
    }
}
