#if canImport(Glibc)
import Glibc
#endif

/// Writing to stdout and stderr without buffering surprises: every line a watcher prints
/// reaches a pipe at once.
///
/// Output that cannot be written ends pbctl: quietly with status 0 when the reader has gone
/// (`pbctl list | head -1`; pbctl ignores SIGPIPE from its start, see ``Entry``), else with a
/// message and status 74, so that `pbctl paste > file` on a full disk is not taken for a
/// success.
enum Output {
    static func line(_ text: String) {
        toStdout(Array((text + "\n").utf8))
    }

    /// Writes all of `bytes` to stdout, or ends pbctl (see ``Output``).
    static func toStdout(_ bytes: [UInt8]) {
        if StandardStreams.stdoutIsClosed { stdoutFailed(EBADF) }
        if !Streaming.writeAll(1, bytes[...]) { stdoutFailed(errno) }
    }

    /// Ends pbctl after a write to stdout failed with `error`.
    static func stdoutFailed(_ error: Int32) -> Never {
        if error == EPIPE { exit(ExitStatus.success.rawValue) }
        Self.error("cannot write the output: \(String(cString: strerror(error)))")
        exit(ExitStatus.ioError.rawValue)
    }

    /// Ends pbctl, as a failed write would, as soon as the reader of stdout goes away, without
    /// waiting for the next line to find it gone: `pbctl watch | head -1` then returns after
    /// the first change, not after the second. A thread waits in `poll` for the error a pipe
    /// reports to its writer once no reader is left (a file or a terminal never reports one).
    static func endWhenTheReaderLeaves() {
        try? Threads.detach {
            var stdout = pollfd(fd: 1, events: 0, revents: 0)
            while true {
                let ready = poll(&stdout, 1, -1)
                if ready < 0, errno == EINTR { continue }
                guard ready > 0, stdout.revents & Int16(POLLERR) != 0 else { return }
                // `_exit`, not `exit`: from this thread, `exit`'s clean-up could wait forever
                // for a lock the main thread holds. pbctl writes its output unbuffered, so
                // there is nothing to flush. A `watch --exec` command running now ends too.
                ChildProcess.endRunning()
                _exit(ExitStatus.success.rawValue)
            }
        }
    }

    static func error(_ message: String) {
        toStderr(Array("pbctl: \(message)\n".utf8))
    }

    /// Writes all of `bytes` to stderr; nothing more can be said if that fails.
    static func toStderr(_ bytes: [UInt8]) {
        _ = Streaming.writeAll(2, bytes[...])
    }

    static var stderrIsTerminal: Bool { isatty(2) == 1 }

    /// A JSON string literal.
    static func json(_ text: String) -> String {
        var out = "\""
        for scalar in text.unicodeScalars {
            switch scalar {
            case "\"": out += "\\\""
            case "\\": out += "\\\\"
            case "\n": out += "\\n"
            case "\r": out += "\\r"
            case "\t": out += "\\t"
            case _ where scalar.value < 0x20:
                let hex = String(scalar.value, radix: 16)
                out += "\\u" + String(repeating: "0", count: 4 - hex.count) + hex
            default: out.unicodeScalars.append(scalar)
            }
        }
        return out + "\""
    }

    static func json(_ strings: [String]) -> String {
        "[" + strings.map(json).joined(separator: ",") + "]"
    }

    /// A change as `watch --json` prints it, `{"name", "count", "types"}`, and as
    /// `history --json` does, with the `time` of its write (unix milliseconds) too.
    static func changeJSON(name: String, count: UInt64, time: Int64? = nil, types: [String]) -> String {
        let written = time.map { ",\"time\":\($0)" } ?? ""
        return "{\"name\":\(json(name)),\"count\":\(count)\(written),\"types\":\(json(types))}"
    }
}
