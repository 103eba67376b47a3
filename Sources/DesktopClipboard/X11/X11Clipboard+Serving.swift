import CXCB
import DBus

#if canImport(Glibc)
import Glibc
#endif

/// Answering other apps' requests for a selection pasteboardd owns (ICCCM section 2).
extension X11Clipboard {

    struct SendKey: Hashable {
        let requestor: xcb_window_t
        let property: xcb_atom_t
    }

    /// An `INCR` answer in progress: each time the requestor deletes the property, the next
    /// step is read from the descriptor and written; an empty step ends it.
    final class IncrementalSend {
        let source: UnixFileDescriptor
        let type: xcb_atom_t
        var deadline: UInt64 = 0

        init(source: UnixFileDescriptor, type: xcb_atom_t) {
            self.source = source
            self.type = type
        }
    }

    /// One request, as the ICCCM has it: answered in `property` (the target itself for an
    /// obsolete requestor that names none).
    struct Request {
        let requestor: xcb_window_t
        let selection: xcb_atom_t
        let target: xcb_atom_t
        let property: xcb_atom_t
        let time: xcb_timestamp_t
    }

    func answer(_ event: xcb_selection_request_event_t) {
        let request = Request(
            requestor: event.requestor, selection: event.selection, target: event.target,
            property: event.property == atoms.none ? event.target : event.property, time: event.time)
        // Refused: not ours (any more), or asked of a time before pasteboardd owned it.
        guard let selection = selection(of: request.selection), let owned = owned[selection],
              request.time == xcb_timestamp_t(XCB_CURRENT_TIME) || request.time >= owned.since
        else { return refuse(request) }
        switch request.target {
        case atoms.targets:
            let offered = display.atoms(owned.offer.types)
            display.setProperty(request.property, of: request.requestor, atoms: [atoms.targets, atoms.multiple, atoms.timestamp] + offered)
            reply(request)
        case atoms.timestamp:
            display.setProperty(request.property, of: request.requestor, atoms: [owned.since], type: atoms.integer)
            reply(request)
        case atoms.multiple:
            answerMultiple(request, owned.offer, since: owned.since)
        default:
            guard let type = type(for: request.target, in: owned.offer) else { return refuse(request) }
            let offer = owned.offer
            Task { [self] in
                let opened: UnixFileDescriptor
                do {
                    opened = try await offer.open(type)
                } catch {
                    loop.submit { [self] in refuse(request) }
                    return
                }
                let small = Self.smallContents(opened, limit: display.maxPropertyBytes)
                loop.submit { [self] in
                    if let small {
                        write(small, to: request)
                        reply(request)
                    } else {
                        startSending(opened, to: request)
                    }
                }
            }
        }
    }

    /// The offered type an app asks for by `target`: the type of that name.
    private func type(for target: xcb_atom_t, in offer: DesktopOffer) -> String? {
        let name = display.names(of: [target])[0]
        return offer.types.contains(name) ? name : nil
    }

    /// The bytes of a descriptor of a file of at most `limit` bytes; nil for a larger one or
    /// one whose size is unknown (a pipe), which is sent in steps.
    static func smallContents(_ fd: UnixFileDescriptor, limit: Int) -> [UInt8]? {
        var info = stat()
        guard fstat(fd.rawValue, &info) == 0, info.st_mode & S_IFMT == S_IFREG, Int(info.st_size) <= limit else { return nil }
        return try? readAll(fd)
    }

    /// Writes `bytes` as the answer's property; `TEXT` is answered as `UTF8_STRING`.
    private func write(_ bytes: [UInt8], to request: Request) {
        let type = request.target == atoms.text ? atoms.utf8String : request.target
        bytes.withUnsafeBytes { display.setProperty(request.property, of: request.requestor, type: type, format: 8, bytes: $0) }
    }

    private func reply(_ request: Request) {
        display.notify(request.requestor, selection: request.selection, target: request.target, property: request.property, time: request.time)
    }

    private func refuse(_ request: Request) {
        display.notify(request.requestor, selection: request.selection, target: request.target, property: atoms.none, time: request.time)
    }

    // MARK: INCR

    private func startSending(_ source: UnixFileDescriptor, to request: Request) {
        var info = stat()
        let size = fstat(source.rawValue, &info) == 0 && info.st_mode & S_IFMT == S_IFREG ? UInt32(clamping: info.st_size) : 0
        let key = SendKey(requestor: request.requestor, property: request.property)
        let send = IncrementalSend(source: source, type: request.target == atoms.text ? atoms.utf8String : request.target)
        sends[key] = send
        display.listen(to: request.requestor, propertyChanges: true)
        display.setProperty(request.property, of: request.requestor, atoms: [size], type: atoms.incr)
        reply(request)
        expire(send, key)
    }

    /// The requestor deleted `property`: it read the last step and wants the next.
    func continueSending(to requestor: xcb_window_t, property: xcb_atom_t) {
        let key = SendKey(requestor: requestor, property: property)
        guard let send = sends[key] else { return }
        var chunk = [UInt8](repeating: 0, count: display.maxPropertyBytes)
        var count = 0
        while count < chunk.count {
            let got = chunk.withUnsafeMutableBytes { read(send.source.rawValue, $0.baseAddress! + count, $0.count - count) }
            if got < 0, errno == EINTR { continue }
            guard got > 0 else { break }
            count += got
        }
        chunk.withUnsafeBytes { display.setProperty(property, of: requestor, type: send.type, format: 8, bytes: UnsafeRawBufferPointer(rebasing: $0[..<count])) }
        if count == 0 {
            // The empty step that ends it has been written.
            finishSending(key)
        } else {
            expire(send, key)
        }
    }

    /// Gives up on a requestor that stops reading.
    private func expire(_ send: IncrementalSend, _ key: SendKey) {
        loop.cancel(send.deadline)
        send.deadline = loop.after(.seconds(30)) { [self] in finishSending(key) }
    }

    private func finishSending(_ key: SendKey) {
        guard let send = sends.removeValue(forKey: key) else { return }
        loop.cancel(send.deadline)
        if !sends.keys.contains(where: { $0.requestor == key.requestor }) {
            display.listen(to: key.requestor, propertyChanges: false)
        }
    }

    // MARK: MULTIPLE

    /// Several targets at once: the requestor's property lists (target, property) pairs; each is
    /// answered in its property, and a pair that cannot be has its property replaced by None.
    /// Data too large for one property is refused here (an app asks for it alone, and gets it
    /// through `INCR`).
    private func answerMultiple(_ request: Request, _ offer: DesktopOffer, since: xcb_timestamp_t) {
        guard let list = display.property(request.property, of: request.requestor, delete: false) else { return refuse(request) }
        var listed = list.bytes.withUnsafeBytes { Array($0.bindMemory(to: xcb_atom_t.self)) }
        listed.removeLast(listed.count % 2)
        let pairs = listed
        let wanted = stride(from: 0, to: pairs.count, by: 2).map { (index: $0, target: pairs[$0], type: type(for: pairs[$0], in: offer)) }
        let limit = display.maxPropertyBytes
        Task { [self] in
            var answers: [Int: [UInt8]] = [:]
            for pair in wanted {
                guard let type = pair.type, let opened = try? await offer.open(type), let bytes = Self.smallContents(opened, limit: limit) else { continue }
                answers[pair.index] = bytes
            }
            let found = answers
            loop.submit { [self] in
                var pairs = pairs
                for pair in wanted {
                    let property = pairs[pair.index + 1]
                    if pair.target == atoms.targets {
                        display.setProperty(property, of: request.requestor, atoms: [atoms.targets, atoms.multiple, atoms.timestamp] + display.atoms(offer.types))
                    } else if pair.target == atoms.timestamp {
                        display.setProperty(property, of: request.requestor, atoms: [since], type: atoms.integer)
                    } else if let bytes = found[pair.index] {
                        write(bytes, to: Request(requestor: request.requestor, selection: request.selection, target: pair.target, property: property, time: request.time))
                    } else {
                        pairs[pair.index + 1] = atoms.none
                    }
                }
                display.setProperty(request.property, of: request.requestor, atoms: pairs, type: atoms.atomPair)
                reply(request)
            }
        }
    }
}
