#if canImport(Glibc)
import Glibc
#endif

/// Writing to stdout and stderr without buffering surprises: every line a watcher prints
/// reaches a pipe at once.
enum Output {
    static func line(_ text: String) {
        write(1, Array((text + "\n").utf8))
    }

    static func error(_ message: String) {
        write(2, Array("pbctl: \(message)\n".utf8))
    }

    /// Writes all of `bytes`, giving up silently if the reader went away.
    static func write(_ fd: Int32, _ bytes: [UInt8]) {
        _ = Streaming.writeAll(fd, bytes[...])
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
