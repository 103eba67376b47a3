import PasteboardModel

/// Connects to the server, runs a command's body, and turns every failure into a ``Failure``
/// with the exit status of the contract.
enum Session {
    /// Refuses a pasteboard name the server would refuse (`InvalidName`) as the server would,
    /// with status 65, without asking it: the answer is known.
    static func check(_ target: Target) throws(Failure) {
        do {
            _ = try PasteboardName(validating: target.pasteboard)
        } catch {
            throw Failure(message: error.message, status: .refused)
        }
    }

    static func run(_ target: Target, _ body: (Server) async throws -> Void) async throws {
        try check(target)
        do {
            let server = try Server.connect(address: target.address)
            try await body(server)
        } catch let error as Unreachable {
            throw Failure(message: error.description, status: .unavailable)
        } catch let error as PasteboardError {
            throw Failure(message: error.message, status: ExitStatus(error.code))
        }
    }
}
