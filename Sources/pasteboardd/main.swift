import ArgumentParser
import Dispatch
import Foundation
import Logging
import PasteboardModel
import PasteboardServer
import Synchronization

/// `pasteboardd`: serves the pasteboards on the session bus until SIGTERM.
@main
struct Pasteboardd: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "pasteboardd",
        abstract: "Serve named pasteboards (org.pasteboardd.Pasteboard1) on D-Bus.",
        discussion: """
            Connects to the session bus (DBUS_SESSION_BUS_ADDRESS) unless --address names another \
            bus, keeps its data under the state directory, and is ready once it owns its bus name. \
            SIGTERM and SIGINT stop it cleanly. Limits (see the Limits property): \(Limits.keys.joined(separator: ", ")).
            """,
        version: PasteboarddVersion.current)

    @Option(name: .long, help: ArgumentHelp("The bus to serve on (a D-Bus address).", valueName: "ADDRESS"))
    var address: String?

    @Option(name: .customLong("state-dir"), help: ArgumentHelp("Where to keep the pasteboards (default $XDG_STATE_HOME/pasteboardd, else ~/.local/state/pasteboardd).", valueName: "DIR"))
    var stateDirectory: String?

    @Option(name: .customLong("limit"), help: ArgumentHelp("Set a limit, e.g. max-items=100 or max-item-bytes=512M (repeatable).", valueName: "KEY=VALUE"))
    var limitSettings: [String] = []

    @Option(name: .long, help: ArgumentHelp(
        "Join general and primary to the desktop's clipboard and primary selection: auto (Wayland when WAYLAND_DISPLAY names a compositor with a data-control protocol, else X11 when DISPLAY is set, else off), x11, wayland or off.",
        valueName: "auto|x11|wayland|off"))
    var desktop: DesktopMode = .auto

    @Option(name: .long, help: ArgumentHelp(
        "Where the pasteboards are kept: sqlite:FOLDER (the default, in the state directory) or postgresql://USER[:PASSWORD]@HOST[:PORT]/DATABASE, shared by every server pointed at it (also PASTEBOARDD_STORE); its parameters sslmode=MODE and sslrootcert=FILE set TLS as libpq's do, and without a password in it, PGPASSWORD or ~/.pgpass gives it.",
        valueName: "STORE"))
    var store: String?

    @Flag(name: .long, help: "Log every start-up step.")
    var verbose = false

    /// The store asked for: `--store`, else `PASTEBOARDD_STORE` (set but empty is unset, as
    /// `PGPASSWORD` and the like are taken).
    private var storeAskedFor: String? {
        store ?? ProcessInfo.processInfo.environment["PASTEBOARDD_STORE"].flatMap { $0.isEmpty ? nil : $0 }
    }

    func validate() throws {
        if let location = storeAskedFor {
            do { _ = try StoreLocation(parsing: location) } catch { throw ValidationError(error.description) }
        }
        var limits = Limits()
        for setting in limitSettings {
            do { try limits.apply(setting) } catch { throw ValidationError(error.description) }
        }
    }

    func run() async throws {
        // The store may hold secrets of the user's: nothing it writes is readable by others.
        umask(0o077)
        LoggingSystem.bootstrap(StreamLogHandler.standardError)
        var logger = Logger(label: "pasteboardd")
        logger.logLevel = verbose ? .debug : .notice

        // Writing to an app that stopped reading a paste must fail that write, not end the server.
        signal(SIGPIPE, SIG_IGN)
        var configuration = PasteboardServer.Configuration(address: address, desktop: desktop)
        if let stateDirectory { configuration.stateDirectory = stateDirectory }
        if let location = storeAskedFor, !location.isEmpty {
            configuration.store = try StoreLocation(parsing: location)
        }
        for setting in limitSettings { try configuration.limits.apply(setting) }

        // Caught from before the name is taken: once the server is ready, SIGTERM is a clean stop.
        let stopRequests = StopRequests(signals: [SIGTERM, SIGINT])
        let server: PasteboardServer
        do {
            server = try await PasteboardServer.start(configuration, logger: logger)
        } catch {
            FileHandle.standardError.write(Data("pasteboardd: \(error.description)\n".utf8))
            throw ExitCode(69)
        }
        let stopped = await stopRequests.wait(orUntilDisconnected: server)
        if stopped {
            await server.stop()
            return
        }
        FileHandle.standardError.write(Data("pasteboardd: lost the connection to the bus\n".utf8))
        throw ExitCode(69)
    }
}

extension DesktopMode: ExpressibleByArgument {}

/// Stop signals, caught from the moment this is made and remembered until someone waits.
///
/// `@unchecked Sendable`: the dispatch sources are only kept alive, never touched again; the
/// rest is behind the mutex.
final class StopRequests: @unchecked Sendable {
    private let sources: [DispatchSourceSignal]
    private let state = Mutex<(requested: Bool, waiter: CheckedContinuation<Bool, Never>?)>((false, nil))

    init(signals numbers: [Int32]) {
        var sources: [DispatchSourceSignal] = []
        for number in numbers {
            signal(number, SIG_IGN)
            sources.append(DispatchSource.makeSignalSource(signal: number, queue: .global()))
        }
        self.sources = sources
        for source in sources {
            source.setEventHandler { [weak self] in
                let waiter = self?.state.withLock { state in
                    state.requested = true
                    return state.waiter.take()
                }
                waiter?.resume(returning: true)
            }
            source.resume()
        }
    }

    /// Waits for a stop signal (true; at once if one already came) or the loss of the bus (false).
    func wait(orUntilDisconnected server: PasteboardServer) async -> Bool {
        await withCheckedContinuation { done in
            let requested = state.withLock { state in
                if !state.requested { state.waiter = done }
                return state.requested
            }
            if requested { return done.resume(returning: true) }
            Task {
                await server.waitUntilDisconnected()
                self.state.withLock { $0.waiter.take() }?.resume(returning: false)
            }
        }
    }
}
