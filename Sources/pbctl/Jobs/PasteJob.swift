#if canImport(Glibc)
import Glibc
#endif

/// `pbctl paste`: the best matching data to stdout.
struct PasteJob: Job {
    var target: Target
    /// Accepted types in order of preference; ``BestData/defaultTypes`` when empty.
    var types: [String]
    /// Nil: the first item that satisfies `types`.
    var item: UInt32?

    func run() async throws {
        try await Session.run(target) { server in
            switch try await BestData.read(server, name: target.pasteboard, item: item, types: types.isEmpty ? BestData.defaultTypes : types) {
            case .bytes(let data):
                Output.toStdout(data)
            case .descriptor(let fd, let size):
                defer { close(fd) }
                if StandardStreams.stdoutIsClosed { Output.stdoutFailed(EBADF) }
                switch Streaming.copy(from: fd, to: 1, progress: Progress.onTerminal("pasted", dataTo: 1)) {
                case .all(let copied) where size >= 0 && copied != UInt64(size):
                    // A pipe ends the same way whether all was sent or the server stopped: the
                    // size the server gave tells them apart.
                    throw Failure(message: "the data ended after \(copied) of its \(size) bytes: the server stopped or failed while sending it; paste again", status: .ioError)
                case .all, .stopped: break
                case .writeFailed(let error): Output.stdoutFailed(error)
                case .readFailed(let error): throw Failure(message: "cannot read the data from the server: \(String(cString: strerror(error)))", status: .ioError)
                }
            }
        }
    }
}
