import CDBus
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
        // The name first: a bad one is the error, whatever the input.
        try Session.check(target)
        // Not closed here: when the server refuses a streamed copy, the thread reading the input
        // may still be in a read of it while this returns, and a descriptor closed under it
        // made it fail ("Bad file descriptor", 74) in the server's refusal's place (65). pbctl
        // ends with this command, and the descriptor with it.
        let input = try openInput()
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
        // The name as given, which may be any bytes (RawArguments).
        let fd = open(RawArguments.cString(file), O_RDONLY | O_CLOEXEC)
        guard fd >= 0 else {
            // A file that is not there is "no such thing" (1); one there but unreadable is
            // input that could not be read (74), as a stdin that cannot be read is.
            let code = errno
            throw Failure(message: "cannot open \(file): \(String(cString: strerror(code)))", status: code == ENOENT || code == ENOTDIR ? .nothing : .ioError)
        }
        var info = stat()
        if fstat(fd, &info) == 0, info.st_mode & S_IFMT == S_IFDIR {
            close(fd)
            throw Failure(message: "cannot copy \(file): it is a directory", status: .ioError)
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
                // Its type may take reading all of it: not for a file the server would refuse.
                if types.isEmpty, let limit = try await server.limit("max-item-bytes"), UInt64(remaining) > limit {
                    throw Self.tooLarge(limit)
                }
                let types = types.isEmpty ? [Self.sniff(input, from: offset, count: remaining)] : types
                return try await send(file: input, from: offset, count: remaining, types: types, to: server, options: options)
            }
        }
        guard let (head, complete) = Streaming.readUpTo(input, limit: Self.inlineCutoff + 1) else {
            throw Failure(message: "cannot read the input: \(String(cString: strerror(errno)))", status: .ioError)
        }
        if !complete, types.isEmpty {
            return try await copyUntyped(head, then: input, to: server, options: options)
        }
        // Here the input is all in `head`, or its types were given.
        let types = types.isEmpty ? [TypeSniffer.sniff(whole: head)] : types
        if complete {
            do {
                try await server.writeItem(name, types: types, data: head, options: options)
                return
            } catch let error as PasteboardError where error.code == .tooLarge && head.count > 0 {
                // The server takes less inline than we guessed: hand it over by descriptor. Any
                // other limit (the item's bytes, its number of types) refuses that too: said now.
                guard let inline = try await server.limit("max-inline-bytes"), UInt64(head.count) > inline else { throw error }
            }
        }
        try await stream(head, then: complete ? [] : [input], types: types, to: server, options: options)
    }

    /// Copies input of more than ``inlineCutoff`` bytes whose type depends on all of it: text
    /// only if every byte is UTF-8 text.
    ///
    /// Input seen not to be text is sniffed from its start and streamed to the server as it
    /// is read, the server's limits then bounding it. Text is held in a temporary file until
    /// its end, at most the server's `max-item-bytes` (asked first, which also finds out
    /// whether there is a server at all), then handed over as a file; if it turns out not to
    /// be text after all, what is held and the rest of the input are streamed.
    private func copyUntyped(_ head: [UInt8], then input: Int32, to server: Server, options: PasteboardWriteOptions) async throws {
        var scanner = UTF8TextScanner()
        head.withUnsafeBytes { scanner.feed($0) }
        let binary = [TypeSniffer.sniff(head, isText: false)]
        guard scanner.mayBeText else {
            return try await stream(head, then: [input], types: binary, to: server, options: options)
        }
        let limit = try await server.limit("max-item-bytes") ?? .max
        // Left open, as the input is (see ``run()``): a thread may still be streaming it.
        let spool = try Self.spool(head, then: input, scanner: scanner, limit: limit, inMemory: options.concealed || options.transient)
        switch spool.end {
        case .whole(let isText):
            let types = [TypeSniffer.sniff(head, isText: isText)]
            try await send(file: spool.fd, from: 0, count: spool.size, types: types, to: server, options: options)
        case .notText:
            try await stream([], then: [spool.fd, input], types: binary, to: server, options: options)
        case .tooLarge:
            throw Self.tooLarge(limit)
        }
    }

    /// The server's refusal of an item over `max-item-bytes`, said before sending it.
    static func tooLarge(_ limit: UInt64) -> PasteboardError {
        .tooLarge("the input exceeds \(limit) bytes (max-item-bytes), the most one item may hold")
    }

    /// Hands the server a regular file to read from `offset`, its `count` bytes; their progress
    /// shown on a terminal (see ``OffsetProgress``).
    private func send(file fd: Int32, from offset: off_t, count: Int, types: [String], to server: Server, options: PasteboardWriteOptions) async throws {
        let progress = OffsetProgress.watching(fd, from: offset, verb: "copied")
        do {
            try await server.writeItemFd(target.pasteboard, types: types, fd: fd, options: options)
        } catch {
            progress?.abandon()
            throw error
        }
        progress?.finish(UInt64(count))
    }

    /// Feeds `head` and then each of `rest` to its end through a pipe the server reads.
    private func stream(_ head: [UInt8], then rest: [Int32], types: [String], to server: Server, options: PasteboardWriteOptions) async throws {
        var ends: [Int32] = [0, 0]
        guard pipe(&ends) == 0 else { throw Failure(message: "cannot create a pipe: \(String(cString: strerror(errno)))", status: .unavailable) }
        let (readEnd, writeEnd) = (ends[0], ends[1])
        defer { close(readEnd) }
        let progress = Progress.onTerminal("copied")
        do {
            try Threads.detach {
                if rest.isEmpty {
                    _ = Streaming.writeAll(writeEnd, head[...])
                }
                var total: UInt64 = 0
                for (index, source) in rest.enumerated() {
                    let copied = Streaming.copy(
                        from: source, to: writeEnd, prefix: index == 0 ? head : [], progress: progress,
                        progressOffset: total, last: index == rest.count - 1)
                    switch copied {
                    case .readFailed(let error):
                        // Leaving with the pipe open: the server stores nothing whose writer
                        // left the bus without closing it. `_exit`, not `exit`: the main thread
                        // may be ending pbctl at the same moment, and exit's clean-up is not
                        // for two threads at once.
                        Output.error("cannot read the input: \(String(cString: strerror(error)))")
                        _exit(ExitStatus.ioError.rawValue)
                    case .all(let count), .stopped(let count):
                        total += count
                    case .writeFailed:
                        break
                    }
                }
                close(writeEnd)
            }
        } catch {
            close(writeEnd)
            throw error
        }
        try await server.writeItemFd(target.pasteboard, types: types, fd: readEnd, options: options)
    }

    /// What ``spool(_:then:scanner:limit:inMemory:)`` holds.
    struct Spool {
        enum End {
            /// All of the input; `isText` when every byte of it is UTF-8 text.
            case whole(isText: Bool)
            /// The input stopped being text: the rest of it is still to be read.
            case notText
            /// The input, all text so far, went past the limit.
            case tooLarge
        }

        /// An unnamed temporary file, its offset back at its start.
        let fd: Int32
        let size: Int
        let end: End
    }

    /// `head`, then the rest of `input`, in an unnamed temporary file (in `TMPDIR`, else
    /// `/var/tmp`, else memory; `inMemory`, for data that must not reach a disk, in memory
    /// only), while it may be text and is at most `limit` bytes. `scanner` has seen `head`
    /// and goes on checking what follows.
    static func spool(_ head: [UInt8], then input: Int32, scanner: UTF8TextScanner, limit: UInt64 = .max, inMemory: Bool = false) throws -> Spool {
        let directories = inMemory ? [] : [getenv("TMPDIR").map { String(cString: $0) }, "/var/tmp", "/tmp"].compactMap { $0 }
        var fd: Int32 = -1
        for directory in directories where fd < 0 {
            fd = open(directory, cdbus_O_TMPFILE | O_RDWR | O_CLOEXEC, 0o600)
        }
        if fd < 0 { fd = memfd_create("pbctl-copy", cdbus_MFD_CLOEXEC) }
        guard fd >= 0 else { throw Failure(message: "cannot make a temporary file for the input: \(String(cString: strerror(errno)))", status: .ioError) }
        var scanner = scanner
        let copied = Streaming.copy(
            from: input, to: fd, prefix: head, progress: Progress.onTerminal("read"), inspect: { scanner.feed($0) },
            stop: { total in !scanner.mayBeText || total > limit })
        switch copied {
        case .all(let total), .stopped(let total):
            lseek(fd, 0, SEEK_SET)
            let end: Spool.End
            if case .all = copied {
                end = .whole(isText: scanner.isWholeText)
            } else {
                end = scanner.mayBeText ? .tooLarge : .notText
            }
            return Spool(fd: fd, size: Int(total), end: end)
        case .readFailed(let error):
            close(fd)
            throw Failure(message: "cannot read the input: \(String(cString: strerror(error)))", status: .ioError)
        case .writeFailed(let error):
            close(fd)
            throw Failure(message: "cannot hold the input in a temporary file (\(String(cString: strerror(error)))); give its type with -t to send it as it is read", status: .ioError)
        }
    }

    /// The type of the `count` bytes of a regular file from `offset`: text only when all of
    /// them are UTF-8 text (a binary file fails within its first bytes), else what its first
    /// bytes say.
    static func sniff(_ fd: Int32, from offset: Int, count: Int) -> String {
        var prefix = [UInt8](repeating: 0, count: TypeSniffer.sniffLength)
        let read = prefix.withUnsafeMutableBytes { pread(fd, $0.baseAddress, $0.count, off_t(offset)) }
        let head = Array(prefix[0..<max(0, read)])
        return TypeSniffer.sniff(head, isText: isUTF8Text(fd, from: offset, count: count))
    }

    /// Whether `count` bytes of a file from `offset` are UTF-8 text, read a mebibyte at a time
    /// (not mapped: a file cut short meanwhile would kill pbctl with `SIGBUS`).
    static func isUTF8Text(_ fd: Int32, from offset: Int, count: Int) -> Bool {
        var buffer = [UInt8](repeating: 0, count: 1 << 20)
        var scanner = UTF8TextScanner()
        var position = offset
        let end = offset + count
        while position < end {
            let read = buffer.withUnsafeMutableBytes { pread(fd, $0.baseAddress, min($0.count, end - position), off_t(position)) }
            if read < 0, errno == EINTR { continue }
            // Cut short or unreadable: what was read decides, as the server reads no more.
            guard read > 0 else { break }
            buffer.withUnsafeBytes { scanner.feed(UnsafeRawBufferPointer(rebasing: $0[0..<read])) }
            position += read
        }
        return scanner.isWholeText
    }
}
