/// Splits a short option's attached value from it (`-ttext/html` → `-t text/html`, `-pnotes` →
/// `-p notes`), as getopt reads them and as people used to `wl-paste -tTYPE` type them.
///
/// ArgumentParser would read `-pnotes` as a cluster of flags (`-p -n -o …`) and refuse it.
/// pbctl's only short options, `-p` and `-t`, both take a value, so an argument starting with
/// either can be nothing else. `-p=NAME` is left to ArgumentParser, which reads it already;
/// nothing after `--` or `--exec` (or `--exec=CMD`: another program's arguments) is touched.
/// A value that starts with `-` (`-p-notes`, the pasteboard `-notes`, as getopt reads it)
/// becomes the long option with `=` (`--pasteboard=-notes`): apart, ArgumentParser would take
/// it for an option.
enum AttachedValues {
    /// The short options that take a value. (Plain strings: this runs at every start, where
    /// generic collections of tuples or dictionaries cost type metadata made at run time.)
    static let options = ["-p", "-t"]

    /// The long spelling of one of ``options``.
    static func long(_ option: String) -> String {
        option == "-p" ? "--pasteboard" : "--type"
    }

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
                let value = String(argument.dropFirst(2))
                if value.hasPrefix("-") {
                    result.append(long(option) + "=" + value)
                } else {
                    result.append(option)
                    result.append(value)
                }
            } else {
                result.append(argument)
            }
        }
        return result
    }
}
