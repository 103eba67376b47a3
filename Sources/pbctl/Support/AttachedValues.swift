/// Splits a short option's attached value from it (`-ttext/html` → `-t text/html`, `-pnotes` →
/// `-p notes`), as getopt reads them and as people used to `wl-paste -tTYPE` type them.
///
/// ArgumentParser would read `-pnotes` as a cluster of flags (`-p -n -o …`) and refuse it.
/// pbctl's only short options, `-p` and `-t`, both take a value, so an argument starting with
/// either can be nothing else. `-p=NAME` is left to ArgumentParser, which reads it already;
/// nothing after `--` or `--exec` (or `--exec=CMD`: another program's arguments) is touched.
enum AttachedValues {
    /// The short options that take a value.
    static let options = ["-p", "-t"]

    static func split(_ arguments: some Collection<String>) -> [String] {
        var result: [String] = []
        result.reserveCapacity(arguments.count + 1)
        var remaining = arguments[...]
        while let argument = remaining.popFirst() {
            if argument == "--" || argument == "--exec" || argument.hasPrefix("--exec=") {
                result.append(argument)
                result.append(contentsOf: remaining)
                break
            }
            let utf8 = argument.utf8
            if utf8.count > 2, let option = options.first(where: { argument.hasPrefix($0) }), utf8.dropFirst(2).first != UInt8(ascii: "=") {
                result.append(option)
                result.append(String(argument.dropFirst(2)))
            } else {
                result.append(argument)
            }
        }
        return result
    }
}
