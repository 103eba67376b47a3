#if canImport(Glibc)
import Glibc
#endif

/// `pbctl paste`: the best matching data to stdout.
struct PasteJob: Job {
    var target: Target
    /// Accepted types in order of preference; ``BestData/defaultTypes`` when empty.
    var types: [String]
    var item: UInt32

    func run() async throws {
        signal(SIGPIPE, SIG_IGN)
        try await Session.run(target) { server in
            switch try await BestData.read(server, name: target.pasteboard, item: item, types: types.isEmpty ? BestData.defaultTypes : types) {
            case .bytes(let data):
                Output.write(1, data)
            case .descriptor(let fd):
                defer { close(fd) }
                Streaming.copy(from: fd, to: 1, progress: Progress.onTerminal("pasted"))
            }
        }
    }
}
