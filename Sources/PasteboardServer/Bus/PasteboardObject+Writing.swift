import DBus
import Foundation
import PasteboardModel

/// Writing: items passed inline, and items read from descriptors on a transfer thread.
extension PasteboardObject {

    /// The items of `WriteItems`, each type checked in turn; data over `max-inline-bytes` is
    /// refused.
    func inlineItems(_ written: [[(type: String, bytes: [UInt8])]], payloads: PayloadWriter) throws(PasteboardError) -> [Item] {
        var items: [Item] = []
        items.reserveCapacity(written.count)
        for (index, element) in written.enumerated() {
            var representations: [Representation] = []
            representations.reserveCapacity(element.count)
            for (text, bytes) in element {
                let type = try PasteboardType(validating: text)
                if UInt64(bytes.count) > service.limits.maxInlineBytes {
                    throw .tooLarge("item \(index) has \(bytes.count) bytes of \(type); data over \(service.limits.maxInlineBytes) bytes (max-inline-bytes) must be written with WriteItemsFd")
                }
                representations.append(Representation(type: type, payload: try payloads.payload(for: bytes)))
            }
            items.append(Item(representations: representations))
        }
        return items
    }

    /// Reads every descriptor on a transfer thread, then commits on the service queue.
    func writeItemsFd(_ call: MethodCall, _ arguments: [DBusValue]) {
        let request: DescriptorRequest
        do throws(PasteboardError) {
            request = try DescriptorRequest(arguments)
        } catch {
            return fail(call, error)
        }
        // The process is asked of the bus once per client; until it answers, nothing is read.
        if let pid = processIDs.remembered(call.sender) { return transfer(call, request, for: .process(pid)) }
        Task { transfer(call, request, for: await processIDs.transferClient(of: call.sender, on: connection)) }
    }

    /// Counts the transfer in for `client`, then reads every descriptor on a thread of its own.
    private func transfer(_ call: MethodCall, _ request: DescriptorRequest, for client: TransferClient) {
        if let refusal = admitTransfer(for: client) { return fail(call, refusal) }
        Thread.detachNewThread { [self] in
            let watch = CallerWatch { [self] in hasLeftNow(call.sender) }
            let read = Result { () throws(PasteboardError) in try self.read(request, watch: watch) }
            // The slot is free before anything is answered: a client that starts its next
            // transfer on this one's answer must not find it still taken.
            releaseTransfer(of: client)
            let write: DescriptorWrite
            switch read {
            case .success(let done): write = done
            case .failure(let error): return fail(call, error)
            }
            // The writer's process was asked when the transfer was counted in. An unknown one
            // (0) can read nothing back: owner-only fails closed.
            let pid = write.options.ownerOnly ? (client.processID ?? 0) : nil
            // A file's end is its size, whoever is left: nothing to ask the bus.
            guard !write.endsAreFinal else { return commit(write, for: call, writerLeft: false, pid: pid) }
            // A pipe's end may be its writer dying: the dying process is seen at once, the
            // connection it left a moment later (see CallerProcess).
            let dying = client.processID.map(CallerProcess.isEnding) ?? false
            Task { commit(write, for: call, writerLeft: dying ? true : await hasLeft(call.sender), pid: pid) }
        }
    }

    /// Reads every descriptor of `request` (on a transfer thread), and with a shared store
    /// uploads what is large.
    private func read(_ request: DescriptorRequest, watch: CallerWatch) throws(PasteboardError) -> DescriptorWrite {
        let read = try descriptorItems(request.items, payloads: service.payloads.volatile(request.options.isVolatile), watch: watch)
        // Large data goes to a shared store from here, not from the service queue.
        if let shared = service.shared, !request.options.isVolatile, !request.options.ownerOnly {
            do { try shared.upload(read.items) } catch { throw service.saveFailed(error, names: [request.name]) }
        }
        return DescriptorWrite(name: request.name, items: read.items, options: request.options, endsAreFinal: read.endsAreFinal)
    }

    /// Counts a transfer of `client`'s in, or says why not (`QuotaExceeded`).
    private func admitTransfer(for client: TransferClient) -> PasteboardError? {
        do throws(TransferSlots<TransferClient>.Refusal) {
            try transfers.take(for: client)
            return nil
        } catch {
            switch error {
            case .holderFull(let most):
                let holder = if case .process = client { "this process has \(most) transfers in progress already over its connections" } else { "this client has \(most) transfers in progress already" }
                return .quotaExceeded("\(holder), the most one client may (a quarter of max-transfers); try again when one has finished")
            case .allTaken(let limit):
                return .quotaExceeded("\(limit) transfers are already in progress (max-transfers); try again when one has finished")
            }
        }
    }

    private func releaseTransfer(of client: TransferClient) {
        transfers.release(client)
    }

    /// Whether `sender` has left the bus. A pipe reads as complete when its writer dies, so
    /// data read from one is committed only if its writer is still there to have closed it on
    /// purpose. Only "no owner" means the writer left: a failed lookup (a bus that does not
    /// answer within seconds included) must not drop the call.
    private func hasLeft(_ sender: String) async -> Bool {
        do {
            return try await connection.nameOwner(sender, timeout: .seconds(5)) == nil
        } catch {
            return false
        }
    }

    /// ``hasLeft(_:)`` for a transfer's thread, which may wait for the bus's answer: it is
    /// never the bus's thread nor one of the tasks' pool.
    private func hasLeftNow(_ sender: String) -> Bool {
        waitForTask { [self] in await hasLeft(sender) }
    }

    /// What a `WriteItemsFd` read, waiting to be committed.
    struct DescriptorWrite: Sendable {
        let name: PasteboardName
        let items: [Item]
        let options: WriteOptions
        /// Whether every descriptor was a file, whose end proves the data complete.
        let endsAreFinal: Bool
    }

    /// Commits a `WriteItemsFd` on the service queue and answers it. (The files of what it
    /// replaces are let go of off the queue: see ``PasteboardService/retirement``.)
    private func commit(_ write: DescriptorWrite, for call: MethodCall, writerLeft: Bool, pid: UInt32?) {
        service.perform { [self] in
            // Nobody is left to answer, and the data may be cut short: store nothing. Nor once
            // the server is stopping: the reply could not leave before the connection closes.
            guard !writerLeft, !service.isStopping else { return }
            // With a shared store, a change another server made first is read, and this one made
            // on top of it (a few times at most).
            for attempt in 1...SharedRetry.attempts {
                service.lockShared(write.name)
                defer { service.releaseShared() }
                do throws(PasteboardError) {
                    let change = try service.write(write.name, items: write.items, options: write.options, ownerPID: pid)
                    return call.reply([.uint64(change.count)], followedBy: self.signals(for: change))
                } catch {
                    if service.lastSaveRaced, attempt < SharedRetry.attempts, write.options.ifChangeCount == nil { continue }
                    return fail(call, error)
                }
            }
        }
    }

    /// The items of `WriteItemsFd`, each descriptor read to its end, and whether every one was
    /// a file. The same open file given for several types is read once and offered under each.
    func descriptorItems(_ requested: [[(type: PasteboardType, fd: UnixFileDescriptor)]], payloads: PayloadWriter, watch: CallerWatch) throws(PasteboardError) -> (items: [Item], endsAreFinal: Bool) {
        let reader = DescriptorReader(
            payloads: payloads, maxBytes: service.limits.maxItemBytes,
            idleTimeoutMilliseconds: Int32(clamping: service.limits.transferIdleTimeoutMilliseconds), watch: watch)
        var alreadyRead: [FileIdentity: Payload] = [:]
        var items: [Item] = []
        var endsAreFinal = true
        for (index, element) in requested.enumerated() {
            var representations: [Representation] = []
            for (type, fd) in element {
                let identity = FileIdentity(fd)
                let payload: Payload
                if let identity, let known = alreadyRead[identity] {
                    payload = known
                } else {
                    let source = TransferSource(fd.rawValue)
                    endsAreFinal = endsAreFinal && source.endIsFinal
                    payload = try reader.read(source, label: "\(type) of item \(index)")
                    if let identity { alreadyRead[identity] = payload }
                }
                representations.append(Representation(type: type, payload: payload))
            }
            items.append(Item(representations: representations))
        }
        return (items, endsAreFinal)
    }
}

