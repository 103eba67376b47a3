#if canImport(Glibc)
import Glibc
#endif

/// The bytes of the arguments that are not valid UTF-8, for the places where an argument
/// reaches the system as it was given: the file `copy` reads, and the command `watch --exec`
/// runs with its arguments.
///
/// Swift turns every argument into a `String`, replacing what is not UTF-8 with U+FFFD, and
/// a Linux file name is any bytes: `caf\xe9.txt` (a Latin-1 name) would become another name,
/// one that does not exist. The text Swift made stands for the argument everywhere else (and
/// is what messages show); these bytes are looked up by that text where it is opened or run.
/// ``Entry`` refuses a line where two such arguments would read alike.
enum RawArguments {
    /// Each argument of this process's line that is not UTF-8: its place on the line, the text
    /// Swift decoded it to (as in `CommandLine.arguments`), and its bytes, NUL-terminated.
    static let invalid: [(index: Int, text: String, bytes: [CChar])] = (1..<max(1, Int(CommandLine.argc))).compactMap { index in
        guard let raw = CommandLine.unsafeArgv[index], String(validatingCString: raw) == nil else { return nil }
        return (index, String(cString: raw), Array(UnsafeBufferPointer(start: raw, count: strlen(raw) + 1)))
    }

    /// Their bytes by their text (the first, where two read alike).
    private static let byText = Dictionary(invalid.map { ($0.text, $0.bytes) }, uniquingKeysWith: { first, _ in first })

    /// The places of two arguments that differ but read alike, so that the text of one would
    /// stand for both; nil when there are none.
    static var readingAlike: (Int, Int)? {
        for (position, later) in invalid.enumerated() {
            if let earlier = invalid[..<position].first(where: { $0.text == later.text && $0.bytes != later.bytes }) {
                return (earlier.index, later.index)
            }
        }
        return nil
    }

    /// `argument` as the command line gave it, NUL-terminated: for `open`, `stat`, an `argv`.
    static func cString(_ argument: String) -> [CChar] {
        byText[argument] ?? Array(argument.utf8CString)
    }
}
