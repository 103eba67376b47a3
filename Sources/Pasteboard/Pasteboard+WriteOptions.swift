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
    ///
    /// After ``Pasteboard/clearContents()``, each addition carries the strictest options of
    /// the additions before it: the contents stay concealed once one addition was, transient
    /// once one was, and go at the earliest expiration date given, whatever the later
    /// additions say.
    public struct WriteOptions: Sendable, Equatable {
        /// When the server clears the contents (UIKit's `expirationDate`); nil: they stay. A
        /// date already past clears them at once. It is a moment, not a duration: options kept
        /// for reuse should be made anew for each write.
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

        /// A concealed write that the server clears `seconds` from now.
        public static func concealed(for seconds: TimeInterval) -> WriteOptions {
            WriteOptions(expirationDate: Date(timeIntervalSinceNow: seconds), isConcealed: true)
        }

        /// These and `other` together, each as strict as the stricter of the two.
        func stricter(_ other: WriteOptions) -> WriteOptions {
            WriteOptions(
                expirationDate: [expirationDate, other.expirationDate].compactMap { $0 }.min(),
                isConcealed: isConcealed || other.isConcealed, isTransient: isTransient || other.isTransient)
        }

        /// The contract's options for a write leaving now.
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

    /// ``setString(_:forType:)`` with `options`.
    @discardableResult
    public func setString(_ string: String, forType type: UTType = .utf8PlainText, options: WriteOptions) async throws -> Bool {
        try await setData(Data(string.utf8), forType: type, options: options)
    }
}
