import ArgumentParser

#if canImport(Glibc)
import Glibc
#endif

/// Where `pbctl` starts: the common command lines are read by ``QuickLine``, everything else
/// (help, completion, every usage error, `watch`) by ArgumentParser through ``Pbctl``. Either
/// way the work runs on the main thread (``MainThreadExecutor``).
@main
enum Entry {
    static func main() {
        // One malloc arena: any thread pbctl starts (a large copy's writer, a watch's child's
        // pipes) would otherwise map a 128 MiB arena of its own (four system calls and their
        // page faults) in a process that lives a few milliseconds. mallopt comes from
        // malloc.h, which the Glibc module leaves out (see the end of this file).
        _ = mallopt(M_ARENA_MAX, 1)
        // A reader that goes away (`pbctl list | head -1`) fails the next write with EPIPE,
        // which ends pbctl with status 0 (``Output``), instead of killing it (status 141, which
        // `set -o pipefail` takes for a failure). Commands pbctl runs get SIGPIPE back.
        signal(SIGPIPE, SIG_IGN)
        StandardStreams.reserve()
        refuseArgumentsThatCannotBeBytes()
        MainThreadExecutor.run {
            let arguments = ExecCommand.separate(AttachedValues.split(CommandLine.arguments.dropFirst())).line
            guard let job = QuickLine.job(for: arguments, commands: Pbctl.quickCommands) else {
                refuseUnknownCommands(arguments)
                await Pbctl.main(arguments)
                exit(ExitStatus.success.rawValue)
            }
            do {
                try await job.run()
            } catch let failure as Failure {
                failure.report()
                exit(failure.status.rawValue)
            } catch {
                Pbctl.exit(withError: error)
            }
            exit(ExitStatus.success.rawValue)
        }
    }
}

extension Entry {
    /// `pbctl NAME` and `pbctl help NAME` for a command there is not: a usage error that says
    /// so, and which command was likely meant (`pbctl pase`), rather than ArgumentParser's
    /// "Unexpected argument". Its own `help` would print the general help with status 0, which
    /// a script cannot tell from help on a command it named right.
    private static func refuseUnknownCommands(_ arguments: [String]) {
        // ArgumentParser's own options, whose values are no commands.
        guard !arguments.contains(where: { $0.hasPrefix("--generate-completion-script") || $0.hasPrefix("--experimental") }) else { return }
        // The words of the line, without the global options and their values (AttachedValues
        // has split `-pNAME` already). Any other option before the command (a command's option
        // given too early) is ArgumentParser's to name.
        var words: [String] = []
        var index = arguments.startIndex
        while index < arguments.endIndex, words.count < 2 {
            let argument = arguments[index]
            if QuickLine.globalOption(argument) != nil {
                index += 2
                continue
            }
            if argument == "--" { break }
            if argument.hasPrefix("-") {
                // Help and the version do not make an unknown command known; nor does a global
                // option with its value attached (`--address=BUS`, `-p=NAME`).
                let name = argument.prefix { $0 != "=" }
                let global = ["-h", "--help", "--version"].contains(argument)
                    || name.count < argument.count && QuickLine.globalOption(String(name)) != nil
                guard !words.isEmpty || global else { return }
            } else {
                words.append(argument)
            }
            index += 1
        }
        guard let first = words.first else { return }
        let named = first == "help" ? words.dropFirst().first : first
        // `help` itself is one (ArgumentParser's, which describes it).
        guard let name = named, name != "help" else { return }
        let commands = Pbctl.configuration.subcommands.map { $0._commandName }
        guard !commands.contains(name) else { return }
        let likely = commands.filter { EditDistance.between($0, name) <= 2 }
        let suggestion = likely.isEmpty ? "" : " (did you mean \(likely.map { "'\($0)'" }.joined(separator: " or "))?)"
        Output.error("no command '\(name)'\(suggestion); 'pbctl --help' lists them")
        exit(ExitStatus.usage.rawValue)
    }

    /// The options whose value is the next argument, other than `-p` and `-t` (said apart).
    private static let valueOptions: Set<String> = ["--address", "--expires", "--item", "--since", "--limit", "--mime", "--extension", "--comment"]

    /// Exits when an argument that is not valid UTF-8 is one that must be text.
    ///
    /// Swift repairs invalid UTF-8 in the arguments, which would turn a bad pasteboard name or
    /// type silently into another one: those are refused as the invalid input they are (65),
    /// and an option or an option's value as a usage error (64). A file to copy and the
    /// command after `--exec` may be any bytes, as Linux allows: they are kept as given
    /// (``RawArguments``).
    private static func refuseArgumentsThatCannotBeBytes() {
        let arguments = CommandLine.arguments
        // Everything after `--exec` is the command's own (ExecCommand).
        let exec = arguments.indices.dropFirst().first { arguments[$0] == "--exec" || arguments[$0].hasPrefix("--exec=") } ?? arguments.count
        for (index, _, raw) in RawArguments.invalid where index < exec {
            let previous = arguments[index - 1]
            // `-pNAME`, `-p=NAME`, `-tTYPE` name them too (AttachedValues).
            let attachedName = strncmp(raw, "-p", 2) == 0 && raw[2] != 0
            let attachedType = strncmp(raw, "-t", 2) == 0 && raw[2] != 0
            if previous == "-p" || previous == "--pasteboard" || strncmp(raw, "--pasteboard=", 13) == 0 || attachedName {
                Output.error("the pasteboard name (argument \(index)) is not valid UTF-8; a pasteboard name is 1 to 255 bytes of UTF-8 without control characters")
                exit(ExitStatus.refused.rawValue)
            }
            if previous == "-t" || previous == "--type" || strncmp(raw, "--type=", 7) == 0 || attachedType {
                Output.error("the type (argument \(index)) is not valid UTF-8; a type is a MIME type or a type identifier, in ASCII")
                exit(ExitStatus.refused.rawValue)
            }
            if raw[0] == CChar(UInt8(ascii: "-")) || valueOptions.contains(previous) {
                Output.error("argument \(index) is not valid UTF-8; options and their values must be valid UTF-8")
                exit(ExitStatus.usage.rawValue)
            }
        }
        if let (earlier, later) = RawArguments.readingAlike {
            Output.error("arguments \(earlier) and \(later) are not valid UTF-8 and would read alike, so could not be told apart; rename one")
            exit(ExitStatus.usage.rawValue)
        }
    }
}

/// glibc's `mallopt` and `M_ARENA_MAX` (from `malloc.h`, which the Glibc module leaves out).
@_silgen_name("mallopt")
private func mallopt(_ parameter: Int32, _ value: Int32) -> Int32
private let M_ARENA_MAX: Int32 = -8
