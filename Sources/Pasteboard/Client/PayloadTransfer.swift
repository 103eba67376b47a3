import DBus
import Foundation

/// Moves payloads between this process and the server: inline when small, through file
/// descriptors when large (the server's `max-inline-bytes` decides), and from or to files
/// without holding them in memory.
enum PayloadTransfer {
    /// Data up to this size is sent inline first; the server may still refuse it as too large,
    /// and then it goes by descriptor.
    static let inlineCutoff = 1 << 20

    /// Writes items whose representations are bytes or files, in one change.
    @discardableResult
    static func write(_ name: String, items: [[(type: String, content: TransferContent)]], options: PasteboardProxy.WriteOptions, proxy: PasteboardProxy) async throws -> UInt64 {
        let small = items.allSatisfy { item in
            item.allSatisfy { if case .data(let data) = $0.content { data.count <= inlineCutoff } else { false } }
        }
        if small {
            let inline = items.map { item in item.map { representation -> (type: String, data: Data) in
                guard case .data(let data) = representation.content else { preconditionFailure("checked above") }
                return (representation.type, data)
            } }
            do {
                return try await proxy.writeItems(name, inline, options: options)
            } catch let error as PasteboardError where error.code == .tooLarge {
                // The server's inline limit is lower than ours: send by descriptor instead.
            }
        }
        var descriptors: [Int32] = []
        defer { descriptors.forEach { close($0) } }
        var fdItems: [[(type: String, fd: Int32)]] = []
        for item in items {
            var fdItem: [(type: String, fd: Int32)] = []
            for (type, content) in item {
                let fd = try descriptor(for: content)
                descriptors.append(fd)
                fdItem.append((type, fd))
            }
            fdItems.append(fdItem)
        }
        return try await proxy.writeItemsFd(name, fdItems, options: options)
    }

    /// A descriptor positioned at the start of `content`: the file itself, or a pipe the bytes
    /// are streamed into (see ``PipeFeeder``).
    private static func descriptor(for content: TransferContent) throws -> Int32 {
        switch content {
        case .file(let url):
            let fd = open(url.path, O_RDONLY | O_CLOEXEC)
            guard fd >= 0 else { throw CocoaError(.fileReadNoSuchFile, userInfo: [NSFilePathErrorKey: url.path]) }
            return fd
        case .data(let data):
            return try PipeFeeder.readEnd(streaming: data)
        }
    }

    /// The bytes of one representation: inline, or through a descriptor when too large.
    static func read(_ name: String, item: UInt32, type: String, expect: UInt64, proxy: PasteboardProxy) async throws -> Data {
        do {
            return try await proxy.readData(name, item: item, type: type, expect: expect).data
        } catch let error as PasteboardError where error.code == .tooLarge {
            let (_, fd) = try await proxy.readFd(name, item: item, type: type, expect: expect)
            return try await BlockingWork.run { _ in
                defer { close(fd) }
                return try FileHandle(fileDescriptor: fd, closeOnDealloc: false).readToEnd() ?? Data()
            }
        }
    }

    /// Reads one large representation through a descriptor straight into memory, reporting
    /// progress and stopping when the task is cancelled (for data that is not a file's).
    static func readStreaming(_ name: String, item: UInt32, type: String, size: Int64, expect: UInt64, proxy: PasteboardProxy, progress: (@Sendable (Double) -> Void)?) async throws -> Data {
        let (_, source) = try await proxy.readFd(name, item: item, type: type, expect: expect)
        return try await BlockingWork.run { isCancelled in
            defer { close(source) }
            var data = Data()
            if size > 0 { data.reserveCapacity(Int(clamping: min(size, 1 << 28))) }  // the server's word, bounded
            try copyChunks(from: source, size: size, progress: progress, isCancelled: isCancelled) { chunk in data.append(contentsOf: chunk) }
            return data
        }
    }

    /// Streams one representation into a new temporary file (named by
    /// ``TransferContent/temporaryFile(for:)``), reporting progress and stopping (and deleting
    /// the file) when the task is cancelled. The file is the only thing made, so a caller that
    /// deletes it leaves nothing behind.
    static func readToFile(_ name: String, item: UInt32, type: UTType, offered: String, size: Int64, expect: UInt64, proxy: PasteboardProxy, progress: (@Sendable (Double) -> Void)?) async throws -> URL {
        let file = TransferContent.temporaryFile(for: type)
        do {
            let (_, source) = try await proxy.readFd(name, item: item, type: offered, expect: expect)
            let path = file.path
            try await BlockingWork.run { isCancelled in
                defer { close(source) }
                let destination = open(path, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0o600)
                guard destination >= 0 else { throw POSIXError(POSIXErrorCode(rawValue: errno) ?? .EIO) }
                defer { close(destination) }
                try copyChunks(from: source, size: size, progress: progress, isCancelled: isCancelled) { chunk in
                    let failure = UnixFileDescriptor.writeAll(destination, chunk)
                    if failure != 0 { throw POSIXError(POSIXErrorCode(rawValue: failure) ?? .EIO) }
                }
            }
            return file
        } catch {
            try? FileManager.default.removeItem(at: file)
            throw error
        }
    }

    /// Reads `source` to its end in chunks of up to 1 MiB, handing each to `sink`, checking for
    /// cancellation before each read and reporting progress against `size` (unknown when not
    /// positive) after each, then 1 at the end; data that ends short of a known `size` fails.
    /// Run by ``BlockingWork``, off the tasks' pool.
    private static func copyChunks(
        from source: Int32, size: Int64, progress: (@Sendable (Double) -> Void)?, isCancelled: () -> Bool,
        into sink: (UnsafeRawBufferPointer) throws -> Void
    ) throws {
        var buffer = [UInt8](repeating: 0, count: 1 << 20)
        var total: Int64 = 0
        while true {
            if isCancelled() { throw CancellationError() }
            let count = buffer.withUnsafeMutableBytes { Glibc.read(source, $0.baseAddress, $0.count) }
            if count < 0 { if errno == EINTR { continue }; throw POSIXError(POSIXErrorCode(rawValue: errno) ?? .EIO) }
            if count == 0 { break }
            try buffer.withUnsafeBytes { try sink(UnsafeRawBufferPointer(rebasing: $0[..<count])) }
            total += Int64(count)
            if size > 0 { progress?(min(1, Double(total) / Double(size))) }
        }
        // The server's pipe ends the same way whether it sent everything or stopped sending
        // (killed, or stopped with the reader still being fed): the size it gave tells them apart.
        if size > 0, total != size {
            throw PasteboardError.noSuchItem("the data ended after \(total) of its \(size) bytes: the server stopped or failed while sending it; read it again")
        }
        progress?(1)
    }
}
