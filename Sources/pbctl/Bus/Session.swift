import PasteboardModel

/// Connects to the server, runs a command's body, and turns every failure into a ``Failure``
/// with the exit status of the contract.
enum Session {
    static func run(_ target: Target, _ body: (Server) async throws -> Void) async throws {
        do {
            // A name the server would refuse (`InvalidName`) is refused as the server would,
            // status 65, without asking it: the answer is known.
            _ = try PasteboardName(validating: target.pasteboard)
            let server = try Server.connect(address: target.address)
            try await body(server)
        } catch let error as Unreachable {
            throw Failure(message: error.description, status: .unavailable)
        } catch let error as PasteboardError {
            throw Failure(message: error.message, status: ExitStatus(error.code))
        }
    }
}
