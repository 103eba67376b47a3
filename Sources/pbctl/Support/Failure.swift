import ArgumentParser
import PasteboardModel

/// The exit statuses of the contract (sysexits.h values).
enum ExitStatus: Int32, Sendable {
    case success = 0
    case nothing = 1
    case usage = 64
    case refused = 65
    case unavailable = 69
    /// The input could not be read or the output written (an I/O error, a full disk).
    case ioError = 74

    init(_ code: PasteboardError.Code) {
        switch code {
        case .noSuchItem, .noSuchType, .providerFailed: self = .nothing
        default: self = .refused
        }
    }
}

/// A failure already explained: printed as `pbctl: message`, then exit with `status`.
struct Failure: Error {
    let message: String
    let status: ExitStatus

    /// Prints the message the contract's way.
    func report() {
        Output.error(message)
    }
}

extension Job {
    /// Runs the job under ArgumentParser: a failure is printed and becomes the exit code
    /// ArgumentParser exits with.
    func runReportingFailures() async throws {
        do {
            try await run()
        } catch let failure as Failure {
            failure.report()
            throw ExitCode(failure.status.rawValue)
        }
    }
}
