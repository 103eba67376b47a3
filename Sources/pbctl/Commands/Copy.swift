import ArgumentParser
import Foundation
import Pasteboard

/// `pbctl copy`: stdin (or a file) becomes the pasteboard's one item.
struct Copy: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Copy stdin (or FILE) to the pasteboard as one item.",
        discussion: """
            Without -t the type is text/plain;charset=utf-8 for UTF-8 text, else sniffed from the \
            first bytes (image/png, application/pdf, …), else application/octet-stream. With several \
            -t the same bytes are offered under each type. Large data travels through a file \
            descriptor and is never held in memory.
            """)

    @OptionGroup var global: GlobalOptions

    @Argument(help: "A file to copy instead of stdin.")
    var file: String?

    @Option(name: [.customShort("t"), .customLong("type")], help: ArgumentHelp("Offer the data as TYPE (repeatable).", valueName: "TYPE"))
    var types: [String] = []

    @Flag(help: "A secret: never stored on disk or in history (password managers).")
    var concealed = false

    @Flag(help: "Not recorded in history and not stored on disk.")
    var transient = false

    @Option(help: ArgumentHelp("Clear the pasteboard after SECONDS.", valueName: "SECONDS"))
    var expires: Double?

    /// Data up to this size goes inline in the call; more goes through a descriptor.
    static let inlineCutoff = 1 << 20

    func validate() throws {
        if let expires, !(expires > 0) || !expires.isFinite {
            throw ValidationError("--expires takes a positive number of seconds")
        }
    }

    func run() async throws {
        signal(SIGPIPE, SIG_IGN)
        try await reportingFailures {
            let input = try openInput()
            defer { if file != nil { close(input) } }
            var options = PasteboardProxy.WriteOptions(concealed: concealed, transient: transient)
            options.expiresInMilliseconds = expires.map { UInt64(($0 * 1000).rounded(.up)) }
            try await Session.run(global) { proxy in
                try await copy(input, to: proxy, options: options)
            }
        }
    }

    private func openInput() throws -> Int32 {
        guard let file else { return 0 }
        let fd = open(file, O_RDONLY | O_CLOEXEC)
        guard fd >= 0 else {
            throw Failure(message: "cannot open \(file): \(String(cString: strerror(errno)))", status: .nothing)
        }
        return fd
    }

    private func copy(_ input: Int32, to proxy: PasteboardProxy, options: PasteboardProxy.WriteOptions) async throws {
        let name = global.pasteboard
        var info = stat()
        if fstat(input, &info) == 0, info.st_mode & S_IFMT == S_IFREG {
            let offset = max(0, lseek(input, 0, SEEK_CUR))
            let remaining = Int(info.st_size) - Int(offset)
            if remaining > Self.inlineCutoff {
                // A regular file: the server reads it directly, nothing passes through here.
                var prefix = [UInt8](repeating: 0, count: TypeSniffer.sniffLength)
                let count = prefix.withUnsafeMutableBytes { pread(input, $0.baseAddress, $0.count, offset) }
                let types = try typesToOffer(Array(prefix[0..<max(0, count)]), complete: false)
                try await proxy.writeItemsFd(name, [types.map { ($0, input) }], options: options)
                return
            }
        }
        guard let (head, complete) = Streaming.readUpTo(input, limit: Self.inlineCutoff + 1) else {
            throw Failure(message: "cannot read the input: \(String(cString: strerror(errno)))", status: .nothing)
        }
        let types = try typesToOffer(head, complete: complete)
        if complete {
            let data = Data(head)
            do {
                try await proxy.writeItems(name, [types.map { ($0, data) }], options: options)
                return
            } catch let error as PasteboardError where error.code == .tooLarge && head.count > 0 {
                // The server takes less inline than we guessed: hand it over by descriptor.
            }
        }
        try await stream(head, then: complete ? nil : input, types: types, to: proxy, options: options)
    }

    /// Feeds `head` and then the rest of `rest` through a pipe the server reads.
    private func stream(_ head: [UInt8], then rest: Int32?, types: [String], to proxy: PasteboardProxy, options: PasteboardProxy.WriteOptions) async throws {
        var ends: [Int32] = [0, 0]
        guard pipe(&ends) == 0 else { throw Failure(message: "cannot create a pipe: \(String(cString: strerror(errno)))", status: .unavailable) }
        let (readEnd, writeEnd) = (ends[0], ends[1])
        defer { close(readEnd) }
        let progress = Progress.onTerminal("copied")
        let feeder = Thread {
            if let rest {
                Streaming.copy(from: rest, to: writeEnd, prefix: head, progress: progress)
            } else {
                _ = Streaming.writeAll(writeEnd, head[...])
            }
            close(writeEnd)
        }
        feeder.start()
        try await proxy.writeItemsFd(global.pasteboard, [types.map { ($0, readEnd) }], options: options)
    }

    private func typesToOffer(_ prefix: [UInt8], complete: Bool) throws -> [String] {
        guard types.isEmpty else { return types }
        return [TypeSniffer.sniff(prefix.prefix(TypeSniffer.sniffLength), isComplete: complete && prefix.count <= TypeSniffer.sniffLength)]
    }
}
