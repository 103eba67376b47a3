import DBus
import Foundation
import Logging
import PasteboardModel

/// The pasteboard server: the store, the service and the bus object, started in the order that
/// keeps two servers from ever sharing a state directory or a bus name.
///
/// ```swift
/// let server = try await PasteboardServer.start(PasteboardServer.Configuration(), logger: logger)
/// await server.waitUntilDisconnected()
/// ```
public final class PasteboardServer: Sendable {
    /// The well-known name the server owns.
    public static let busName = "org.pasteboardd.Pasteboard1"

    public struct Configuration: Sendable {
        /// The bus to serve on; nil for the session bus.
        public var address: String?
        /// Where the pasteboards are kept.
        public var stateDirectory: String
        public var limits: Limits
        /// Which display system's clipboard `general` is (`--desktop`).
        public var desktop: DesktopMode
        /// Where `WAYLAND_DISPLAY` and `DISPLAY` are read from.
        public var environment: [String: String]
        /// Where the pasteboards are kept: SQLite in the state directory (the default), or a
        /// PostgreSQL database shared with other servers.
        public var store: StoreLocation = .sqlite(directory: nil)

        public init(
            address: String? = nil, stateDirectory: String = Configuration.defaultStateDirectory(), limits: Limits = Limits(),
            desktop: DesktopMode = .auto, environment: [String: String] = ProcessInfo.processInfo.environment
        ) {
            self.address = address
            self.stateDirectory = stateDirectory
            self.limits = limits
            self.desktop = desktop
            self.environment = environment
        }

        /// `$XDG_STATE_HOME/pasteboardd`, else `~/.local/state/pasteboardd`.
        public static func defaultStateDirectory(environment: [String: String] = ProcessInfo.processInfo.environment) -> String {
            if let state = environment["XDG_STATE_HOME"], state.hasPrefix("/") {
                return state + "/pasteboardd"
            }
            let home = environment["HOME"] ?? NSHomeDirectory()
            return home + "/.local/state/pasteboardd"
        }
    }

    /// Why the server could not start, in words for the person who started it.
    public struct StartError: Error, CustomStringConvertible {
        public let description: String
    }

    private let connection: Connection
    private let service: PasteboardService
    private let lock: StateLock
    private let desktop: DesktopBridge?
    /// Sends `ReadFd` readers stored data; a stop waits a while for them.
    private let feeder: StoredFileFeeder

    private init(connection: Connection, service: PasteboardService, lock: StateLock, desktop: DesktopBridge?, feeder: StoredFileFeeder) {
        self.connection = connection
        self.service = service
        self.lock = lock
        self.desktop = desktop
        self.feeder = feeder
    }

    /// Connects, opens the store, exports the object and takes the bus name: once this returns
    /// the server is ready.
    ///
    /// A second server on the same bus is told the name is taken before it touches the state
    /// directory, which the first one holds too when both use the default.
    public static func start(_ configuration: Configuration, logger: Logger) async throws(StartError) -> PasteboardServer {
        let connection: Connection
        do {
            connection = try Connection.connect(address: configuration.address)
        } catch {
            throw StartError(description: "cannot connect to the bus \(configuration.address ?? Connection.sessionBusAddress() ?? "(none: DBUS_SESSION_BUS_ADDRESS is not set)"): \(error.message)")
        }
        guard connection.canPassFileDescriptors else {
            throw StartError(description: "the bus at \(connection.address) cannot pass file descriptors, which pasteboardd needs")
        }
        if let owner = (try? await connection.nameOwner(busName)) ?? nil {
            throw nameTaken(on: connection, by: owner)
        }
        let busID: String
        do {
            busID = try await connection.busID()
        } catch {
            throw StartError(description: "cannot ask the bus \(connection.address) for its id: \(error.message)")
        }

        // A shared store is reached first: a wrong URL or password is said before anything else.
        var sharedStore: SharedStore?
        if case .postgresql(let location) = configuration.store {
            do {
                sharedStore = try await SharedStore.open(location, origin: busID + "-" + Store.randomID(), logger: logger)
            } catch {
                throw StartError(description: "cannot use the store \(location): \(error); check the URL (postgresql://USER[:PASSWORD]@HOST[:PORT]/DATABASE), the password, and that the database exists and runs")
            }
        }
        var directory = configuration.stateDirectory
        if case .sqlite(let folder?) = configuration.store { directory = folder }
        if let sharedStore { directory = sharedStore.localFolder(in: configuration.stateDirectory) }
        var isFolder: ObjCBool = false
        if FileManager.default.fileExists(atPath: directory, isDirectory: &isFolder), !isFolder.boolValue {
            throw StartError(description: "cannot keep the pasteboards in \(directory): it is a file, not a folder; name a folder (sqlite:FOLDER, or --state-dir DIR), which is made if it does not exist")
        }
        let lock: StateLock
        let service: PasteboardService
        do {
            try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true, attributes: [.posixPermissions: 0o700])
            try PrivateDirectory.check(directory)
            lock = try StateLock(directory: directory)
            service = try PasteboardService(
                store: try Store(directory: directory), limits: configuration.limits, logger: logger, busID: busID, sharesCounts: sharedStore != nil)
        } catch {
            // Two servers started together: the one that lost the directory may find the
            // name taken by now, which is what it should say.
            if let owner = (try? await connection.nameOwner(busName)) ?? nil { throw nameTaken(on: connection, by: owner) }
            throw StartError(description: "cannot use the state directory \(directory): \(error)")
        }
        let shared = sharedStore.map { SharedSync(store: $0, maxPasteboards: configuration.limits.maxPasteboards) }
        if let shared {
            await withCheckedContinuation { done in
                service.perform {
                    service.shared = shared
                    done.resume()
                }
            }
        }

        let desktop = DesktopBridge(service: service, mode: configuration.desktop, environment: configuration.environment, logger: logger)
        let feeder: StoredFileFeeder
        do {
            let object = PasteboardObject(service: service, connection: connection, desktop: desktop, shared: shared)
            feeder = object.feeder
            try connection.export(object, at: PasteboardObject.path)
            switch try await connection.requestName(busName) {
            case .primaryOwner, .alreadyOwner:
                object.startTimers()
            case .exists, .inQueue:
                throw nameTaken(on: connection, by: (try? await connection.nameOwner(busName)) ?? nil)
            }
        } catch let error as StartError {
            throw error
        } catch {
            throw StartError(description: "cannot take the name \(busName): \(error)")
        }
        followTypeDeclarations(logger: logger)
        logger.info("serving \(busName) on \(connection.address), state in \(directory), store \(configuration.store)")
        return PasteboardServer(connection: connection, service: service, lock: lock, desktop: desktop, feeder: feeder)
    }

    /// Keeps the MIME database current, so that `pbctl types declare` takes effect with no
    /// restart; declarations that cannot be read are logged each time the database is read.
    private static func followTypeDeclarations(logger: Logger) {
        let report: @Sendable (MIMEDatabase) -> Void = { database in
            logger.info("types: read the MIME database: \(database.declarations.all.count) declared type(s)")
            for problem in database.declarations.problems {
                logger.warning("types: \(problem)")
            }
        }
        MIMEDatabase.followChanges(onReload: report) {
            logger.notice("types: no inotify instance left (fs.inotify.max_user_instances); the MIME database's folders are checked by their timestamps on each use instead")
        }
    }

    private static func nameTaken(on connection: Connection, by owner: String?) -> StartError {
        StartError(description: "the name \(busName) is already taken on the bus \(connection.address)\(owner.map { " (by \($0))" } ?? ""): another pasteboardd is running there")
    }

    /// Waits until the bus connection is lost.
    public func waitUntilDisconnected() async {
        await connection.waitUntilDisconnected()
    }

    /// Finishes the changes in progress, closes the connection, and folds the write-ahead log
    /// into the database so that the next start has little to read.
    ///
    /// Every change made is answered before the connection closes: what runs when the stop
    /// begins finishes and is answered first, and nothing begun after it changes anything
    /// (calls, queued or arriving, and transfers that end: their callers hear from the bus
    /// that the server left without replying; see ``PasteboardService/beginStopping()``). `ReadFd`
    /// readers still being sent stored data get up to 5 s to read it.
    public func stop() async {
        service.beginStopping()
        desktop?.stop()
        await withCheckedContinuation { done in
            service.perform { done.resume() }
        }
        connection.close()
        await connection.waitUntilDisconnected()
        // A reader cut off would take what it got for all of the data (a pipe ends the same
        // either way): the ones being fed get a few seconds to finish.
        await feeder.waitUntilDone(within: .seconds(5))
        await service.checkpoint()
        _ = lock
    }
}
