#if canImport(Glibc)
import Glibc
#endif

/// Where `pbctl` starts: the common command lines are read by ``QuickLine``, everything else
/// (help, completion, every usage error, `watch`) by ArgumentParser through ``Pbctl``. Either
/// way the work runs on the main thread (``MainThreadExecutor``).
@main
enum Entry {
    static func main() {
        MainThreadExecutor.run {
            let arguments = CommandLine.arguments.dropFirst()
            guard let job = QuickLine.job(for: arguments, commands: Pbctl.quickCommands) else {
                await Pbctl.main()
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
