#if canImport(Glibc)
import Glibc
#endif

/// Writing to stdout and stderr without buffering surprises: every line a watcher prints
/// reaches a pipe at once.
///
/// Output that cannot be written ends pbctl: quietly with status 0 when the reader has gone
/// (`pbctl watch | head -1`, as SIGPIPE would, which libdbus ignores), else with a message and
/// status 74, so that `pbctl paste > file` on a full disk is not taken for a success.
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
}
