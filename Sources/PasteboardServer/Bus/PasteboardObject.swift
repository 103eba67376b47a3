import DBus
import Dispatch
import Foundation
import PasteboardModel
import Synchronization

/// `/org/pasteboardd/Pasteboard1`: decodes each call, hands it to the ``PasteboardService`` queue
/// in arrival order, and answers with the reply and then the signals the call caused.
///
/// ``handle(_:)`` runs on the bus thread and checks signatures. A call that only reads is
/// answered right there, from the committed contents, when its sender has nothing waiting on
/// the service queue: no earlier call of that client can then change what it reads (D-Bus
/// orders calls per connection only), and it is spared two thread hops. A small write from such
/// a client is answered there too when the queue is idle, once recorded in the commit log
/// (``writeAtOnce(_:_:_:)``). Everything else is enqueued; slow work (reading a client's
/// descriptor, reading a blob file) runs on transfer threads.
final class PasteboardObject: DBusObject {
    static let path = "/org/pasteboardd/Pasteboard1"
    static let interface = "org.pasteboardd.Pasteboard1"
    static let version = PasteboarddVersion.current

    let introspectionXML = String(decoding: PackageResources.org_pasteboardd_Pasteboard1_xml, as: UTF8.self)
    let service: PasteboardService
    let connection: Connection
    /// `WriteItemsFd` transfers in progress, in all and by client process.
    let transfers: TransferSlots<TransferClient>
    /// Calls handed to the service queue and not yet answered, by sender; a read skips the
    /// queue only when its sender has none.
    let queued = Mutex<[String: Int]>([:])
    /// Calls waiting for ``drain()``, and whether a drain is scheduled or running.
    let intake = Mutex<(jobs: [Job], draining: Bool)>(([], false))
    let processIDs = ProcessIDs()
    /// Sends `ReadFd` readers the data of store files.
    let feeder: StoredFileFeeder
    /// What waits unread in the bus for each client, asked before large replies.
    let unreadReplies: UnreadReplies
    /// What the bus holds of our signals, asked after every few MiB of them.
    let changedBacklog: ChangedBacklogWatch
    /// How many elements the arrays of a call may hold (see ``decodedArguments(_:_:)``).
    let bounds: ArgumentBounds
    /// `general` and `primary` joined to the desktop's clipboard; nil with `--desktop off`.
    let desktop: DesktopBridge?
    /// Whether the pasteboards are shared with other servers through PostgreSQL.
    let isShared: Bool
    /// Listens for the other servers' changes, when shared.
    let sharedListener = Mutex<Task<Void, Never>?>(nil)

    init(service: PasteboardService, connection: Connection, desktop: DesktopBridge? = nil, shared: SharedSync? = nil) {
        self.service = service
        self.connection = connection
        self.desktop = desktop
        isShared = shared != nil
        bounds = ArgumentBounds(service.limits)
        transfers = TransferSlots(limit: service.limits.maxTransfers)
        feeder = StoredFileFeeder(maxTransfers: service.limits.maxTransfers)
        let statistics = BusStatistics(connection: connection, logger: service.logger)
        unreadReplies = UnreadReplies(statistics: statistics, overall: service.limits.maxUnreadBytes)
        changedBacklog = ChangedBacklogWatch(statistics: statistics, connection: connection, backlog: service.announcements, full: service.limits.maxUnreadBytes)
        service.perform { [weak self] in
            self?.service.onChange = { [weak self] change in
                guard let self else { return }
                connection.send(signals(for: change))
            }
        }
    }

    /// Starts the expiry timers, once the server owns its name: an expiry that fell due while
    /// the server was down clears at once, and its `Changed` must come from the name that
    /// listeners match on, not from a connection that does not own it yet. The changes the
    /// start made itself (``PasteboardService/changedAtStart``) are announced then too.
    func startTimers() {
        service.perform { [service] in service.startExpiryTimers() }
        connection.send(service.changedAtStart.flatMap(signals(for:)))
        if isShared { listenToSharedStore() }
        desktop?.start(
            announce: { [weak self] change in
                guard let self else { return }
                connection.send(signals(for: change))
            },
            resolve: { [weak self] promise in
                guard let self else { throw PasteboardError.providerFailed("the server is stopping") }
                return try await provide(promise)
            },
            bridgedChanged: { [weak self] in
                guard let self, let message = Self.changeSignals.propertiesChanged(invalidating: ["Desktop"]) else { return }
                connection.send([message])
            })
    }

    // MARK: Dispatch

    func handle(_ call: MethodCall) {
        // Once a stop has begun, a call is left alone: its caller hears from the bus that the
        // server left without a reply, which is then true of the call (see
        // ``PasteboardService/beginStopping()``).
        guard !service.isStopping else { return }
        if call.namesInterface, !call.hasInterface(Self.interface) {
            return call.fail(.unknownInterface("this object has no interface '\(call.interface ?? "")'"))
        }
        guard let method = InterfaceMethod(member: call.member) else {
            return call.fail(.unknownMethod("\(Self.interface) has no method '\(call.member)'"))
        }
        guard call.signature == method.inSignature else {
            return fail(call, .invalidArgument("\(method.rawValue) takes \(method.inArguments), not '\(call.signature)'"))
        }
        switch method {
        case .writeItemsFd:
            guard let arguments = decodedArguments(call, method) else { return }
            writeItemsFd(call, arguments)
        case .writeItems where canWriteAtOnce(call):
            // Read straight from the message, its bytes copied only while they are few; a write
            // the bus thread may not answer (large, owner-only, or refused) is decoded again
            // for the queue, which answers it.
            let small = try? InlineWrite.read(call.message, largest: Payload.inlineThreshold, total: Self.smallWriteBytes, bounds: bounds)
            guard let write = small ?? nil, !write.options.ownerOnly, writeAtOnce(call, { answer throws(PasteboardError) in
                try self.write(write, answer, callerPID: nil)
            }) else {
                guard let arguments = decodedArguments(call, method) else { return }
                return enqueue(method, call, arguments)
            }
        case .clearContents where canWriteAtOnce(call):
            let arguments = call.arguments
            if !writeAtOnce(call, { answer throws(PasteboardError) in try self.answer(method, answer, arguments, callerPID: nil) }) {
                enqueue(method, call, arguments)
            }
        case .readData where nothingQueued(from: call):
            do throws(PasteboardError) {
                let request = try ReadRequest(call.message)
                answerOnBusThread(call, fallback: method) { answer, callerPID throws(PasteboardError) in
                    try self.readData(request, answer, callerPID: callerPID)
                }
            } catch {
                fail(call, error)
            }
        case _ where method.onlyReads && nothingQueued(from: call):
            guard let arguments = decodedArguments(call, method) else { return }
            answerOnBusThread(call, fallback: method) { answer, callerPID throws(PasteboardError) in
                try self.answer(method, answer, arguments, callerPID: callerPID)
            }
        default:
            guard let arguments = decodedArguments(call, method) else { return }
            enqueue(method, call, arguments)
        }
    }

    /// The call's arguments, decoded once its arrays are known to be within ``bounds``; nil,
    /// the call answered with the error, when one is not. Decoding an array costs the bus
    /// thread a value for each element, which a hostile call could make millions.
    private func decodedArguments(_ call: MethodCall, _ method: InterfaceMethod) -> [DBusValue]? {
        do throws(PasteboardError) {
            try bounds.check(call.message, method)
        } catch {
            fail(call, error)
            return nil
        }
        return call.arguments
    }

    /// Answers a read on the bus thread. Owner-only data is answered here too when the caller's
    /// process was looked up before; else the lookup is made in turn, on the queue.
    private func answerOnBusThread(_ call: MethodCall, fallback method: InterfaceMethod, _ read: (Answer, UInt32?) throws(PasteboardError) -> Void) {
        do throws(PasteboardError) {
            try read(Answer(call: call, outbox: nil), nil)
        } catch where error.code == .accessDenied {
            guard let callerPID = processIDs.remembered(call.sender) else { return enqueue(method, call, call.arguments) }
            do throws(PasteboardError) {
                try read(Answer(call: call, outbox: nil), callerPID)
            } catch {
                fail(call, error)
            }
        } catch {
            fail(call, error)
        }
    }

    /// Answers a small write (or a clear) on the bus thread, when the service queue is idle: the
    /// change is recorded in the commit log (a copy into memory the kernel writes back; no
    /// system call, and no wait for the disk but a page's write fault: see ``CommitLog``),
    /// published, and answered, with no thread hop and no SQLite transaction in its way. False
    /// when the queue is busy or the log full: nothing happened, and the call takes the queue.
    private func writeAtOnce(_ call: MethodCall, _ change: (Answer) throws(PasteboardError) -> Void) -> Bool {
        service.withTurnIfFree { () -> Bool in
            service.beginBatch()
            let outbox = Outbox()
            do throws(PasteboardError) {
                try change(Answer(call: call, outbox: outbox))
            } catch {
                Answer(call: call, outbox: outbox).fail(error)
            }
            guard service.logBatch() else { return false }
            outbox.release(failure: nil)
            return true
        } ?? false
    }

    /// Whether a change of `call` may be answered on the bus thread: there is a commit log to
    /// record it in (without one, every change is committed on the queue, and trying here first
    /// would only do the work twice), and its sender has nothing queued that it would overtake.
    private func canWriteAtOnce(_ call: MethodCall) -> Bool {
        // A shared store decides each change on the database, which the bus thread never waits for.
        service.store.log != nil && !isShared && nothingQueued(from: call)
    }

    /// Whether `call`'s sender has no call waiting on the queue. Mostly none has, which is
    /// told without making a string of the sender's name and hashing it.
    private func nothingQueued(from call: MethodCall) -> Bool {
        queued.withLock { $0.isEmpty || $0[call.sender] == nil }
    }

    /// The most bytes, in all, of a `WriteItems` answered on the bus thread. Each representation
    /// must also be small enough to stay in memory (no blob file is written there), and the
    /// write not owner-only (those are committed on the queue, where the caller's process is
    /// looked up if need be).
    static let smallWriteBytes = 256 * 1024

    /// `WriteItems`: the items stored, the change count in the reply, `Changed` after it.
    func write(_ write: InlineWrite, _ call: Answer, callerPID: UInt32?) throws(PasteboardError) {
        let items = try inlineItems(write.items, payloads: service.payloads.volatile(write.options.isVolatile))
        let change = try service.write(write.name, items: items, options: write.options, ownerPID: callerPID)
        call.reply([.uint64(change.count)], followedBy: self.signals(for: change))
    }

    /// `ReadData`: the change count and the bytes, read from disk off the thread if need be.
    func readData(_ request: ReadRequest, _ call: Answer, callerPID: UInt32?) throws(PasteboardError) {
        let (count, representation) = try service.read(request.name, item: request.item, type: request.type, expect: request.expect, callerPID: callerPID)
        try withData(call, representation) { [self] representation throws(PasteboardError) in
            try replyInline(call, representation) { [.uint64(count), .bytes($0)] }
        }
    }

    /// Everything but `WriteItemsFd`: on the service queue within a batch, or on the bus thread
    /// for a read whose sender has nothing queued.
    func answer(_ method: InterfaceMethod, _ call: Answer, _ arguments: [DBusValue], callerPID: UInt32?) throws(PasteboardError) {
        switch method {
        case .listPasteboards:
            call.reply([.strings(service.names().map(\.rawValue))])
        case .changeCount:
            call.reply([.uint64(service.entry(try Arguments.name(arguments[0])).count)])
        case .clearContents:
            let change = try service.clear(try Arguments.name(arguments[0]))
            call.reply([.uint64(change.count)], followedBy: self.signals(for: change))
        case .writeItems:
            try write(try InlineWrite(arguments), call, callerPID: callerPID)
        case .types:
            let entry = service.entry(try Arguments.name(arguments[0]))
            call.reply([.uint64(entry.count), .strings(entry.types.map(\.rawValue))])
        case .items:
            let entry = service.entry(try Arguments.name(arguments[0]))
            let items: [DBusValue] = entry.items.map { item in
                var fields: [(DBusValue, DBusValue)] = [
                    (.string("types"), .variant(.strings(item.types.map(\.rawValue)))),
                    (.string("sizes"), .variant(.array(element: "x", item.representations.map { .int64($0.payload.reportedSize) }))),
                ]
                // Only when set: a plain item is described as the contract has it, no more.
                if entry.isConcealed { fields.append((.string("concealed"), .variant(.boolean(true)))) }
                if item.ownerPID != nil { fields.append((.string("owner-only"), .variant(.boolean(true)))) }
                return .dictionary(key: "s", value: "v", fields)
            }
            call.reply([.uint64(entry.count), .array(element: "a{sv}", items)])
        case .availableType:
            let name = try Arguments.name(arguments[0])
            let requested = try Arguments.types(arguments[1])
            let index = service.availableType(name, from: requested)
            call.reply([.string(index.map { arguments[1].stringArrayValue![$0] } ?? "")])
        case .canRead:
            let name = try Arguments.name(arguments[0])
            let requested = try Arguments.types(arguments[1])
            call.reply([.boolean(service.availableType(name, from: requested) != nil)])
        case .readData:
            try readData(try ReadRequest(arguments), call, callerPID: callerPID)
        case .readBest:
            let (count, representation) = try service.readBest(
                try Arguments.name(arguments[0]), item: arguments[1].uint32Value!, types: try Arguments.types(arguments[2]),
                expect: arguments[3].uint64Value!, callerPID: callerPID)
            try withData(call, representation) { [self] representation throws(PasteboardError) in
                try replyInline(call, representation) { [.uint64(count), .string(representation.type.rawValue), .bytes($0)] }
            }
        case .readFd:
            let (count, representation) = try service.read(
                try Arguments.name(arguments[0]), item: arguments[1].uint32Value!, type: try Arguments.type(arguments[2]),
                expect: arguments[3].uint64Value!, callerPID: callerPID)
            try withData(call, representation) { [self] representation throws(PasteboardError) in
                offload(call) { () throws(PasteboardError) in
                    [.uint64(count), .unixFD(try DescriptorSource.readerDescriptor(for: representation.payload, reader: self.transferClient(of: call.sender), feeder: self.feeder))]
                }
            }
        case .createUnique:
            call.reply([.string(service.uniqueName().rawValue)])
        case .remove:
            let change = try service.remove(try Arguments.name(arguments[0]))
            call.reply([], followedBy: change.map(self.signals(for:)) ?? [])
        case .history:
            let entries = service.history(try Arguments.name(arguments[0]), limit: arguments[1].uint32Value!)
            call.reply([.array(element: "(txas)", entries.map { entry in
                .structure([.uint64(entry.count), .int64(Int64(clamping: entry.time)), .strings(entry.types.map(\.rawValue))])
            })])
        case .restore:
            let change = try service.restore(try Arguments.name(arguments[0]), count: arguments[1].uint64Value!)
            call.reply([.uint64(change.count)], followedBy: self.signals(for: change))
        case .writePromised:
            let name = try Arguments.name(arguments[0])
            let options = try Arguments.writeOptions(arguments[2])
            var itemTypes: [[PasteboardType]] = []
            for types in arguments[1].arrayValue ?? [] {
                itemTypes.append(try Arguments.types(types))
            }
            let change = try service.writePromised(name, itemTypes: itemTypes, provider: call.sender, options: options, ownerPID: callerPID)
            call.reply([.uint64(change.count)], followedBy: self.signals(for: change))
        case .writeItemsFd:
            preconditionFailure("WriteItemsFd is handled off the service queue")
        }
    }

    // MARK: Replying

    /// `Changed` for `change`, followed by `Removed` when it was a `Remove`; made once per
    /// change, so the desktop bridge hears of each change here.
    func signals(for change: Change) -> [Message] {
        desktop?.changed(change)
        // About what the messages take in the bus: the header, the name and the types.
        var bytes = UInt64(160 + change.name.rawValue.utf8.count)
        for type in change.types { bytes += UInt64(8 + type.rawValue.utf8.count) }
        changedBacklog.sent(bytes)
        return Self.changeSignals.messages(for: change)
    }

    private static let changeSignals = ChangeSignals(path: path, interface: interface)

    /// Replies with the representation's bytes, read from disk off the service queue if need be;
    /// a large reply once the bus says its client is not far behind with its reading
    /// (``UnreadReplies``).
    func replyInline(_ call: Answer, _ representation: Representation, _ values: @escaping @Sendable ([UInt8]) -> [DBusValue]) throws(PasteboardError) {
        let limit = service.limits.maxInlineBytes
        guard representation.size <= limit else {
            throw .tooLarge("the \(representation.type) data is \(representation.size) bytes, over \(limit) (max-inline-bytes); read it with ReadFd")
        }
        guard UnreadReplies.isChecked(representation.size) else {
            return send(call, representation, values)
        }
        unreadReplies.send(representation.size, to: call.sender, reply: { [self] in send(call, representation, values) }, refuse: { call.fail($0) })
    }

    /// The reply of ``replyInline(_:_:_:)``, its bytes read from disk off the thread if need be.
    private func send(_ call: Answer, _ representation: Representation, _ values: @escaping @Sendable ([UInt8]) -> [DBusValue]) {
        if case .inline(let bytes) = representation.payload {
            return call.reply(values(bytes))
        }
        offload(call) { () throws(PasteboardError) in values(try DescriptorSource.bytes(of: representation.payload)) }
    }

    /// Computes a reply on a global queue (disk reads, descriptor setup).
    func offload(_ call: Answer, _ work: @escaping @Sendable () throws(PasteboardError) -> [DBusValue]) {
        DispatchQueue.global().async {
            do throws(PasteboardError) {
                call.reply(try work())
            } catch {
                call.fail(error)
            }
        }
    }

    func fail(_ call: MethodCall, _ error: PasteboardError) {
        call.fail(DBusError(error))
    }

    // MARK: Properties

    /// The standard interfaces of the object, which have no properties.
    private static let standardInterfaces: Set<String> = [
        "org.freedesktop.DBus.Introspectable", "org.freedesktop.DBus.Properties", "org.freedesktop.DBus.Peer",
    ]

    /// The properties of `interface`; the empty name, which the D-Bus specification lets a
    /// caller give for "any interface", stands for the one interface here that has any.
    func properties(of interface: String) async throws(DBusError) -> [(name: String, value: DBusValue)] {
        if Self.standardInterfaces.contains(interface) { return [] }
        guard interface == Self.interface || interface.isEmpty else { throw .unknownInterface("this object has no interface '\(interface)'") }
        let names = await withCheckedContinuation { done in
            service.perform { done.resume(returning: self.service.names().map(\.rawValue)) }
        }
        let limits = service.limits
        return [
            ("Version", .string(Self.version)),
            ("Pasteboards", .strings(names)),
            ("Limits", .dictionary(key: "s", value: "t", Limits.keys.map { (.string($0), .uint64(limits[$0])) })),
            ("Desktop", .dictionary(key: "s", value: "s", (desktop?.bridged ?? []).map { (.string($0.name), .string($0.to)) })),
        ]
    }
}
