import DBus
import Dispatch
import PasteboardModel
import Synchronization

/// The service queue's side: calls that may change something, or must wait for a client's
/// earlier calls, are taken in batches and answered once the batch is committed.
extension PasteboardObject {
    /// A call waiting for the service queue.
    struct Job: Sendable {
        let method: InterfaceMethod
        let call: MethodCall
        let arguments: [DBusValue]
    }

    /// Hands a call to the service queue, where ``drain()`` answers it with the others that
    /// arrived meanwhile, in arrival order.
    func enqueue(_ method: InterfaceMethod, _ call: MethodCall, _ arguments: [DBusValue]) {
        queued.withLock { $0[call.sender, default: 0] += 1 }
        let startDraining = intake.withLock { intake in
            intake.jobs.append(Job(method: method, call: call, arguments: arguments))
            defer { intake.draining = true }
            return !intake.draining
        }
        if startDraining {
            service.perform { [self] in drain() }
        }
    }

    /// Answers every queued call, a batch at a time: the calls that arrived together run in
    /// order with their changes staged, the batch is committed in one transaction, and only
    /// then do their answers go out.
    ///
    /// A call that needs its caller's process (owner-only data) takes it from what is
    /// remembered; the first time a client needs it, the call first commits the batch before
    /// it, then waits for the lookup, a bus round trip; the calls after it wait their turn.
    ///
    /// One batch per turn on the queue: calls that arrived meanwhile are drained in a turn of
    /// their own, queued behind whatever else waits there (an expiry, a finished transfer).
    func drain() {
        let jobs = intake.withLock { intake in
            defer { intake.jobs = [] }
            if intake.jobs.isEmpty { intake.draining = false }
            return intake.jobs
        }
        if jobs.isEmpty { return }
        // Once the server is stopping, calls not begun are left alone, as calls arriving then
        // are: their answers could not leave before the connection closes.
        guard !service.isStopping else { return leftTheQueue(jobs) }
        if isShared { return drainShared(jobs) }
        defer {
            // More arrived meanwhile: their own turn, behind what else waits on the queue.
            let more = intake.withLock { intake in
                if intake.jobs.isEmpty { intake.draining = false }
                return !intake.jobs.isEmpty
            }
            if more { service.perform { [self] in drain() } }
        }
        var outbox = Outbox()
        service.beginBatch()
        for job in jobs {
            var callerPID: UInt32? = nil
            if needsCallerPID(job.method, job.arguments) {
                callerPID = processIDs.remembered(job.call.sender)
                if callerPID == nil {
                    outbox.release(failure: service.commitBatch())
                    callerPID = lookUpProcess(of: job.call.sender)
                    outbox = Outbox()
                    service.beginBatch()
                }
            }
            answer(job, into: outbox, callerPID: callerPID)
        }
        let failure = service.commitBatch()
        leftTheQueue(jobs)
        outbox.release(failure: failure)
    }

    /// Answers `job` into the batch's `outbox`: its reply, or its error.
    func answer(_ job: Job, into outbox: Outbox, callerPID: UInt32?) {
        do throws(PasteboardError) {
            try answer(job.method, Answer(call: job.call, outbox: outbox), job.arguments, callerPID: callerPID)
        } catch {
            Answer(call: job.call, outbox: outbox).fail(error)
        }
    }

    /// These senders' reads may skip the queue again once their changes are committed (or
    /// refused), and before the answers go out: a client that has its reply sends its next
    /// call at once, and that call should not find itself still queued.
    func leftTheQueue(_ jobs: some Sequence<Job>) {
        queued.withLock { queued in
            for job in jobs {
                let left = (queued[job.call.sender] ?? 1) - 1
                queued[job.call.sender] = left > 0 ? left : nil
            }
        }
    }

    /// The process of `sender`, waited for on the service queue (0 when the bus cannot say:
    /// owner-only data then fails closed). The wait is a bus round trip on another thread.
    func lookUpProcess(of sender: String) -> UInt32 {
        waitForTask { [self] in await processIDs.pid(of: sender, on: connection) ?? 0 }
    }

    /// Whom a transfer of `sender`'s counts against: its process, looked up (blocking this
    /// thread, never the bus's) unless known; its connection when the bus cannot say.
    func transferClient(of sender: String) -> TransferClient {
        if let pid = processIDs.remembered(sender) { return .process(pid) }
        return waitForTask { [self] in await processIDs.transferClient(of: sender, on: connection) }
    }

    func needsCallerPID(_ method: InterfaceMethod, _ arguments: [DBusValue]) -> Bool {
        switch method {
        case .writeItems, .writePromised:
            return (try? Arguments.writeOptions(arguments[2]))?.ownerOnly == true
        case .readData, .readBest, .readFd:
            guard let name = try? Arguments.name(arguments[0]) else { return false }
            return service.hasOwnerOnlyItems(name)
        default:
            return false
        }
    }
}
