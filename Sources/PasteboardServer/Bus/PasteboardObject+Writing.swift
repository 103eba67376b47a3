import DBus
import Foundation
import PasteboardModel

/// Writing: items passed inline, and items read from descriptors on a transfer thread.
extension PasteboardObject {

    /// The items of `WriteItems`; data over `max-inline-bytes` is refused.
    func inlineItems(_ value: DBusValue, payloads: PayloadWriter) throws(PasteboardError) -> [Item] {
        var items: [Item] = []
        for (index, element) in (value.arrayValue ?? []).enumerated() {
            var representations: [Representation] = []
            for (key, data) in element.dictionaryEntries ?? [] {
                let type = try Arguments.type(key)
                let bytes = data.bytesValue ?? []
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
        let limit = service.limits.maxTransfers
        guard transfers.add(1, ordering: .relaxed).newValue <= limit else {
            transfers.subtract(1, ordering: .relaxed)
            return fail(call, .quotaExceeded("\(limit) transfers are already in progress (max-transfers); try again when one has finished"))
        }
        Thread.detachNewThread { [self] in
            defer { transfers.subtract(1, ordering: .relaxed) }
            let prepared: (PasteboardName, [Item], WriteOptions)
            do throws(PasteboardError) {
                let name = try Arguments.name(arguments[0])
                let options = try Arguments.writeOptions(arguments[2])
                prepared = (name, try descriptorItems(arguments[1], payloads: service.payloads.volatile(options.isVolatile)), options)
            } catch {
                return fail(call, error)
            }
            // A pipe reads as complete when its writer dies; commit only if the writer is
            // still there to have closed it on purpose.
            Task {
                // Only "no owner" means the writer left; a failed lookup must not drop the call.
                let writerLeft: Bool
                do {
                    writerLeft = try await connection.nameOwner(call.sender) == nil
                } catch {
                    writerLeft = false
                }
                // An unknown writer process (0) can read nothing back: owner-only fails closed.
                let pid = prepared.2.ownerOnly ? (await processIDs.pid(of: call.sender, on: connection) ?? 0) : nil
                service.queue.async { [self] in
                    do throws(PasteboardError) {
                        // Nobody is left to answer, and the data may be cut short: store nothing.
                        guard !writerLeft else { return }
                        let change = try service.write(prepared.0, items: prepared.1, options: prepared.2, ownerPID: pid)
                        call.reply([.uint64(change.count)], followedBy: Self.signals(for: change))
                    } catch {
                        fail(call, error)
                    }
                }
            }
        }
    }

    /// The items of `WriteItemsFd`, each descriptor read to its end. The same open file given
    /// for several types is read once and offered under each.
    func descriptorItems(_ value: DBusValue, payloads: PayloadWriter) throws(PasteboardError) -> [Item] {
        let reader = DescriptorReader(
            payloads: payloads, maxBytes: service.limits.maxItemBytes,
            idleTimeoutMilliseconds: Int32(clamping: service.limits.transferIdleTimeoutMilliseconds))
        var alreadyRead: [FileIdentity: Payload] = [:]
        var items: [Item] = []
        for (index, element) in (value.arrayValue ?? []).enumerated() {
            var representations: [Representation] = []
            for (key, descriptor) in element.dictionaryEntries ?? [] {
                let type = try Arguments.type(key)
                guard let fd = descriptor.fileDescriptorValue else { throw .invalidArgument("item \(index) has no descriptor for \(type)") }
                let identity = FileIdentity(fd)
                let payload: Payload
                if let identity, let known = alreadyRead[identity] {
                    payload = known
                } else {
                    payload = try reader.read(fd, label: "\(type) of item \(index)")
                    if let identity { alreadyRead[identity] = payload }
                }
                representations.append(Representation(type: type, payload: payload))
            }
            items.append(Item(representations: representations))
        }
        return items
    }
}
