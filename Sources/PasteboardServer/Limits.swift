import PasteboardModel

/// The limits that keep the server alive under abuse, reported by the `Limits` property and
/// set with `--limit KEY=VALUE`.
///
/// Every limit is a whole number; byte counts accept the suffixes `K`, `M`, `G` (powers of 1024)
/// and times are in milliseconds.
public struct Limits: Sendable, Equatable {
    /// The keys in the order the `Limits` property lists them.
    public static var keys: [String] { named.map(\.key) }

    /// Each key and the property that holds its value. The properties are stored, and read on
    /// every call; a key is looked up only to set or report a limit.
    private static let named: [(key: String, value: any WritableKeyPath<Limits, UInt64> & Sendable)] = [
        ("max-item-bytes", \.maxItemBytes), ("max-inline-bytes", \.maxInlineBytes),
        ("max-pasteboard-bytes", \.maxPasteboardBytes), ("max-items", \.maxItems), ("max-pasteboards", \.maxPasteboards),
        ("history-depth", \.historyDepth), ("max-history-bytes", \.maxHistoryBytes), ("max-types-per-item", \.maxTypesPerItem),
        ("max-type-bytes", \.maxTypeBytes),
        ("transfer-idle-timeout-ms", \.transferIdleTimeoutMilliseconds), ("max-transfers", \.maxTransfers),
        ("provider-timeout-ms", \.providerTimeoutMilliseconds), ("max-request-types", \.maxRequestTypes),
        ("max-unread-bytes", \.maxUnreadBytes),
    ]

    /// Defaults for a desktop: a 1 GiB image or video fits, a runaway client does not take the disk.
    public static let defaults: [String: UInt64] = [
        // The sum of one item's representations.
        "max-item-bytes": 2 << 30,
        // Data passed as `ay` in either direction; larger data travels by file descriptor.
        "max-inline-bytes": 4 << 20,
        // Everything one pasteboard holds.
        "max-pasteboard-bytes": 4 << 30,
        // Items on one pasteboard.
        "max-items": 1024,
        // Names written and not removed.
        "max-pasteboards": 65536,
        // `History` entries per pasteboard: the current contents among them when they are
        // listed (concealed, transient or cleared contents are not, and take no place).
        "history-depth": 32,
        // Bytes of earlier generations kept per pasteboard; the oldest go first.
        "max-history-bytes": 256 << 20,
        // Types offered by one item.
        "max-types-per-item": 64,
        // The names of the types one pasteboard's items offer, summed over every item: empty
        // data under long type names is not counted by the byte limits above, and 1024 items
        // of 64 types of 255 bytes would be 16 MiB a write.
        "max-type-bytes": 256 << 10,
        // How long a `WriteItemsFd` waits for a writer that sends nothing before giving up:
        // long enough for a slow producer (`ssh host tar c | pbctl copy` pausing), as a
        // transfer whose caller left stops within a second anyway (CallerWatch), and a client
        // that stays holds at most a quarter of `max-transfers`.
        "transfer-idle-timeout-ms": 600_000,
        // File-descriptor transfers in progress at once, over all clients (a quarter of them
        // from any one: TransferSlots), and as many `ReadFd` feeders apart.
        "max-transfers": 64,
        // How long a promise's writer has to answer `Provide` before the read fails.
        "provider-timeout-ms": 5_000,
        // Types one `AvailableType`, `CanRead` or `ReadBest` asks for: each costs a conformance
        // lookup on the bus thread (ArgumentBounds).
        "max-request-types": 1024,
        // What the bus may hold of the server's messages that clients have not read (the
        // session bus stops reading a sender at 1 GB), before clients behind with their
        // reading get no more large replies and large announcements are refused
        // (UnreadReplies, ChangedBacklogWatch).
        "max-unread-bytes": 256 << 20,
    ]

    public init() {
        for (key, value) in Self.named {
            self[keyPath: value] = Self.defaults[key] ?? 0
        }
    }

    /// The limit `key`; 0 for a key that is not a limit.
    public subscript(key: String) -> UInt64 {
        Self.named.first { $0.key == key }.map { self[keyPath: $0.value] } ?? 0
    }

    public private(set) var maxItemBytes: UInt64 = 0
    public private(set) var maxInlineBytes: UInt64 = 0
    public private(set) var maxPasteboardBytes: UInt64 = 0
    public private(set) var maxItems: UInt64 = 0
    public private(set) var maxPasteboards: UInt64 = 0
    public private(set) var historyDepth: UInt64 = 0
    public private(set) var maxHistoryBytes: UInt64 = 0
    public private(set) var maxTypesPerItem: UInt64 = 0
    public private(set) var maxTypeBytes: UInt64 = 0
    public private(set) var transferIdleTimeoutMilliseconds: UInt64 = 0
    public private(set) var maxTransfers: UInt64 = 0
    public private(set) var providerTimeoutMilliseconds: UInt64 = 0
    public private(set) var maxRequestTypes: UInt64 = 0
    public private(set) var maxUnreadBytes: UInt64 = 0

    /// Applies one `KEY=VALUE` setting.
    ///
    /// - Throws: a message naming the valid keys, or saying what a value must look like.
    public mutating func apply(_ setting: String) throws(LimitError) {
        guard let equals = setting.firstIndex(of: "=") else {
            throw LimitError("'\(setting)' is not KEY=VALUE (for example max-items=100)")
        }
        let key = String(setting[..<equals])
        let text = String(setting[setting.index(after: equals)...])
        guard let property = Self.named.first(where: { $0.key == key })?.value else {
            throw LimitError("unknown limit '\(key)'; the limits are: \(Self.keys.joined(separator: ", "))")
        }
        guard let value = Self.parse(text) else {
            throw LimitError("'\(text)' is not a whole number for \(key) (byte counts may end in K, M or G)")
        }
        self[keyPath: property] = value
    }

    static func parse(_ text: String) -> UInt64? {
        var digits = Substring(text)
        var multiplier: UInt64 = 1
        for (suffix, factor) in [("KiB", 1 << 10), ("MiB", 1 << 20), ("GiB", 1 << 30), ("K", 1 << 10), ("M", 1 << 20), ("G", 1 << 30)] as [(String, UInt64)]
        where digits.hasSuffix(suffix) {
            digits = digits.dropLast(suffix.count)
            multiplier = factor
            break
        }
        guard let value = UInt64(digits) else { return nil }
        let (product, overflow) = value.multipliedReportingOverflow(by: multiplier)
        return overflow ? nil : product
    }
}

/// A `--limit` setting that could not be applied.
public struct LimitError: Error, Sendable, CustomStringConvertible {
    public let description: String
    init(_ description: String) { self.description = description }
}
