import PasteboardModel

/// Reads the command lines scripts type most, such as `pbctl copy`, `pbctl -p find paste -t
/// text/html`, without ArgumentParser; every other line goes to ArgumentParser.
///
/// Why: ArgumentParser finds a command's options by reflecting over the command types, which
/// takes longer than the rest of a `pbctl paste` put together. So a line goes the quick way
/// only when it is plainly well formed: a known command of ``Pbctl/quickCommands`` and only
/// options it knows, each spelled out (`--type TYPE` or `-t TYPE`, not `--type=TYPE`; `-tTYPE`
/// is split before, by ``AttachedValues``), each
/// value a separate argument that does not start with `-`, no option given twice unless it
/// may be, no `--`, no `help`, and values that convert and validate. For any other line,
/// help, completion scripts and every error message, ArgumentParser reads the line, so the
/// output is ArgumentParser's own.
struct QuickLine: Sendable {
    /// `-p`/`--pasteboard` and `--address`, before or after the command.
    var target = Target(pasteboard: "general", address: nil)
    /// The flags given, by name.
    var flags: [String] = []
    /// The options given, by name, with their values, in order.
    var options: [(name: String, value: String)] = []
    /// The positional arguments, in order.
    var positionals: [String] = []

    /// The job for `arguments` (without the program name), or nil when ArgumentParser should
    /// read them.
    static func job(for arguments: some Collection<String>, commands: [QuickSyntax]) -> (any Job)? {
        var line = QuickLine()
        var command: QuickSyntax? = nil
        var globalsSeen: [String] = []
        var remaining = arguments[...]
        while let argument = remaining.popFirst() {
            guard argument != "help" else { return nil }
            guard argument.hasPrefix("-") else {
                if let command {
                    line.positionals.append(argument)
                    guard line.positionals.count <= command.positionals else { return nil }
                } else {
                    guard let named = commands.first(where: { $0.name == argument }) else { return nil }
                    command = named
                }
                continue
            }
            if let global = globalOption(argument) {
                guard let value = remaining.popFirst(), !value.hasPrefix("-"), !globalsSeen.contains(global) else { return nil }
                globalsSeen.append(global)
                if global == "address" { line.target.address = value } else { line.target.pasteboard = value }
                continue
            }
            // A command's own options come after its name, as ArgumentParser wants them.
            guard let command else { return nil }
            if let flag = command.flags.first(where: { $0.spelling == argument })?.name {
                guard !line.flags.contains(flag) else { return nil }
                line.flags.append(flag)
            } else if let option = command.options.first(where: { $0.spelling == argument })?.name {
                guard let value = remaining.popFirst(), !value.hasPrefix("-") else { return nil }
                guard command.repeatable.contains(option) || !line.options.contains(where: { $0.name == option }) else { return nil }
                line.options.append((option, value))
            } else {
                return nil
            }
        }
        guard let command else { return nil }
        return try? command.job(line)
    }

    /// The name of the global option `argument` spells, if it is one.
    static func globalOption(_ argument: String) -> String? {
        switch argument {
        case "-p", "--pasteboard": "pasteboard"
        case "--address": "address"
        default: nil
        }
    }
}
