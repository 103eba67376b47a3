#if canImport(Glibc)
import DBus
import Glibc
#endif

/// Moves bytes between descriptors in chunks, never holding a whole payload, and shows
/// progress on a terminal.
enum Streaming {
    static let chunkSize = 1 << 20

    /// How a ``copy(from:to:prefix:progress:)`` ended.
    enum Copied: Equatable {
        /// Every byte, this many.
        case all(UInt64)
        /// Reading `source` failed with this `errno`.
        case readFailed(Int32)
        /// Writing `destination` failed with this `errno` (`EPIPE`: the reader went away).
        case writeFailed(Int32)
        /// `stop` said so after this many bytes; `source` may hold more.
        case stopped(UInt64)
    }

    /// Copies `source` to `destination` until the end of `source`, or until `stop`, asked
    /// with the total after each part, says to; `inspect` sees every part read (not
    /// `prefix`), in order.
    ///
    /// `progress` shows the total plus `progressOffset` (the bytes of sources copied before
    /// this one), and is finished at the end unless `last` is false (more sources follow).
    @discardableResult
    static func copy(
        from source: Int32, to destination: Int32, prefix: [UInt8] = [], progress: Progress? = nil,
        progressOffset: UInt64 = 0, last: Bool = true,
        inspect: (UnsafeRawBufferPointer) -> Void = { _ in }, stop: (UInt64) -> Bool = { _ in false }
    ) -> Copied {
        var total: UInt64 = 0
        if !prefix.isEmpty {
            guard writeAll(destination, prefix[...]) else { return .writeFailed(errno) }
            total += UInt64(prefix.count)
            progress?.update(progressOffset + total)
        }
        var buffer = [UInt8](repeating: 0, count: chunkSize)
        while true {
            let count = buffer.withUnsafeMutableBytes { read(source, $0.baseAddress, $0.count) }
            if count < 0 {
                if errno == EINTR { continue }
                return .readFailed(errno)
            }
            if count == 0 { break }
            buffer.withUnsafeBytes { inspect(UnsafeRawBufferPointer(rebasing: $0[0..<count])) }
            guard writeAll(destination, buffer[0..<count]) else { return .writeFailed(errno) }
            total += UInt64(count)
            progress?.update(progressOffset + total)
            if stop(total) { return .stopped(total) }
        }
        if last { progress?.finish(progressOffset + total) }
        return .all(total)
    }

    /// Writes all of `bytes`; false when that failed, with `errno` saying why.
    static func writeAll(_ fd: Int32, _ bytes: ArraySlice<UInt8>) -> Bool {
        let failure = UnixFileDescriptor.writeAll(fd, bytes)
        if failure != 0 { errno = failure }
        return failure == 0
    }

    /// Reads from `fd` until `limit` bytes or the end; `complete` says whether the end came.
    ///
    /// The buffer is not cleared first: a page of it costs nothing until data lands there, so
    /// 100 bytes cost one page of the `limit`, not all of them.
    static func readUpTo(_ fd: Int32, limit: Int) -> (bytes: [UInt8], complete: Bool)? {
        var failed = false
        var complete = false
        let bytes = [UInt8](unsafeUninitializedCapacity: limit) { buffer, filled in
            filled = 0
            while filled < limit {
                let count = read(fd, buffer.baseAddress! + filled, limit - filled)
                if count < 0 {
                    if errno == EINTR { continue }
                    failed = true
                    return
                }
                if count == 0 {
                    complete = true
                    return
                }
                filled += count
            }
        }
        return failed ? nil : (bytes, complete)
    }
}

/// A one-line byte counter on stderr, shown only when stderr is a terminal.
final class Progress: @unchecked Sendable {
    private let verb: String
    private var lastShown: UInt64 = 0
    private var shown = false

    /// Nil when stderr is not a terminal: scripts get no progress noise. Nil too when the data
    /// itself goes to a terminal (`dataTo`, a paste to the screen): the data shows how far it
    /// got, and the counter's rewritten line would land in the middle of it.
    static func onTerminal(_ verb: String, dataTo output: Int32? = nil) -> Progress? {
        guard Output.stderrIsTerminal, output.map({ isatty($0) != 1 }) ?? true else { return nil }
        return Progress(verb)
    }

    private init(_ verb: String) {
        self.verb = verb
    }

    func update(_ total: UInt64) {
        guard total >= lastShown, total - lastShown >= 8 << 20 else { return }
        lastShown = total
        shown = true
        Output.toStderr(Array("\rpbctl: \(verb) \(Self.format(total))\u{1B}[K".utf8))
    }

    func finish(_ total: UInt64) {
        guard shown else { return }
        Output.toStderr(Array("\rpbctl: \(verb) \(Self.format(total))\u{1B}[K\n".utf8))
    }

    /// Ends a progress line left as it was (the transfer failed: no total to give), so that
    /// what is printed next starts a line of its own.
    func abandon() {
        guard shown else { return }
        Output.toStderr(Array("\n".utf8))
    }

    static func format(_ bytes: UInt64) -> String {
        if bytes < 1 << 20 { return "\(bytes) bytes" }
        return oneDecimal(Double(bytes) / Double(1 << 20)) + " MiB"
    }

    /// `%.1f`, printf's own rounding.
    private static func oneDecimal(_ value: Double) -> String {
        var buffer = [CChar](repeating: 0, count: 64)
        _ = withVaList([value]) { vsnprintf(&buffer, buffer.count, "%.1f", $0) }
        return buffer.withUnsafeBufferPointer { String(cString: $0.baseAddress!) }
    }
}
