/// The command `pbctl watch --exec CMD...` runs: every argument after `--exec`, taken out of
/// the line before ArgumentParser reads it.
///
/// ArgumentParser matches pbctl's own options anywhere on the line, even among the values of
/// an option that takes the rest of it: `watch --exec grep -p x` was refused for `-p` lacking
/// a value. So the command's arguments never reach it: it reads `--exec` and one stand-in,
/// which `Watch` swaps for the command.
enum ExecCommand {
    static let standIn = "pbctl-exec-command"

    /// The command of this process's line (empty without `--exec`).
    static let command: [String] = separate(AttachedValues.split(CommandLine.arguments.dropFirst())).command

    /// `arguments` with what follows `--exec` replaced by the stand-in, and what followed it
    /// (`--exec=CMD ARG...` names CMD in the same argument). An `--exec` after `--` is a
    /// positional argument, and is left alone.
    static func separate(_ arguments: [String]) -> (line: [String], command: [String]) {
        let attached = "--exec="
        guard let exec = arguments.firstIndex(where: { $0 == "--exec" || $0.hasPrefix(attached) || $0 == "--" }), arguments[exec] != "--" else {
            return (arguments, [])
        }
        var command = Array(arguments[(exec + 1)...])
        if arguments[exec].hasPrefix(attached) { command.insert(String(arguments[exec].dropFirst(attached.count)), at: 0) }
        return (Array(arguments[..<exec]) + ["--exec"] + (command.isEmpty ? [] : [standIn]), command)
    }
}
