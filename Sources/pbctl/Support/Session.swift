import ArgumentParser
import Foundation
import Pasteboard

/// Connects to the server, runs a command's body, and turns every failure into a message on
/// stderr and the exit status of the contract.
enum Session {
    static func run(_ global: GlobalOptions, _ body: (PasteboardProxy) async throws -> Void) async throws {
        do {
            let proxy = try PasteboardProxy.connect(address: global.address)
            try await body(proxy)
        } catch let error as PasteboardConnectionError {
            throw Failure(message: error.description, status: .unavailable)
        } catch let error as PasteboardError {
            throw Failure(message: error.message, status: ExitStatus(error.code))
        }
    }
}

/// The exit statuses of the contract (sysexits.h values).
enum ExitStatus: Int32 {
    case success = 0
    case nothing = 1
    case usage = 64
    case refused = 65
    case unavailable = 69

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
}

extension Failure {
    /// Prints the message and turns into the exit code ArgumentParser understands.
    var exit: ExitCode {
        Output.error(message)
        return ExitCode(status.rawValue)
    }
}

/// Runs a command body, printing failures the contract's way.
func reportingFailures(_ body: () async throws -> Void) async throws {
    do {
        try await body()
    } catch let failure as Failure {
        throw failure.exit
    }
}
