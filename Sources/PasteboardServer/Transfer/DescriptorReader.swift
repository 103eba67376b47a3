import DBus
import PasteboardModel

#if canImport(Glibc)
import Glibc
#endif

/// Reads a client's file descriptor to its end into a ``Payload`` (for `WriteItemsFd`).
///
/// Runs on a transfer thread, never on the bus or service threads. Data is streamed: whatever
/// exceeds ``Payload/inlineThreshold`` goes to a blob file chunk by chunk, so a 1 GiB payload
/// costs one buffer of memory. A writer that goes silent for `idleTimeout` is given up on.
struct DescriptorReader {
    let payloads: PayloadWriter
    let maxBytes: UInt64
    let idleTimeoutMilliseconds: Int32

    private static let chunkSize = 1 << 20

    func read(_ descriptor: UnixFileDescriptor, label: String) throws(PasteboardError) -> Payload {
        let fd = descriptor.rawValue
        var memory: [UInt8] = []
        var file: BlobFile? = nil
        var finished = false
        var total: UInt64 = 0
        var chunk = [UInt8](repeating: 0, count: Self.chunkSize)
        defer { if let file, !finished { file.discard() } }

        // The write end of a pipe never polls readable: refuse it now, not after the timeout.
        let flags = fcntl(fd, F_GETFL)
        if flags >= 0, flags & O_ACCMODE == O_WRONLY {
            throw .invalidArgument("the descriptor for \(label) is open for writing only; pass one the server can read, such as the read end of a pipe")
        }

        while true {
            try waitReadable(fd, label: label)
            let count = chunk.withUnsafeMutableBytes { Glibc.read(fd, $0.baseAddress, $0.count) }
            if count < 0 {
                if errno == EINTR || errno == EAGAIN { continue }
                throw .invalidArgument("the descriptor for \(label) could not be read (\(String(cString: strerror(errno))))")
            }
            if count == 0 { break }
            total += UInt64(count)
            guard total <= maxBytes else {
                throw .tooLarge("the data for \(label) exceeds \(maxBytes) bytes (max-item-bytes)")
            }
            if file == nil, memory.count + count <= Payload.inlineThreshold {
                memory.append(contentsOf: chunk[0..<count])
                continue
            }
            if file == nil {
                file = try payloads.createFile()
                try PayloadWriter.writeAll(file!.fd, memory[...])
                memory = []
            }
            try PayloadWriter.writeAll(file!.fd, chunk[0..<count])
        }
        guard let file else { return .inline(memory) }
        finished = true
        return .file(try file.finish(size: total))
    }

    private func waitReadable(_ fd: Int32, label: String) throws(PasteboardError) {
        var entry = pollfd(fd: fd, events: Int16(POLLIN), revents: 0)
        while true {
            let ready = poll(&entry, 1, idleTimeoutMilliseconds)
            if ready > 0 { return }
            if ready < 0, errno == EINTR { continue }
            if ready == 0 {
                throw .invalidArgument("no data arrived for \(label) in \(idleTimeoutMilliseconds) ms (transfer-idle-timeout-ms); write all data and close the descriptor")
            }
            throw .invalidArgument("the descriptor for \(label) cannot be polled (\(String(cString: strerror(errno))))")
        }
    }
}
