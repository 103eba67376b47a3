import DBus
import PasteboardModel

/// How many times a change another server beat is made again on top of it.
enum SharedRetry {
    static let attempts = 5
}

/// The service queue's side when the pasteboards are shared through PostgreSQL: each call is a
/// batch of its own, made on the latest contents, and made again when another server changed
/// the pasteboard at the same moment.
extension PasteboardObject {

    /// Answers `jobs` one at a time, each committed (to the database, then here) before the next.
    func drainShared(_ jobs: [Job]) {
        defer {
            let more = intake.withLock { intake in
                if intake.jobs.isEmpty { intake.draining = false }
                return !intake.jobs.isEmpty
            }
            if more { service.perform { [self] in drain() } }
        }
        for job in jobs {
            let callerPID = needsCallerPID(job.method, job.arguments) ? (processIDs.remembered(job.call.sender) ?? lookUpProcess(of: job.call.sender)) : nil
            let name = job.method.onlyReads || job.method == .createUnique ? nil : try? Arguments.name(job.arguments[0])
            for attempt in 1...SharedRetry.attempts {
                if let name { service.lockShared(name) }
                let outbox = Outbox()
                service.beginBatch()
                answer(job, into: outbox, callerPID: callerPID)
                let failure = service.commitBatch()
                if name != nil { service.releaseShared() }
                // Made again on top of the other server's change (the answers held are dropped),
                // unless the call asked for the count it found (if-change-count): that is its
                // Conflict.
                if service.lastSaveRaced, attempt < SharedRetry.attempts, !Self.expectsCount(job) { continue }
                leftTheQueue([job])
                outbox.release(failure: failure)
                break
            }
        }
    }

    private static func expectsCount(_ job: Job) -> Bool {
        guard job.method == .writeItems || job.method == .writePromised else { return false }
        return (try? Arguments.writeOptions(job.arguments[2]))?.ifChangeCount != nil
    }

    /// Listens for the other servers' messages: their changes, taken in and announced on this
    /// bus; their questions about promises of this server's clients; the answers to this
    /// server's. What changed while not listening (at start, after the database was away) is
    /// caught up with.
    func listenToSharedStore() {
        guard let shared = service.shared else { return }
        let service = service
        let task = shared.store.listen(
            heard: { [weak self] notice in
                switch notice {
                case .changed(let name, let count):
                    guard let name = try? PasteboardName(validating: name) else { return }
                    let heard = ContinuousClock.now
                    service.perform { service.sharedChanged(name, count: count, heardAt: heard) }
                case .asked(let bus, let request, let name, let count, let item, let type):
                    guard bus == service.busID, let self else { return }
                    Task { await self.provideToOtherServer(request, name: name, count: count, item: item, type: type) }
                case .answered(let request, let chunks):
                    shared.answered(request, .chunks(chunks))
                case .refused(let request, let reason):
                    shared.answered(request, .failed(reason))
                }
            },
            caughtUp: {
                let heard = ContinuousClock.now
                service.perform { service.catchUpShared(heardAt: heard) }
            })
        sharedListener.withLock { $0 = task }
    }

    /// Another server asks for the data of a promise of this server's client: asked of the
    /// writer as for a read here, and put in chunks for that server to read.
    private func provideToOtherServer(_ request: String, name: String, count: UInt64, item: UInt32, type: String) async {
        guard let shared = service.shared else { return }
        do {
            let representation = try service.read(
                try PasteboardName(validating: name), item: item, type: try PasteboardType(validating: type), expect: count).representation
            guard case .promised(let promise) = representation.payload, promise.bus == service.busID else {
                throw PasteboardError.noSuchType("'\(name)' holds no promise of this server's clients for \(type) at change \(count)")
            }
            let payload = try await promise.resolve { [self] in try await provide(promise) }
            let data = try DescriptorSource.serverSideDescriptor(for: payload)
            let chunks = shared.store.origin + "-provided-" + Store.randomID()
            try await shared.store.upload(data.rawValue, as: chunks)
            try await shared.store.send(.answered(request: request, chunks: chunks))
        } catch let error as PasteboardError {
            try? await shared.store.send(.refused(request: request, reason: error.message))
        } catch {
            try? await shared.store.send(.refused(request: request, reason: "\(error)"))
        }
    }
}
