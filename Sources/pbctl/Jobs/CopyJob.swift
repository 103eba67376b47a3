import PasteboardInterface
import PasteboardModel

#if canImport(Glibc)
import Glibc
#endif

/// `pbctl copy`: stdin (or a file) becomes the pasteboard's one item.
struct CopyJob: Job {
    var target: Target
    /// A file to copy instead of stdin.
    var file: String?
    /// Offer the data under these types; sniffed when empty.
    var types: [String]
    var concealed: Bool
    var transient: Bool
    /// Seconds until the server clears the pasteboard; positive and finite (see
    /// ``problem(expires:)``).
    var expires: Double?

    /// Data up to this size goes inline in the call; more goes through a descriptor.
    static let inlineCutoff = 1 << 20

    /// What is wrong with an `--expires` value, or nil when it is fine.
    static func problem(expires: Double?) -> String? {
        guard let expires else { return nil }
        guard expires > 0, expires.isFinite else { return "--expires takes a positive number of seconds" }
        return nil
    }

    func run() async throws {
        signal(SIGPIPE, SIG_IGN)
        let input = try openInput()
        defer { if input != 0 { close(input) } }
        var options = PasteboardWriteOptions(concealed: concealed, transient: transient)
        // Past what 64 bits of milliseconds hold is never, as the server takes it.
        options.expiresInMilliseconds = expires.map { $0 * 1000 < Double(UInt64.max) ? UInt64(($0 * 1000).rounded(.up)) : .max }
        try await Session.run(target) { server in
            try await copy(input, to: server, options: options)
        }
    }

    /// Stdin, or `file` (`-` is stdin too).
    private func openInput() throws -> Int32 {
        guard let file, file != "-" else {
            if StandardStreams.stdinIsClosed { throw Failure(message: "cannot read the input: standard input is closed", status: .ioError) }
            return 0
        }
        let fd = open(file, O_RDONLY | O_CLOEXEC)
        guard fd >= 0 else {
            throw Failure(message: "cannot open \(file): \(String(cString: strerror(errno)))", status: .nothing)
        }
        var info = stat()
        if fstat(fd, &info) == 0, info.st_mode & S_IFMT == S_IFDIR {
            close(fd)
            throw Failure(message: "cannot copy \(file): it is a directory", status: .nothing)
        }
        return fd
    }

    private func copy(_ input: Int32, to server: Server, options: PasteboardWriteOptions) async throws {
        let name = target.pasteboard
        var info = stat()
        if fstat(input, &info) == 0, info.st_mode & S_IFMT == S_IFREG {
            let offset = max(0, lseek(input, 0, SEEK_CUR))
            let remaining = Int(info.st_size) - Int(offset)
            if remaining > Self.inlineCutoff {
                // A regular file: the server reads it directly, nothing passes through here.
                let types = types.isEmpty ? [Self.sniff(input, from: offset, count: remaining)] : types
                let progress = OffsetProgress.watching(input, from: offset, verb: "copied")
                do {
                    try await server.writeItemFd(name, types: types, fd: input, options: options)
                } catch {
                    progress?.finish(0)
                    throw error
                }
                progress?.finish(UInt64(remaining))
                return
            }
        }
        guard let (head, complete) = Streaming.readUpTo(input, limit: Self.inlineCutoff + 1) else {
            throw Failure(message: "cannot read the input: \(String(cString: strerror(errno)))", status: .ioError)
        }
        let types = typesToOffer(head, complete: complete)
        if complete {
            do {
                try await server.writeItem(name, types: types, data: head, options: options)
                return
            } catch let error as PasteboardError where error.code == .tooLarge && head.count > 0 {
                // The server takes less inline than we guessed: hand it over by descriptor.
            }
        }
        try await stream(head, then: complete ? nil : input, types: types, to: server, options: options)
    }

    /// Feeds `head` and then the rest of `rest` through a pipe the server reads.
    private func stream(_ head: [UInt8], then rest: Int32?, types: [String], to server: Server, options: PasteboardWriteOptions) async throws {
        var ends: [Int32] = [0, 0]
        guard pipe(&ends) == 0 else { throw Failure(message: "cannot create a pipe: \(String(cString: strerror(errno)))", status: .unavailable) }
        let (readEnd, writeEnd) = (ends[0], ends[1])
        defer { close(readEnd) }
        let progress = Progress.onTerminal("copied")
        do {
            try Threads.detach {
                if let rest {
                    if case .readFailed(let error) = Streaming.copy(from: rest, to: writeEnd, prefix: head, progress: progress) {
                        // Leaving with the pipe open: the server stores nothing whose writer
                        // left the bus without closing it.
                        Output.error("cannot read the input: \(String(cString: strerror(error)))")
                        exit(ExitStatus.ioError.rawValue)
                    }
                } else {
                    _ = Streaming.writeAll(writeEnd, head[...])
                }
                close(writeEnd)
            }
        } catch {
            close(writeEnd)
            throw error
        }
        try await server.writeItemFd(target.pasteboard, types: types, fd: readEnd, options: options)
    }

    /// The type of the `count` bytes of a regular file from `offset`: text only when all of
    /// them are UTF-8 text (mapped and checked in place: a binary file fails within its first
    /// bytes), else what its first bytes say.
    static func sniff(_ fd: Int32, from offset: Int, count: Int) -> String {
        var prefix = [UInt8](repeating: 0, count: TypeSniffer.sniffLength)
        let read = prefix.withUnsafeMutableBytes { pread(fd, $0.baseAddress, $0.count, off_t(offset)) }
        let head = Array(prefix[0..<max(0, read)])
        let page = Int(sysconf(Int32(_SC_PAGESIZE)))
        let start = offset / page * page
        let length = offset - start + count
        guard let mapped = mmap(nil, length, PROT_READ, MAP_PRIVATE, fd, off_t(start)), mapped != MAP_FAILED else {
            return TypeSniffer.sniff(head, isComplete: false)
        }
        defer { munmap(mapped, length) }
        _ = madvise(mapped, length, MADV_SEQUENTIAL)
        let bytes = UnsafeRawBufferPointer(start: mapped + (offset - start), count: count)
        return TypeSniffer.sniff(head, isText: TypeSniffer.isUTF8Text(bytes, allowingCutEnd: false))
    }

    /// `-t`'s types, else the sniffed one: from all of the input when `prefix` is all of it,
    /// else from its first bytes (a stream is sent as it is read).
    private func typesToOffer(_ prefix: [UInt8], complete: Bool) -> [String] {
        guard types.isEmpty else { return types }
        if complete { return [TypeSniffer.sniff(whole: prefix)] }
        return [TypeSniffer.sniff(prefix.prefix(TypeSniffer.sniffLength), isComplete: false)]
    }
}
