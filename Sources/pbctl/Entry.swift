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
        StandardStreams.reserve()
        refuseArgumentsThatCannotBeBytes()
        MainThreadExecutor.run {
            let arguments = ExecCommand.separate(AttachedValues.split(CommandLine.arguments.dropFirst())).line
            guard let job = QuickLine.job(for: arguments, commands: Pbctl.quickCommands) else {
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
        var afterExec = false
        var kept: [String: (index: Int, bytes: [CChar])] = [:]
        for index in 1..<max(1, Int(CommandLine.argc)) {
            guard let raw = CommandLine.unsafeArgv[index] else { continue }
            guard String(validatingCString: raw) == nil else {
                if strcmp(raw, "--exec") == 0 || strncmp(raw, "--exec=", 7) == 0 { afterExec = true }
                continue
            }
            let previous = CommandLine.unsafeArgv[index - 1].flatMap { String(validatingCString: $0) }
            // `-pNAME`, `-p=NAME`, `-tTYPE` name them too (AttachedValues).
            let attachedName = strncmp(raw, "-p", 2) == 0 && raw[2] != 0
            let attachedType = strncmp(raw, "-t", 2) == 0 && raw[2] != 0
            if !afterExec, previous == "-p" || previous == "--pasteboard" || strncmp(raw, "--pasteboard=", 13) == 0 || attachedName {
                Output.error("the pasteboard name (argument \(index)) is not valid UTF-8; a pasteboard name is 1 to 255 bytes of UTF-8 without control characters")
                exit(ExitStatus.refused.rawValue)
            }
            if !afterExec, previous == "-t" || previous == "--type" || strncmp(raw, "--type=", 7) == 0 || attachedType {
                Output.error("the type (argument \(index)) is not valid UTF-8; a type is a MIME type or a type identifier, in ASCII")
                exit(ExitStatus.refused.rawValue)
            }
            if !afterExec, raw[0] == CChar(UInt8(ascii: "-")) || previous.map(valueOptions.contains) == true {
                Output.error("argument \(index) is not valid UTF-8; options and their values must be valid UTF-8")
                exit(ExitStatus.usage.rawValue)
            }
            let bytes = Array(UnsafeBufferPointer(start: raw, count: strlen(raw) + 1))
            let text = String(cString: raw)
            if let earlier = kept[text], earlier.bytes != bytes {
                Output.error("arguments \(earlier.index) and \(index) are not valid UTF-8 and would read alike; rename one of the files")
                exit(ExitStatus.usage.rawValue)
            }
            kept[text] = (index, bytes)
        }
    }
}

/// glibc's `mallopt` and `M_ARENA_MAX` (from `malloc.h`, which the Glibc module leaves out).
@_silgen_name("mallopt")
private func mallopt(_ parameter: Int32, _ value: Int32) -> Int32
private let M_ARENA_MAX: Int32 = -8
