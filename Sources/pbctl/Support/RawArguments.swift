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
    /// Each argument of this process's line that is not UTF-8, NUL-terminated, by the text
    /// Swift decoded it to.
    static let byText: [String: [CChar]] = {
        var table: [String: [CChar]] = [:]
        for index in 1..<max(1, Int(CommandLine.argc)) {
            guard let raw = CommandLine.unsafeArgv[index], String(validatingCString: raw) == nil else { continue }
            table[String(cString: raw)] = Array(UnsafeBufferPointer(start: raw, count: strlen(raw) + 1))
        }
        return table
    }()

    /// Calls `body` with `argument` as the command line gave it.
    static func withCString<Result>(_ argument: String, _ body: (UnsafePointer<CChar>) throws -> Result) rethrows -> Result {
        guard let raw = byText[argument] else { return try argument.withCString(body) }
        return try raw.withUnsafeBufferPointer { try body($0.baseAddress!) }
    }

    /// A `malloc`ed copy of `argument` as the command line gave it, for an `argv`.
    static func duplicate(_ argument: String) -> UnsafeMutablePointer<CChar>? {
        withCString(argument) { strdup($0) }
    }
}
