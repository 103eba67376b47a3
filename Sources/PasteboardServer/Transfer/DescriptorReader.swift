import PasteboardModel

#if canImport(Glibc)
import Glibc
#endif

/// Reads a client's file descriptor to its end into a ``Payload`` (for `WriteItemsFd`).
///
/// Runs on a transfer thread, never on the bus or service threads. Data up to
/// ``Payload/inlineThreshold`` stays in memory; anything larger goes to a blob file: a file or
/// memfd copied by the kernel (`copy_file_range`, `splice` by several threads for a large one,
/// or `sendfile`, into space reserved for its known size), a pipe or anything else read through
/// a 1 MiB buffer (see ``CopyMethod``).
/// Reading starts at the descriptor's current offset, as `read` would.
///
/// The limits hold on every path: no more than `maxBytes` + 1 bytes are ever taken from the
/// client (the extra byte proves the data too large), a file known to be larger is refused
/// before anything is copied, a writer that goes silent for `idleTimeoutMilliseconds` is
/// given up on, and so is a transfer whose caller left the bus (``watch``).
struct DescriptorReader {
    let payloads: PayloadWriter
    let maxBytes: UInt64
    let idleTimeoutMilliseconds: Int32
    /// The limit `idleTimeoutMilliseconds` comes from, as errors name it.
    var idleLimitName = "transfer-idle-timeout-ms"
    /// Asked between steps and while waiting for data whether the caller is still there, for
    /// a pipe, socket or the like (a file ends at its size, and is stored whoever is left);
    /// nil where no bus client waits (the desktop bridge's own reads).
    var watch: CallerWatch? = nil

    /// Reads `source` to its end; `label` names it in errors.
    func read(_ source: TransferSource, label: String) throws(PasteboardError) -> Payload {
        // The write end of a pipe never polls readable: refuse it now, not after the timeout.
        let flags = fcntl(source.fd, F_GETFL)
        if flags >= 0, flags & O_ACCMODE == O_WRONLY {
            throw .invalidArgument("the descriptor for \(label) is open for writing only; pass one the server can read, such as the read end of a pipe")
        }
        if let remaining = source.remaining, remaining > maxBytes {
            throw tooLarge(label)
        }

        var total: UInt64 = 0
        var small: [UInt8] = []
        // A file that holds more than the threshold goes to disk without a detour.
        if (source.remaining ?? 0) <= UInt64(Payload.inlineThreshold) {
            let (bytes, ended) = try readSmall(source, total: &total, label: label)
            if ended { return .inline(bytes) }
            small = bytes
        }

        let widened = source.enlargePipeBuffer()
        defer { if widened { WidePipes.writers.giveBack() } }
        // A pipe's length is unknown (nil): past the inline threshold it may well be large, so
        // it overwrites the spare file too, if there is one.
        var file = try payloads.createFile(sizeHint: source.remaining)
        var finished = false
        defer { if !finished { file.discard() } }
        if let remaining = source.remaining {
            try file.preallocate(remaining)
        }
        try PayloadWriter.writeAll(file.fd, small[...])
        try copy(source, to: file.fd, total: &total, label: label)
        finished = true
        return .file(try file.finish(size: total))
    }

    /// Reads into memory until the data proves larger than the inline threshold (`ended` false)
    /// or ends (`ended` true).
    private func readSmall(_ source: TransferSource, total: inout UInt64, label: String) throws(PasteboardError) -> (bytes: [UInt8], ended: Bool) {
        var bytes = [UInt8](repeating: 0, count: Payload.inlineThreshold + 1)
        var filled = 0
        while filled < bytes.count {
            if source.mayStall { try waitReadable(source.fd, label: label) }
            let wanted = min(bytes.count - filled, allowance(after: total))
            let count = bytes.withUnsafeMutableBytes { Glibc.read(source.fd, $0.baseAddress! + filled, wanted) }
            if count < 0 {
                if errno == EINTR || errno == EAGAIN { continue }
                throw readFailure(errno, label)
            }
            if count == 0 {
                bytes.removeSubrange(filled...)
                return (bytes, true)
            }
            filled += count
            total += UInt64(count)
            guard total <= maxBytes else { throw tooLarge(label) }
            if source.mayStall { try watch?.check() }
        }
        return (bytes, false)
    }

    /// Moves the rest of the source into `destination`, counting the bytes in `total`.
    private func copy(_ source: TransferSource, to destination: Int32, total: inout UInt64, label: String) throws(PasteboardError) {
        var method = CopyMethod(for: source.kind)
        var buffer: CopyBuffer? = nil
        var mustWait = source.mayStall
        while true {
            if mustWait { try waitReadable(source.fd, label: label) }
            let count = min(method.chunkSize, allowance(after: total))
            switch method.step(from: source.fd, to: destination, count: count, buffer: &buffer) {
            case .moved(let moved):
                total += UInt64(moved)
                guard total <= maxBytes else { throw tooLarge(label) }
                if source.mayStall { try watch?.check() }
                mustWait = source.mayStall
            case .end:
                return
            case .wouldBlock:
                mustWait = true
            case .refused:
                guard let next = method.fallback else { throw readFailure(EINVAL, label) }
                method = next
            case .readFailed(let code):
                throw readFailure(code, label)
            case .writeFailed(let code):
                throw PayloadWriter.writeFailure(code)
            }
        }
    }

    /// How many bytes the next read may take: never more than one past the limit, the byte
    /// that proves the data too large.
    private func allowance(after total: UInt64) -> Int {
        let left = maxBytes - min(total, maxBytes)
        return left >= UInt64(Int.max) ? Int.max : Int(left) + 1
    }

    /// Waits for data, at most the idle timeout; in slices when the caller is watched, asking
    /// between them whether it is still there.
    private func waitReadable(_ fd: Int32, label: String) throws(PasteboardError) {
        var entry = pollfd(fd: fd, events: Int16(POLLIN), revents: 0)
        var waited: Int32 = 0
        while true {
            let slice = watch?.pollTimeout(atMost: idleTimeoutMilliseconds - waited) ?? idleTimeoutMilliseconds
            let ready = poll(&entry, 1, slice)
            if ready > 0 { return }
            if ready < 0, errno == EINTR { continue }
            if ready == 0 {
                waited += slice
                try watch?.check()
                guard waited >= idleTimeoutMilliseconds else { continue }
                throw .invalidArgument("no data arrived for \(label) in \(idleTimeoutMilliseconds) ms (\(idleLimitName)); write all data and close the descriptor")
            }
            throw .invalidArgument("the descriptor for \(label) cannot be polled (\(String(cString: strerror(errno))))")
        }
    }

    private func tooLarge(_ label: String) -> PasteboardError {
        .tooLarge("the data for \(label) exceeds \(maxBytes) bytes (max-item-bytes)")
    }

    private func readFailure(_ code: Int32, _ label: String) -> PasteboardError {
        .invalidArgument("the descriptor for \(label) could not be read (\(String(cString: strerror(code))))")
    }
}
