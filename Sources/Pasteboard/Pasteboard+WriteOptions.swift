import Foundation

extension Pasteboard {
    /// How the server keeps what a write puts on the pasteboard: when it goes, and whether it is
    /// a secret. The options of UIKit's `setItems(_:options:)` (`expirationDate`), with the
    /// markers password managers set on the desktop (concealed and transient contents).
    ///
    /// ```swift
    /// // A password: never on disk, never in the history, gone in 30 seconds.
    /// try await Pasteboard.general.setString(password, options: .concealed(for: 30))
    /// ```
    public struct WriteOptions: Sendable, Equatable {
        /// When the server clears the contents (UIKit's `expirationDate`); nil: they stay. A
        /// date already past clears them at once.
        public var expirationDate: Date?
        /// A secret: never written to disk, never in ``Pasteboard/history(limit:)``, and its
        /// types never announced to other programs' change listeners; on the desktop it
        /// carries the hint clipboard managers skip (`x-kde-passwordManagerHint`).
        public var isConcealed: Bool
        /// Not recorded in the history and not written to disk, though announced as usual:
        /// data another program only passes through.
        public var isTransient: Bool

        /// Options with those given set; the defaults are those of a plain write.
        public init(expirationDate: Date? = nil, isConcealed: Bool = false, isTransient: Bool = false) {
            self.expirationDate = expirationDate
            self.isConcealed = isConcealed
            self.isTransient = isTransient
        }

        /// A concealed write that the server clears after `seconds`.
        public static func concealed(for seconds: TimeInterval) -> WriteOptions {
            WriteOptions(expirationDate: Date(timeIntervalSinceNow: seconds), isConcealed: true)
        }

        /// The contract's options for a write made now.
        var proxyOptions: PasteboardProxy.WriteOptions {
            PasteboardProxy.WriteOptions(
                expiresInMilliseconds: expirationDate.map(Self.milliseconds(until:)), concealed: isConcealed, transient: isTransient)
        }

        /// The whole milliseconds from now until `date`, rounded up, and at least 1: the server
        /// takes no 0, and a date already past means as soon as it can.
        static func milliseconds(until date: Date) -> UInt64 {
            let milliseconds = (date.timeIntervalSinceNow * 1000).rounded(.up)
            guard milliseconds >= 1 else { return 1 }
            return milliseconds < Double(UInt64.max) ? UInt64(milliseconds) : .max
        }
    }

    /// ``writeObjects(_:)`` with `options`: an addition after ``clearContents()`` makes the
    /// whole contents as strict as the strictest write among them (concealed stays concealed).
    @discardableResult
    public func writeObjects(_ objects: [any Transferable], options: WriteOptions) async throws -> Bool {
        let (items, proxyOptions) = try await exportItems(objects, options: options.proxyOptions)
        guard !items.isEmpty else { return false }
        return try await writeAsOwner(options: proxyOptions) { _ in (items, nil) }
    }

    /// ``setData(_:forType:)`` with `options`.
    @discardableResult
    public func setData(_ data: Data?, forType type: UTType, options: WriteOptions) async throws -> Bool {
        try await setData(data, forType: type, proxyOptions: options.proxyOptions)
    }

    /// ``setString(_:forType:)`` with `options`.
    @discardableResult
    public func setString(_ string: String, forType type: UTType = .utf8PlainText, options: WriteOptions) async throws -> Bool {
        try await setData(Data(string.utf8), forType: type, options: options)
    }
}
