import DBus
import Foundation
import Synchronization
import Testing
import TestSupport

/// One test's world: a private bus, a real `pasteboardd` on it, and a client connection, with
/// typed helpers for the calls of `org.pasteboardd.Pasteboard1`.
///
/// Every call has a timeout, so a server that hangs fails the test instead of the suite.
final class Harness: Sendable {
    static let busName = "org.pasteboardd.Pasteboard1"
    static let path = "/org/pasteboardd/Pasteboard1"
    static let interface = "org.pasteboardd.Pasteboard1"
    static let errorPrefix = "org.pasteboardd.Error."

    let bus: TestBus
    let server: TestServer
    let client: Connection

    init(limits: [String] = []) async throws {
        // A write to a pipe the server has stopped reading must fail, not kill the tests.
        signal(SIGPIPE, SIG_IGN)
        bus = try await TestBus()
        server = try await TestServer(bus: bus, limits: limits)
        client = try Connection.connect(address: bus.address)
    }

    /// Another client connection to the same bus.
    func connect() throws -> Connection {
        try Connection.connect(address: bus.address)
    }

    // MARK: Raw calls

    /// Calls a method of the interface and returns the reply message.
    func reply(
        _ method: String, _ arguments: [DBusValue] = [], on connection: Connection? = nil,
        interface: String? = Harness.interface, timeout: Duration = .seconds(20)
    ) async throws(DBusError) -> Message {
        let message = try Message.methodCall(destination: Self.busName, path: Self.path, interface: interface, method: method, arguments: arguments)
        return try await (connection ?? client).call(message, timeout: timeout)
    }

    /// Calls a method of the interface and returns the reply's arguments.
    func call(
        _ method: String, _ arguments: [DBusValue] = [], on connection: Connection? = nil,
        interface: String? = Harness.interface, timeout: Duration = .seconds(20)
    ) async throws(DBusError) -> [DBusValue] {
        try await reply(method, arguments, on: connection, interface: interface, timeout: timeout).arguments()
    }

    /// Calls a method that must fail, and records an issue unless it fails with `errorName`
    /// (`"InvalidName"` is short for `org.pasteboardd.Error.InvalidName`).
    @discardableResult
    func expectFailure(
        _ errorName: String, _ method: String, _ arguments: [DBusValue] = [], on connection: Connection? = nil,
        interface: String? = Harness.interface, sourceLocation: SourceLocation = #_sourceLocation
    ) async -> DBusError? {
        let expected = errorName.contains(".") ? errorName : Self.errorPrefix + errorName
        do {
            let values = try await call(method, arguments, on: connection, interface: interface)
            Issue.record("\(method) succeeded with \(values), expected \(expected)", sourceLocation: sourceLocation)
            return nil
        } catch {
            #expect(error.name == expected, "\(method) failed with \(error)", sourceLocation: sourceLocation)
            #expect(!error.message.isEmpty, "\(expected) without a message", sourceLocation: sourceLocation)
            return error
        }
    }

    // MARK: Typed calls

    func listPasteboards() async throws -> [String] {
        try #require(try await call("ListPasteboards").first?.stringArrayValue)
    }

    func changeCount(_ name: String = "general") async throws -> UInt64 {
        try #require(try await call("ChangeCount", [.string(name)]).first?.uint64Value)
    }

    @discardableResult
    func clear(_ name: String = "general") async throws -> UInt64 {
        try #require(try await call("ClearContents", [.string(name)]).first?.uint64Value)
    }

    /// `WriteItems`; each item is its types, in order, with their bytes.
    @discardableResult
    func write(_ items: [[(String, [UInt8])]], to name: String = "general", options: [(String, DBusValue)] = [], on connection: Connection? = nil) async throws -> UInt64 {
        let reply = try await call("WriteItems", [.string(name), Self.inlineItems(items), Self.options(options)], on: connection)
        return try #require(reply.first?.uint64Value)
    }

    /// `WriteItems` of one item with one UTF-8 text representation.
    @discardableResult
    func write(text: String, type: String = "text/plain;charset=utf-8", to name: String = "general", on connection: Connection? = nil) async throws -> UInt64 {
        try await write([[(type, Array(text.utf8))]], to: name, on: connection)
    }

    /// `WriteItemsFd`; each item is its types, in order, with a descriptor to read each from.
    @discardableResult
    func writeFd(
        _ items: [[(String, UnixFileDescriptor)]], to name: String = "general", options: [(String, DBusValue)] = [],
        on connection: Connection? = nil, timeout: Duration = .seconds(20)
    ) async throws -> UInt64 {
        let reply = try await call("WriteItemsFd", [.string(name), Self.descriptorItems(items), Self.options(options)], on: connection, timeout: timeout)
        return try #require(reply.first?.uint64Value)
    }

    func types(_ name: String = "general") async throws -> (count: UInt64, types: [String]) {
        let reply = try await call("Types", [.string(name)])
        return (try #require(reply.first?.uint64Value), try #require(reply.last?.stringArrayValue))
    }

    struct ItemDescription: Equatable, CustomStringConvertible {
        var types: [String]
        var sizes: [Int64]
        var description: String { "\(zip(types, sizes).map { "\($0) (\($1))" })" }
    }

    func items(_ name: String = "general") async throws -> (count: UInt64, items: [ItemDescription]) {
        let reply = try await call("Items", [.string(name)])
        let count = try #require(reply.first?.uint64Value)
        var items: [ItemDescription] = []
        for element in try #require(reply.last?.arrayValue) {
            let entries = try #require(element.dictionaryEntries)
            let types = entries.first { $0.key == .string("types") }?.value.variantValue?.stringArrayValue
            let sizes = entries.first { $0.key == .string("sizes") }?.value.variantValue?.arrayValue?.compactMap(\.int64Value)
            items.append(ItemDescription(types: try #require(types), sizes: try #require(sizes)))
        }
        return (count, items)
    }

    func availableType(_ types: [String], in name: String = "general") async throws -> String {
        try #require(try await call("AvailableType", [.string(name), .strings(types)]).first?.stringValue)
    }

    func canRead(_ types: [String], in name: String = "general") async throws -> Bool {
        let reply = try await call("CanRead", [.string(name), .strings(types)])
        return try #require(reply.first?.boolValue as Bool?)
    }

    func readData(_ type: String, item: UInt32 = 0, in name: String = "general", expect: UInt64 = 0) async throws -> (count: UInt64, data: [UInt8]) {
        let reply = try await call("ReadData", [.string(name), .uint32(item), .string(type), .uint64(expect)])
        return (try #require(reply.first?.uint64Value), try #require(reply.last?.bytesValue))
    }

    func readBest(_ types: [String], item: UInt32 = 0, in name: String = "general", expect: UInt64 = 0) async throws -> (count: UInt64, type: String, data: [UInt8]) {
        let reply = try await call("ReadBest", [.string(name), .uint32(item), .strings(types), .uint64(expect)])
        #expect(reply.count == 3)
        return (try #require(reply.first?.uint64Value), try #require(reply[1].stringValue), try #require(reply.last?.bytesValue))
    }

    func readFd(_ type: String, item: UInt32 = 0, in name: String = "general", expect: UInt64 = 0) async throws -> (count: UInt64, descriptor: UnixFileDescriptor) {
        let reply = try await call("ReadFd", [.string(name), .uint32(item), .string(type), .uint64(expect)])
        return (try #require(reply.first?.uint64Value), try #require(reply.last?.fileDescriptorValue))
    }

    /// `ReadFd`, read to the end.
    func readFdBytes(_ type: String, item: UInt32 = 0, in name: String = "general", expect: UInt64 = 0) async throws -> (count: UInt64, data: [UInt8]) {
        let (count, descriptor) = try await readFd(type, item: item, in: name, expect: expect)
        return (count, try Descriptors.readAll(descriptor))
    }

    func createUnique() async throws -> String {
        try #require(try await call("CreateUnique").first?.stringValue)
    }

    func remove(_ name: String = "general") async throws {
        let reply = try await call("Remove", [.string(name)])
        #expect(reply.isEmpty)
    }

    func property(_ name: String) async throws -> DBusValue {
        let reply = try await call("Get", [.string(Self.interface), .string(name)], interface: "org.freedesktop.DBus.Properties")
        return try #require(reply.first?.variantValue)
    }

    // MARK: Snapshots

    /// Everything a pasteboard holds, read back through the bus (data by `ReadFd`, which has
    /// no size limit).
    struct Snapshot: Equatable, CustomStringConvertible {
        var count: UInt64
        var types: [String]
        var items: [[Representation]]

        struct Representation: Equatable {
            var type: String
            var data: [UInt8]
        }

        var description: String {
            "count \(count), items \(items.map { $0.map { "\($0.type): \($0.data.count) bytes" } })"
        }
    }

    func snapshot(_ name: String = "general") async throws -> Snapshot {
        let (count, items) = try await self.items(name)
        var snapshot = Snapshot(count: count, types: try await types(name).types, items: [])
        for (index, item) in items.enumerated() {
            var representations: [Snapshot.Representation] = []
            for type in item.types {
                let (readCount, data) = try await readFdBytes(type, item: UInt32(index), in: name, expect: count)
                #expect(readCount == count)
                representations.append(.init(type: type, data: data))
            }
            snapshot.items.append(representations)
        }
        return snapshot
    }

    // MARK: Signals

    /// Records the interface's signals (`Changed`, `Removed`) as they arrive.
    ///
    /// Signals of changes made before this call are left out: each `Changed` follows its
    /// reply, so the one of a write that has just returned may still be on its way, and would
    /// reach the new subscription or not, by chance. A call answered by the server after the
    /// subscription is a barrier: what the server sent before its answer (a lower serial from
    /// the same connection) came before this call. A restarted server's signals all count.
    func recordSignals(on connection: Connection? = nil) async throws -> SignalRecorder {
        let connection = connection ?? client
        let recorder = SignalRecorder(connection, try await connection.signals(matching: MatchRule(path: Self.path, interface: Self.interface)))
        if let barrier = try? await reply("ChangeCount", [.string("general")], timeout: .seconds(20)), let sender = barrier.sender {
            recorder.ignore(from: sender, below: barrier.serial)
        }
        return recorder
    }

    // MARK: Values

    static func inlineItems(_ items: [[(String, [UInt8])]]) -> DBusValue {
        .array(element: "a{say}", items.map { item in .dictionary(key: "s", value: "ay", item.map { (.string($0.0), .bytes($0.1)) }) })
    }

    static func descriptorItems(_ items: [[(String, UnixFileDescriptor)]]) -> DBusValue {
        .array(element: "a{sh}", items.map { item in .dictionary(key: "s", value: "h", item.map { (.string($0.0), .unixFD($0.1)) }) })
    }

    static func options(_ options: [(String, DBusValue)]) -> DBusValue {
        .dictionary(key: "s", value: "v", options.map { (.string($0.0), .variant($0.1)) })
    }
}

/// The `Changed` and `Removed` signals one connection received, in arrival order.
final class SignalRecorder: Sendable {
    struct Signal: Equatable, CustomStringConvertible {
        var member: String
        var arguments: [DBusValue]
        var serial: UInt32
        var sender: String?

        var description: String { "\(member)\(arguments) #\(serial)" }

        /// `Changed(name, count, types)` decoded; nil for another signal.
        var changed: (name: String, count: UInt64, types: [String])? {
            guard member == "Changed", arguments.count == 3,
                  let name = arguments[0].stringValue, let count = arguments[1].uint64Value, let types = arguments[2].stringArrayValue
            else { return nil }
            return (name, count, types)
        }
    }

    private let box = Box()
    private let task: Task<Void, Never>
    /// Kept open as long as the recorder lives.
    private let connection: Connection

    init(_ connection: Connection, _ stream: AsyncStream<Message>) {
        self.connection = connection
        task = Task { [box] in
            for await message in stream {
                box.append(Signal(member: message.member ?? "", arguments: message.arguments(), serial: message.serial, sender: message.sender))
            }
        }
    }

    /// Signals so far.
    var signals: [Signal] { box.signals }

    /// Leaves out signals `sender` sent with a serial below `serial`, those received already
    /// included.
    func ignore(from sender: String, below serial: UInt32) {
        box.ignore(from: sender, below: serial)
    }

    /// Waits until at least `count` signals have arrived (or `timeout` has passed), and returns
    /// every signal received by then.
    func wait(for count: Int, timeout: Duration = .seconds(20)) async -> [Signal] {
        let deadline = ContinuousClock.now + timeout
        while box.signals.count < count, ContinuousClock.now < deadline {
            try? await Task.sleep(for: .milliseconds(5))
        }
        return box.signals
    }

    deinit {
        task.cancel()
    }

    private final class Box: Sendable {
        private struct State {
            var signals: [Signal] = []
            var ignored: (sender: String, below: UInt32)?

            func isIgnored(_ signal: Signal) -> Bool {
                guard let ignored else { return false }
                return signal.sender == ignored.sender && signal.serial < ignored.below
            }
        }

        private let state = Mutex(State())
        var signals: [Signal] { state.withLock { $0.signals } }

        func append(_ signal: Signal) {
            state.withLock { state in
                if !state.isIgnored(signal) { state.signals.append(signal) }
            }
        }

        func ignore(from sender: String, below serial: UInt32) {
            state.withLock { state in
                state.ignored = (sender, serial)
                let kept = state.signals.filter { !state.isIgnored($0) }
                state.signals = kept
            }
        }
    }
}

/// Descriptors for `WriteItemsFd`, and reading the ones `ReadFd` returns.
enum Descriptors {
    /// A new pipe; both ends close on exec.
    static func pipe() throws -> (read: UnixFileDescriptor, write: UnixFileDescriptor) {
        var fds: [Int32] = [-1, -1]
        guard Glibc.pipe(&fds) == 0 else { throw TestSupportError("pipe: \(String(cString: strerror(errno)))") }
        _ = fcntl(fds[0], F_SETFD, FD_CLOEXEC)
        _ = fcntl(fds[1], F_SETFD, FD_CLOEXEC)
        return (UnixFileDescriptor(owning: fds[0]), UnixFileDescriptor(owning: fds[1]))
    }

    /// The bytes written to the pipe of `end` (either end) and not read yet.
    static func unread(_ end: UnixFileDescriptor) -> Int32 {
        var count: Int32 = 0
        return ioctl(end.rawValue, UInt(FIONREAD), &count) == 0 ? count : -1
    }

    /// A readable descriptor holding `bytes`: an unlinked temporary file, at offset 0.
    static func file(_ bytes: [UInt8]) throws -> UnixFileDescriptor {
        let descriptor = try temporaryFile()
        try writeAll(descriptor, bytes)
        lseek(descriptor.rawValue, 0, SEEK_SET)
        return descriptor
    }

    /// An empty unlinked temporary file, open for reading and writing.
    static func temporaryFile() throws -> UnixFileDescriptor {
        let path = FileManager.default.temporaryDirectory.appendingPathComponent("pasteboardd-data-\(UUID().uuidString)").path
        let fd = open(path, O_RDWR | O_CREAT | O_EXCL | O_CLOEXEC, 0o600)
        guard fd >= 0 else { throw TestSupportError("open \(path): \(String(cString: strerror(errno)))") }
        unlink(path)
        return UnixFileDescriptor(owning: fd)
    }

    /// A pipe whose write end already holds `bytes` (at most 64 KiB) and is closed.
    static func pipe(holding bytes: [UInt8]) throws -> UnixFileDescriptor {
        precondition(bytes.count <= 65536, "a pipe buffer holds 64 KiB")
        let (reader, writer) = try pipe()
        try writeAll(writer, bytes)
        return reader
    }

    static func writeAll(_ descriptor: UnixFileDescriptor, _ bytes: [UInt8]) throws {
        let failure = UnixFileDescriptor.writeAll(descriptor.rawValue, bytes[...])
        guard failure == 0 else { throw TestSupportError("write: \(String(cString: strerror(failure)))") }
    }

    /// Reads from the descriptor's current offset to its end.
    static func readAll(_ descriptor: UnixFileDescriptor) throws -> [UInt8] {
        var result: [UInt8] = []
        var chunk = [UInt8](repeating: 0, count: 1 << 16)
        while true {
            let count = chunk.withUnsafeMutableBytes { Glibc.read(descriptor.rawValue, $0.baseAddress, $0.count) }
            if count < 0, errno == EINTR { continue }
            guard count >= 0 else { throw TestSupportError("read: \(String(cString: strerror(errno)))") }
            if count == 0 { return result }
            result.append(contentsOf: chunk[0..<count])
        }
    }
}

/// Writes chunks into a pipe from a thread of its own: a writer that is slower or larger than
/// memory, as a real producer is.
final class PipeFeeder: Sendable {
    private struct Progress {
        var written = 0
        var finished = false
        var lastWrite: ContinuousClock.Instant?
        /// The longest time between two writes that took bytes, the first one's wait included.
        var longestPause: Duration = .zero
    }

    /// Shared with the writing thread.
    private final class State: Sendable {
        let progress = Mutex(Progress())
    }

    private let state = State()
    /// The write end, when it must stay open after the last chunk.
    private let keptOpen: UnixFileDescriptor?

    /// Bytes written so far.
    var written: Int { state.progress.withLock { $0.written } }
    /// When the last bytes went in.
    var lastWrite: ContinuousClock.Instant? { state.progress.withLock { $0.lastWrite } }
    /// The longest the writer went without writing, its own pauses and the machine's stalls
    /// together: a test whose server gave up on an idle writer checks the writer was idle.
    var longestPause: Duration { state.progress.withLock { $0.longestPause } }

    /// Starts writing `chunk(0)`, `chunk(1)`, … (up to `count` chunks, endlessly when nil) into
    /// a new pipe, and returns its read end for the server.
    ///
    /// The write end belongs to the feeder: it closes after the last chunk (the reader sees the
    /// end of the data), unless `keepOpen`, which keeps it open as long as the feeder lives (a
    /// writer that stalls). The feeder stops early when the reader goes away or takes nothing
    /// for `idleTimeout`: a minute by default, since a loaded machine can stall the server for
    /// seconds, and a feeder that gave up then would hand it a short stream as if complete.
    static func start(
        count: Int?, keepOpen: Bool = false, idleTimeout: Duration = .seconds(60),
        chunk: @escaping @Sendable (Int) -> [UInt8]
    ) throws -> (reader: UnixFileDescriptor, feeder: PipeFeeder) {
        let (reader, writer) = try Descriptors.pipe()
        return (reader, PipeFeeder(writer, count: count, keepOpen: keepOpen, idleTimeout: idleTimeout, chunk: chunk))
    }

    private init(_ writer: UnixFileDescriptor, count: Int?, keepOpen: Bool, idleTimeout: Duration, chunk: @escaping @Sendable (Int) -> [UInt8]) {
        _ = fcntl(writer.rawValue, F_SETFL, fcntl(writer.rawValue, F_GETFL) | O_NONBLOCK)
        keptOpen = keepOpen ? writer : nil
        let thread = Thread { [state] in
            defer { state.progress.withLock { $0.finished = true } }
            var previous = ContinuousClock.now
            var index = 0
            while count.map({ index < $0 }) ?? true {
                let bytes = chunk(index)
                var offset = 0
                var idleSince = ContinuousClock.now
                while offset < bytes.count {
                    let result = bytes.withUnsafeBytes { write(writer.rawValue, $0.baseAddress! + offset, $0.count - offset) }
                    if result > 0 {
                        offset += result
                        idleSince = ContinuousClock.now
                        let pause = idleSince - previous
                        previous = idleSince
                        state.progress.withLock {
                            $0.written += result
                            $0.lastWrite = idleSince
                            $0.longestPause = max($0.longestPause, pause)
                        }
                    } else if result < 0, errno == EAGAIN || errno == EINTR {
                        guard ContinuousClock.now - idleSince < idleTimeout else { return }
                        var entry = pollfd(fd: writer.rawValue, events: Int16(POLLOUT), revents: 0)
                        _ = poll(&entry, 1, 100)
                    } else {
                        return  // EPIPE: the reader is gone
                    }
                }
                index += 1
            }
        }
        thread.start()
    }

    /// Waits until the feeder has stopped, for at most `timeout`; returns whether it has.
    func wait(timeout: Duration = .seconds(30)) async -> Bool {
        let deadline = ContinuousClock.now + timeout
        while !state.progress.withLock({ $0.finished }), ContinuousClock.now < deadline {
            try? await Task.sleep(for: .milliseconds(5))
        }
        return state.progress.withLock { $0.finished }
    }
}

extension String {
    var bytes: [UInt8] { Array(utf8) }
}
