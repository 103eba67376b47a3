import CDBus
import CXCB
import DBus

#if canImport(Glibc)
import Glibc
#endif

/// Asking other apps for their selection: `TARGETS` when they take it, data when it is fetched.
extension X11Clipboard {

    /// One `ConvertSelection` in progress: the data lands in a property of ours, in one piece or,
    /// for `INCR`, in steps, and is gathered in a memfd.
    final class Conversion {
        let selection: DesktopSelection
        let generation: UInt64
        let target: xcb_atom_t
        /// The most kept: past it, one byte more is kept and the conversion ends there.
        let maxBytes: UInt64
        var incremental = false
        var memory: UnixFileDescriptor?
        var written: UInt64 = 0
        var deadline: UInt64 = 0
        let finish: (Result<UnixFileDescriptor, DesktopClipboardError>) -> Void

        init(
            selection: DesktopSelection, generation: UInt64, target: xcb_atom_t, maxBytes: UInt64,
            finish: @escaping (Result<UnixFileDescriptor, DesktopClipboardError>) -> Void
        ) {
            self.selection = selection
            self.generation = generation
            self.target = target
            self.maxBytes = maxBytes
            self.finish = finish
        }
    }

    /// Targets that describe the selection mechanism rather than the data.
    static let mechanismTargets: Set<String> = [
        "TARGETS", "MULTIPLE", "TIMESTAMP", "SAVE_TARGETS", "DELETE", "INSERT_SELECTION", "INSERT_PROPERTY",
        "ATOM_PAIR", "INCR", "_GTK_TEXT_BUFFER_CONTENTS",
    ]

    /// Asks the new owner of `selection` what it offers, then reports it.
    func askTargets(of selection: DesktopSelection) {
        let generation = generations[selection, default: 0]
        convert(selection, generation: generation, target: atoms.targets, timeout: .seconds(5), maxBytes: Self.maxTargetsBytes) { [self] result in
            guard generations[selection] == generation else { return }
            // An app that does not answer at all (hung, or gone meanwhile) has copied nothing
            // that can be known: no change is made of it.
            if case .failure(let error) = result, case .timedOut = error { return }
            if case .failure(let error) = result, case .ownerGone = error { return }
            var types = ["UTF8_STRING", "STRING"]
            // An app that refuses to list its targets is taken to have text, the oldest kind.
            if case .success(let memory) = result, let bytes = try? Self.readAll(memory) {
                let atomList = bytes.withUnsafeBytes { Array($0.bindMemory(to: xcb_atom_t.self)) }
                let names = display.names(of: atomList).filter { !$0.isEmpty && !Self.mechanismTargets.contains($0) }
                var seen = Set<String>()
                types = names.filter { seen.insert($0).inserted }
            }
            report(selection, source: X11Source(clipboard: self, selection: selection, generation: generation, types: types))
        }
    }

    /// The most of a `TARGETS` answer read: 256 Ki atoms, far past any app's list (a longer
    /// one is cut there, and the bridge keeps 64 types of it at most).
    static let maxTargetsBytes: UInt64 = 1 << 20

    /// Whether the current owner of `selection` is still being asked for its `TARGETS`: a new
    /// owner not yet reported to the delegate.
    func isBeingListed(_ selection: DesktopSelection) -> Bool {
        conversions.values.contains { $0.selection == selection && $0.target == atoms.targets && $0.generation == generations[selection] }
    }

    /// Converts the current owner's `selection` to `target` into a memfd; `finish` runs on the
    /// loop thread, once. At most `maxBytes` and one byte more are kept: an app that sends more
    /// (an `INCR` answer may never end) is left there, and the memfd ends with the byte that
    /// tells the reader it is too large.
    func convert(
        _ selection: DesktopSelection, generation: UInt64, target: xcb_atom_t, timeout: Duration, maxBytes: UInt64,
        finish: @escaping (Result<UnixFileDescriptor, DesktopClipboardError>) -> Void
    ) {
        guard generations[selection] == generation, owned[selection] == nil else {
            return finish(.failure(.ownerGone("the app that copied it has quit or copied something else")))
        }
        let property = takeProperty()
        let conversion = Conversion(selection: selection, generation: generation, target: target, maxBytes: maxBytes, finish: finish)
        conversion.deadline = loop.after(timeout) { [self] in
            // The property is not used again: an answer may still come into it.
            guard conversions.removeValue(forKey: property) != nil else { return }
            conversion.finish(.failure(.timedOut("the app that copied it did not send its data within \(timeout)")))
        }
        conversions[property] = conversion
        xcb_convert_selection(display.connection, display.window, selectionAtoms[selection]!, target, property, xcb_timestamp_t(XCB_CURRENT_TIME))
    }

    /// The owner answered a conversion (SelectionNotify).
    func converted(_ notify: xcb_selection_notify_event_t) {
        guard notify.requestor == display.window else { return }
        // A refusal names no property: it is known by its target.
        let key = notify.property != atoms.none
            ? notify.property
            : conversions.first { $0.value.target == notify.target && selectionAtoms[$0.value.selection] == notify.selection }?.key
        guard let key, let conversion = conversions[key] else { return }
        guard notify.property != atoms.none else {
            return end(key, .refused("the app that copied it would not convert it to \(display.names(of: [conversion.target])[0])"))
        }
        guard let value = display.property(key, of: display.window, delete: true) else {
            return end(key, .refused("the app that copied it answered with nothing"))
        }
        if value.type == atoms.incr {
            // Deleting the INCR property (done) asks for the first step.
            conversion.incremental = true
            return
        }
        guard append(value.bytes, to: conversion, key: key) else { return }
        end(key, nil)
    }


    /// A step of an `INCR` answer arrived in `property`.
    func received(into property: xcb_atom_t) {
        if draining[property] != nil { return drained(property) }
        guard let conversion = conversions[property], conversion.incremental else { return }
        guard let value = display.property(property, of: display.window, delete: true) else { return }
        if value.bytes.isEmpty { return end(property, nil) }
        guard append(value.bytes, to: conversion, key: property) else { return }
        loop.cancel(conversion.deadline)
        conversion.deadline = loop.after(.seconds(10)) { [self] in
            end(property, .timedOut("the app that copied it stopped sending its data"))
        }
    }

    /// Adds `bytes` to what `conversion` gathered; false when the conversion has ended (it
    /// could not be kept, or it is past its ``Conversion/maxBytes``: then the bytes up to one
    /// past it are kept, and it ends with them).
    private func append(_ bytes: [UInt8], to conversion: Conversion, key: xcb_atom_t) -> Bool {
        let allowed = conversion.maxBytes - min(conversion.written, conversion.maxBytes)
        let over = UInt64(bytes.count) > allowed
        let kept = over ? Int(allowed) + 1 : bytes.count
        do {
            if conversion.memory == nil { conversion.memory = try UnixFileDescriptor.memoryFile(name: "x11-selection") }
            let failure = UnixFileDescriptor.writeAll(conversion.memory!.rawValue, bytes.prefix(kept))
            if failure != 0 { throw SystemCallError("write", errno: failure) }
            conversion.written += UInt64(kept)
        } catch {
            end(key, .refused("cannot keep the data: \(error)"))
            return false
        }
        guard !over else {
            // An INCR sender, told by the deletion of the step just read, may still write one
            // more step into the property: it is not used again until the rest is drained.
            end(key, nil, propertyReusable: false)
            if conversion.incremental { drain(key) }
            return false
        }
        return true
    }

    /// Takes the rest of an `INCR` answer given up on as over the limit, and drops it. Its app
    /// sends each step once the last one is taken, and serves no one else meanwhile: left
    /// halfway, `xclip` would wait for ever, and every later paste of its copy with it. An app
    /// that stops sending for 10 seconds, or sends more than ``drainedAtMost`` (an answer may
    /// never end), is left, and the property with it.
    private func drain(_ property: xcb_atom_t, dropped: Int = 0) {
        draining[property] = (loop.after(.seconds(10)) { [self] in draining[property] = nil }, dropped)
    }

    /// A step of an answer being drained arrived: taken and dropped; the empty last one ends it.
    private func drained(_ property: xcb_atom_t) {
        guard let (deadline, dropped) = draining[property] else { return }
        loop.cancel(deadline)
        // No such property (a notice that raced its deletion): the next step is still awaited.
        guard let step = display.property(property, of: display.window, delete: true)?.bytes else { return drain(property, dropped: dropped) }
        guard !step.isEmpty else {
            draining[property] = nil
            freeProperties.append(property)
            return
        }
        guard dropped + step.count <= Self.drainedAtMost else {
            draining[property] = nil
            return
        }
        drain(property, dropped: dropped + step.count)
    }

    /// The most of an answer over the limit taken and dropped after it: a copy some times the
    /// limit is let go of, in a fraction of a second; an endless one is not read for ever.
    static let drainedAtMost = 256 << 20

    /// Ends a conversion with `failure`, or with its data. A property an app may still write
    /// into is not used again: one given up on as over the limit, or an `INCR` answer that
    /// failed before its last step (the app may send the next one late, into whatever
    /// conversion took the property meanwhile).
    private func end(_ property: xcb_atom_t, _ failure: DesktopClipboardError?, propertyReusable: Bool = true) {
        guard let conversion = conversions.removeValue(forKey: property) else { return }
        loop.cancel(conversion.deadline)
        if propertyReusable, failure == nil || !conversion.incremental { freeProperties.append(property) }
        if let failure { return conversion.finish(.failure(failure)) }
        do {
            let memory = try conversion.memory ?? UnixFileDescriptor.memoryFile(name: "x11-selection")
            lseek(memory.rawValue, 0, SEEK_SET)
            conversion.finish(.success(memory))
        } catch {
            conversion.finish(.failure(.refused("cannot keep the data: \(error)")))
        }
    }

    func failConversions(of selection: DesktopSelection, _ failure: DesktopClipboardError) {
        for (property, conversion) in conversions where conversion.selection == selection {
            conversions[property] = nil
            loop.cancel(conversion.deadline)
            conversion.finish(.failure(failure))
        }
    }

    private func takeProperty() -> xcb_atom_t {
        if let free = freeProperties.popLast() { return free }
        propertiesMade += 1
        return display.atom("_PASTEBOARDD_\(propertiesMade)")
    }

    /// Everything `fd` holds from its start (a memfd of a conversion).
    static func readAll(_ fd: UnixFileDescriptor) throws(SystemCallError) -> [UInt8] {
        var bytes: [UInt8] = []
        var chunk = [UInt8](repeating: 0, count: 65536)
        lseek(fd.rawValue, 0, SEEK_SET)
        while true {
            let count = chunk.withUnsafeMutableBytes { read(fd.rawValue, $0.baseAddress, $0.count) }
            if count < 0, errno == EINTR { continue }
            guard count >= 0 else { throw SystemCallError("read") }
            if count == 0 { return bytes }
            bytes += chunk[..<count]
        }
    }
}

/// A selection another app owns on X11; its data is converted when fetched.
final class X11Source: DesktopSource, @unchecked Sendable {
    let types: [String]
    private let clipboard: X11Clipboard
    private let selection: DesktopSelection
    private let generation: UInt64

    /// `@unchecked Sendable`: every member is a constant; the clipboard's state is reached only
    /// on its loop thread.
    init(clipboard: X11Clipboard, selection: DesktopSelection, generation: UInt64, types: [String]) {
        self.clipboard = clipboard
        self.selection = selection
        self.generation = generation
        self.types = types
    }

    /// Always true: on X11 the end of the data is known, so data fetched to its end is whole
    /// whatever its app did since. A conversion ends with one whole property or with `INCR`'s
    /// empty last step; an app that quits halfway fails it instead (XFixes reports the owner
    /// gone, and ``X11Clipboard/failConversions(of:_:)`` ends it). An app that quits as soon as
    /// it has sent its data (`xclip -loops 1`) is therefore pasted, though it is gone by the
    /// time the data has been read.
    func isStillTheSelection() async -> Bool {
        true
    }

    func fetch(_ type: String, timeout: Duration, maxBytes: UInt64) async throws(DesktopClipboardError) -> UnixFileDescriptor {
        guard types.contains(type) else { throw .refused("the app that copied it offers no \(type)") }
        let result = await withCheckedContinuation { (done: CheckedContinuation<Result<UnixFileDescriptor, DesktopClipboardError>, Never>) in
            let (clipboard, selection, generation) = (clipboard, selection, generation)
            let submitted = clipboard.loop.submit {
                clipboard.convert(selection, generation: generation, target: clipboard.display.atom(type), timeout: timeout, maxBytes: maxBytes) { done.resume(returning: $0) }
            }
            if !submitted { done.resume(returning: .failure(.ownerGone("the connection to the X display has ended"))) }
        }
        return try result.get()
    }
}
