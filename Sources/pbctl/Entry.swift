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
        // Swift repairs invalid UTF-8 in the arguments, which would turn a bad pasteboard name
        // (or a file name) silently into another one.
        for index in 1..<max(1, Int(CommandLine.argc)) {
            guard let raw = CommandLine.unsafeArgv[index], String(validatingCString: raw) == nil else { continue }
            // A pasteboard name the server would refuse is bad input (65), as any invalid name is.
            let previous = CommandLine.unsafeArgv[index - 1].flatMap { String(validatingCString: $0) }
            // `-pNAME` and `-p=NAME` name it too (AttachedValues).
            let attached = strncmp(raw, "-p", 2) == 0 && raw[2] != 0
            if previous == "-p" || previous == "--pasteboard" || strncmp(raw, "--pasteboard=", 13) == 0 || attached {
                Output.error("the pasteboard name (argument \(index)) is not valid UTF-8; a pasteboard name is 1 to 255 bytes of UTF-8 without control characters")
                exit(ExitStatus.refused.rawValue)
            }
            Output.error("argument \(index) is not valid UTF-8; types and file names must be valid UTF-8")
            exit(ExitStatus.usage.rawValue)
        }
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

/// glibc's `mallopt` and `M_ARENA_MAX` (from `malloc.h`, which the Glibc module leaves out).
@_silgen_name("mallopt")
private func mallopt(_ parameter: Int32, _ value: Int32) -> Int32
private let M_ARENA_MAX: Int32 = -8
