import DBus
import DesktopClipboard
import Dispatch
import Logging
import PasteboardModel
import Synchronization

/// `general` joined to the desktop's clipboard and `primary` to its primary selection, both
/// ways, lazily.
///
/// A copy in a desktop app becomes one change of the pasteboard, its types promised: the data is
/// fetched from the app on the first read (``provide(_:)``) and kept. A change made over the bus
/// makes pasteboardd the selection's owner, and an app's paste is answered from the store
/// (``open(_:count:type:)``). Its own imports are never offered back, and its own ownership is
/// never reported back by the display side, so a change never loops.
///
/// Nothing here runs on the bus thread but ``changed(_:)``, which only hands the change to the
/// service queue; the display's work runs on its own thread, fetches and paste answers on
/// others.
final class DesktopBridge: DesktopClipboardDelegate, Sendable {
    /// The `provider` of the promises of desktop copies.
    static let provider = "desktop"
    /// The type that marks a password manager's copy (KDE's, which GNOME and others honour).
    static let secretHint = "x-kde-passwordManagerHint"
    static let primary = try! PasteboardName(validating: "primary")

    /// The `bus` of this run's promises: one made by an earlier run is never asked of the
    /// apps of this one.
    let token = "desktop-" + Store.randomID()
    private let service: PasteboardService
    private let mode: DesktopMode
    private let environment: [String: String]
    private let logger: Logger
    private let state = Mutex(State())

    private struct State {
        var clipboard: (any DesktopClipboard)?
        /// The desktop copy each selection holds, as imported into its pasteboard.
        var imports: [DesktopSelection: Import] = [:]
        var announce: (@Sendable (Change) -> Void)?
        var resolve: (@Sendable (Promise) async throws -> Payload)?
        /// Told when a display is joined or lost: what ``bridged`` lists has changed.
        var bridgedChanged: (@Sendable () -> Void)?
        var stopped = false
        var retryDelay: Duration = .seconds(1)
        /// Whether a display was joined this run.
        var joinedOnce = false
        /// The selections whose pasteboard was written over the bus after the start and before
        /// the first display was joined (see ``desktopSelectionChanged(_:source:)``).
        var writtenBeforeJoining: Set<DesktopSelection> = []
        /// How many changes of each selection the display has reported since the last connection
        /// began (a selection not in it has had no first word yet): an offer decided after fewer
        /// is not made (``DesktopClipboard/own(_:_:reportsSeen:)``).
        var reports: [DesktopSelection: Int] = [:]
        /// Selections to offer once the display's connection is kept.
        var owedOffers: Set<DesktopSelection> = []
    }

    /// A desktop copy: the change it was, the app's source, and the app's name of each type;
    /// no source for a selection an app emptied.
    private struct Import {
        let count: UInt64
        let source: (any DesktopSource)?
        let sourceTypes: [PasteboardType: String]
        /// Its app has quit (the selection has no owner): what is fetched of it is offered by
        /// pasteboardd.
        var ownerGone = false
        /// The types whose data was found over `max-item-bytes`, with what the read said: a
        /// later read (`ReadFd` after `ReadBest`, as pbctl does) is refused at once rather than
        /// asking the app again, which an X11 app left halfway through a transfer may not answer.
        var tooLarge: [PasteboardType: PasteboardError] = [:]
    }

    init(service: PasteboardService, mode: DesktopMode, environment: [String: String], logger: Logger) {
        self.service = service
        self.mode = mode
        self.environment = environment
        self.logger = logger
    }

    /// Connects to the display, once the server owns its name (the changes it announces come
    /// from that name). `announce` sends a change's signals; `resolve` asks a promise's writer;
    /// `bridgedChanged` hears that a display was joined or lost.
    func start(
        announce: @escaping @Sendable (Change) -> Void, resolve: @escaping @Sendable (Promise) async throws -> Payload,
        bridgedChanged: @escaping @Sendable () -> Void = {}
    ) {
        state.withLock { state in
            state.announce = announce
            state.resolve = resolve
            state.bridgedChanged = bridgedChanged
        }
        guard mode != .off else {
            return logger.notice("desktop bridge: off (--desktop off)")
        }
        // Not on the caller's thread (the server's start): a display that takes the connection
        // and then does not answer (hung, stopped; connecting to X11 has no time bound) must
        // hold neither the start nor, behind it, the stop that SIGTERM asks for.
        DispatchQueue.global().async { [self] in connect(first: true) }
    }

    func stop() {
        let clipboard = state.withLock { state in
            state.stopped = true
            return state.clipboard.take()
        }
        clipboard?.close()
    }

    /// What each bridged pasteboard is joined to, for the `Desktop` property.
    var bridged: [(name: String, to: String)] {
        guard let clipboard = state.withLock({ $0.clipboard }) else { return [] }
        return DesktopSelection.allCases.filter(clipboard.selections.contains).map { selection in
            (Self.name(of: selection).rawValue, "\(clipboard.description) \(selection == .clipboard ? "clipboard" : "primary selection")")
        }
    }

    // MARK: Connecting

    private func connect(first: Bool) {
        let stoppedAlready = state.withLock { state in
            state.reports = [:]
            // Only the first joining: a display back from a loss has the newer word.
            if state.joinedOnce { state.writtenBeforeJoining = [] }
            return state.stopped
        }
        guard !stoppedAlready else { return }
        let (clipboard, reason, lasting) = mode.choose(environment: environment, delegate: self)
        guard let clipboard else {
            // No display it could ever use: off, as the contract says of `auto` (neither variable
            // set, or a compositor without a data-control protocol and no DISPLAY). Trying again
            // would not help: the environment stays as it is, and a display that answered
            // without what the bridge needs will not gain it. Asked for by name, that is worth
            // a warning.
            if lasting {
                let line: Logger.Message = "desktop bridge: off (\(reason))"
                if mode == .auto { logger.notice(line) } else { logger.warning(line) }
                return
            }
            if first { logger.warning("desktop bridge: no display yet (\(reason)); serving without it, and trying again") }
            return retry()
        }
        let (stopped, owed, bridgedChanged) = state.withLock { state in
            if !state.stopped { state.clipboard = clipboard }
            state.retryDelay = .seconds(1)
            state.joinedOnce = true
            // Offered now: what the display's first word gave way to, and what was written
            // after that word came, while the connection was not yet kept. A selection not yet
            // reported waits for its first word.
            let reported = Set(state.reports.keys)
            let owed = state.owedOffers.union(state.writtenBeforeJoining.intersection(reported))
            state.owedOffers = []
            state.writtenBeforeJoining.subtract(reported)
            return (state.stopped, owed, state.bridgedChanged)
        }
        if stopped { return clipboard.close() }
        logger.notice("desktop bridge: general is the clipboard of the \(clipboard.description) (\(reason))")
        bridgedChanged?()
        for selection in owed {
            service.perform { [self] in
                let entry = service.entry(Self.name(of: selection))
                guard !isCurrentImport(entry, of: selection) else { return }
                offer(selection, entry, fetchedOnly: false)
            }
        }
    }

    private func retry() {
        let delay = state.withLock { state in
            defer { state.retryDelay = min(state.retryDelay * 2, .seconds(30)) }
            return state.retryDelay
        }
        let (seconds, attoseconds) = delay.components
        DispatchQueue.global().asyncAfter(deadline: .now() + .nanoseconds(Int(seconds * 1_000_000_000 + attoseconds / 1_000_000_000))) { [self] in
            connect(first: false)
        }
    }

    func desktopConnectionLost(_ reason: String) {
        let (description, bridgedChanged) = state.withLock { state in
            defer { state.clipboard = nil }
            return (state.clipboard?.description ?? "display", state.clipboard == nil ? nil : state.bridgedChanged)
        }
        logger.warning("desktop bridge: lost the \(description) (\(reason)); serving without it, and reconnecting when it returns")
        bridgedChanged?()
        retry()
    }

    // MARK: Desktop → pasteboards

    func desktopSelectionChanged(_ selection: DesktopSelection, source: (any DesktopSource)?) {
        // A display still reporting while the server stops (its connection is closed after
        // this) changes nothing any more.
        guard !state.withLock({ $0.stopped }) else { return }
        let name = Self.name(of: selection)
        // The display's first word on a selection names whoever owned it before pasteboardd
        // joined it. A write made over the bus before that (the copy that started the server
        // through bus activation, say) is newer: it takes the selection, rather than be
        // replaced by an older desktop copy.
        let busWriteFirst = state.withLock { state -> Bool? in
            state.reports[selection, default: 0] += 1
            guard state.reports[selection] == 1, state.writtenBeforeJoining.remove(selection) != nil else { return nil }
            if state.clipboard != nil { return true }
            state.owedOffers.insert(selection)
            return false
        }
        if let busWriteFirst {
            if busWriteFirst { service.perform { [self] in offer(selection, service.entry(name), fetchedOnly: false) } }
            return
        }
        guard let source else {
            // The app that owned it quit: what was fetched of its copy stays pasteable (what is
            // being fetched now is offered once kept: see `provide`). Not a secret, though: a
            // password manager that quits, or clears the clipboard on Wayland (which looks the
            // same), means it gone.
            state.withLock { $0.imports[selection]?.ownerGone = true }
            return service.perform { [self] in
                let entry = service.entry(name)
                if entry.isConcealed {
                    empty(selection, because: "the app that owned it quit or cleared it, and a secret is not kept past it")
                } else {
                    offer(selection, entry, fetchedOnly: true)
                }
            }
        }
        let imported = Self.importedTypes(source.types, limit: Int(clamping: service.limits.maxTypesPerItem))
        if imported.types.isEmpty {
            // Still a copy: the pasteboard must not go on showing what the desktop no longer
            // pastes. It becomes one empty change, which is not offered back.
            logger.info("desktop bridge: the \(selection) offers no type pasteboardd can hold (\(source.types.prefix(10).joined(separator: ", "))); '\(name)' is emptied")
        }
        if imported.leftOut > 0 {
            logger.notice("desktop bridge: the \(selection) offers \(imported.types.count + imported.leftOut) types; '\(name)' keeps the first \(imported.types.count) (max-types-per-item)")
        }
        service.perform { [self] in
            do throws(PasteboardError) {
                let change = try service.writePromised(
                    name, itemTypes: imported.types.isEmpty ? [] : [imported.types], provider: Self.provider, bus: token,
                    options: WriteOptions(concealed: imported.concealed), ownerPID: nil)
                announce(change, of: selection, as: Import(count: change.count, source: source, sourceTypes: imported.sourceTypes))
            } catch {
                logger.warning("desktop bridge: could not take the desktop's \(selection) into '\(name)': \(error.message)")
            }
        }
    }

    func desktopSelectionCleared(_ selection: DesktopSelection) {
        guard !state.withLock({ $0.stopped }) else { return }
        // The display's first word on the selection is taken as any first word is (a write
        // made here before joining may be newer).
        let first = state.withLock { state in
            guard state.reports[selection] != nil else { return true }
            state.reports[selection]! += 1
            return false
        }
        if first { return desktopSelectionChanged(selection, source: nil) }
        service.perform { [self] in empty(selection, because: "an app cleared it") }
    }

    /// Keeps `imported` as the desktop copy `selection` holds (on the service queue, `change`
    /// just made of it), and announces the change.
    private func announce(_ change: Change, of selection: DesktopSelection, as imported: Import) {
        let announce = state.withLock { state in
            state.imports[selection] = imported
            return state.announce
        }
        announce?(change)
    }

    /// Empties `selection`'s pasteboard as a desktop change (on the service queue): an app
    /// cleared the selection, or a secret's owner let go of it. One change, announced and not
    /// offered back; none when the pasteboard holds nothing already.
    private func empty(_ selection: DesktopSelection, because reason: String) {
        let name = Self.name(of: selection)
        guard !service.entry(name).items.isEmpty else { return }
        do throws(PasteboardError) {
            let change = try service.clear(name)
            logger.info("desktop bridge: '\(name)' emptied: \(reason)")
            announce(change, of: selection, as: Import(count: change.count, source: nil, sourceTypes: [:]))
        } catch {
            logger.warning("desktop bridge: could not empty '\(name)' after the desktop's \(selection) was emptied: \(error.message)")
        }
    }

    /// The types a desktop copy is stored under: its types (``isTypeName(_:)``), with the X11
    /// text targets (`UTF8_STRING`, `TEXT`, `STRING`) as UTF-8 plain text; each with the app's
    /// name of it. At most `limit`, the first ones, text kept among them. The password manager
    /// hint makes the copy concealed and is not itself stored.
    static func importedTypes(
        _ offered: [String], limit: Int
    ) -> (types: [PasteboardType], sourceTypes: [PasteboardType: String], concealed: Bool, leftOut: Int) {
        // The app's names of UTF-8 text, best first.
        let textNames = ["text/plain;charset=utf-8", "UTF8_STRING", "TEXT", "STRING"]
        var types: [PasteboardType] = []
        var sourceTypes: [PasteboardType: String] = [:]
        var concealed = false
        var leftOut = 0
        for name in offered {
            if name == secretHint {
                concealed = true
                continue
            }
            let type: PasteboardType
            if textNames.contains(name) {
                type = .utf8PlainText
            } else {
                guard isTypeName(name), let valid = try? PasteboardType(validating: name) else { continue }
                type = valid
            }
            if let known = sourceTypes[type] {
                let rank = { (name: String) in textNames.firstIndex(of: name) ?? 0 }
                if type == .utf8PlainText, rank(name) < rank(known) { sourceTypes[type] = name }
            } else if types.count < limit {
                types.append(type)
                sourceTypes[type] = name
            } else if type == .utf8PlainText, let last = types.last {
                // Text is what most pastes ask for: past the limit it takes the place of the
                // last type kept (an app offering thousands of its own first keeps its text).
                types[types.count - 1] = type
                sourceTypes[last] = nil
                sourceTypes[type] = name
                leftOut += 1
            } else {
                leftOut += 1
            }
        }
        return (types, sourceTypes, concealed, leftOut)
    }

    /// Whether a name a desktop app offers is a type: a MIME type, or an identifier
    /// (`com.example.todo`, Apple's `public.png`), kept as written as the contract keeps any
    /// type. X11's own atoms are not (`COMPOUND_TEXT`, `_NETSCAPE_URL`, `PIXMAP`): they have no
    /// dot, or no lowercase letter.
    static func isTypeName(_ name: String) -> Bool {
        name.contains("/") || (name.contains(".") && name.contains(where: \.isLowercase))
    }

    /// A desktop copy's data, asked of the app that copied it (a promise of ``provider``).
    func provide(_ promise: Promise) async throws -> Payload {
        let imported = Self.selection(of: promise.name).flatMap { selection in state.withLock { $0.imports[selection] } }
        guard promise.bus == token else {
            throw PasteboardError.providerFailed("the \(promise.type) data of '\(promise.name)' was copied by a desktop app before pasteboardd last started, and nobody had read it; copy it again")
        }
        guard let imported, imported.count == promise.count, let source = imported.source, let sourceType = imported.sourceTypes[promise.type] else {
            throw PasteboardError.providerFailed("the \(promise.type) data of '\(promise.name)' was copied by a desktop app that has since quit or copied something else before anyone read it; copy it again")
        }
        if let known = imported.tooLarge[promise.type] { throw known }
        let limits = service.limits
        let timeout = Duration.milliseconds(Int64(clamping: limits.providerTimeoutMilliseconds))
        let data: UnixFileDescriptor
        do {
            data = try await source.fetch(sourceType, timeout: timeout, maxBytes: limits.maxItemBytes)
        } catch {
            throw PasteboardError.providerFailed("the desktop app that copied '\(promise.name)' did not provide its \(promise.type) data: \(error.description)")
        }
        let providerFirst = limits.providerTimeoutMilliseconds <= limits.transferIdleTimeoutMilliseconds
        // Kept as the contents it stands for, as a bus writer's data is, unless those must stay
        // off the disk (a password manager's copy).
        let keeps = service.mayKeep(promise)
        let reader = DescriptorReader(
            payloads: service.payloads.volatile(!keeps), maxBytes: limits.maxItemBytes,
            idleTimeoutMilliseconds: Int32(clamping: min(limits.providerTimeoutMilliseconds, limits.transferIdleTimeoutMilliseconds)),
            idleLimitName: providerFirst ? "provider-timeout-ms" : "transfer-idle-timeout-ms")
        let payload: Payload
        do {
            payload = try await TransferThread.run { () throws(PasteboardError) in
                try reader.read(TransferSource(data.rawValue), label: "the desktop's \(promise.type) data")
            }
        } catch {
            if error.code == .tooLarge { remember(error, of: promise) }
            throw Self.sendingFailed(error, promise)
        }
        // The data ended where the app closed its end, which quitting halfway also does.
        guard await source.isStillTheSelection() else {
            throw PasteboardError.providerFailed("the desktop app that copied '\(promise.name)' quit or copied something else while its \(promise.type) data was read; copy it again")
        }
        var text = payload
        if let utf8 = try DesktopTypes.utf8(sourceType, of: payload) {
            text = try service.payloads.volatile(!keeps).payload(for: utf8)
        }
        // Admitted before it is kept: refused data must not reach the store.
        try service.admitProvided(promise, size: text.size)
        if keeps { await service.keepProvided(promise, text) }
        offerIfOwnerGone(promise)
        return text
    }

    /// Keeps the news that `promise`'s data is over the limit with its desktop copy.
    private func remember(_ tooLarge: PasteboardError, of promise: Promise) {
        guard let selection = Self.selection(of: promise.name) else { return }
        state.withLock { state in
            guard state.imports[selection]?.count == promise.count else { return }
            state.imports[selection]?.tooLarge[promise.type] = tooLarge
        }
    }

    /// An app that quits as soon as it has sent its data (`xclip -loops 1`) may be seen to go
    /// before its data is kept, when there was nothing to offer in its place: offers it now.
    private func offerIfOwnerGone(_ promise: Promise) {
        guard let selection = Self.selection(of: promise.name),
            state.withLock({ $0.imports[selection].map { $0.count == promise.count && $0.ownerGone } ?? false })
        else { return }
        service.perform { [self] in
            let entry = service.entry(promise.name)
            guard entry.count == promise.count else { return }
            offer(selection, entry, fetchedOnly: true)
        }
    }

    /// What reading a desktop app's data failed with, as the reader's error: the app's doing
    /// (it went silent, or its end failed) is `ProviderFailed`, as for any promise; data over
    /// the limit stays `TooLarge`.
    private static func sendingFailed(_ error: any Error, _ promise: Promise) -> any Error {
        guard let error = error as? PasteboardError, error.code != .tooLarge else { return error }
        let reason = error.message.components(separatedBy: "; write all data").first ?? error.message
        return PasteboardError.providerFailed("the desktop app that copied '\(promise.name)' did not send its \(promise.type) data: \(reason)")
    }

    // MARK: Pasteboards → desktop

    /// Told of every change (on any thread, the bus thread included): a change of `general` or
    /// `primary` made over the bus makes pasteboardd the owner of the selection.
    func changed(_ change: Change) {
        guard let selection = Self.selection(of: change.name) else { return }
        let joined = state.withLock { state in
            // Once started: the changes the server's start made itself (a secret's emptying)
            // are older than any desktop copy.
            if state.clipboard == nil, !state.joinedOnce, !state.stopped, state.announce != nil { state.writtenBeforeJoining.insert(selection) }
            return state.clipboard != nil
        }
        guard joined else { return }
        service.perform { [self] in
            // Read once published; a later change, if any, is offered by its own turn.
            let entry = service.entry(change.name)
            guard entry.count == change.count, !isCurrentImport(entry, of: selection) else { return }
            offer(selection, entry, fetchedOnly: false)
        }
    }

    /// Offers `entry`'s first item on `selection`, or empties the selection when there is
    /// nothing the desktop may have: empty, owner-only or transient contents, or an app's copy
    /// none of whose data was fetched (once pasteboardd owns the selection, that app can no
    /// longer be asked: a restored copy, say).
    ///
    /// - Parameter fetchedOnly: Whether the offer follows the desktop rather than a change (the
    ///   app that owned the selection quit, or the display came back): the selection is then
    ///   left as it is when there is nothing to offer.
    private func offer(_ selection: DesktopSelection, _ entry: PasteboardEntry, fetchedOnly: Bool) {
        guard let (clipboard, reports) = state.withLock({ state in state.clipboard.map { ($0, state.reports[selection, default: 0]) } }) else { return }
        let name = Self.name(of: selection)
        let transient = entry.isVolatile && !entry.isConcealed
        // A desktop copy's data that was never fetched cannot be any more; a bus writer's
        // promise still can.
        let types = (entry.hasOwnerOnlyItems || transient ? nil : entry.items.first)?.representations.filter { representation in
            guard case .promised(let promise) = representation.payload, promise.provider == Self.provider else { return true }
            return promise.resolved != nil
        }.map(\.type) ?? []
        guard !types.isEmpty else {
            // Nothing the desktop may have: it must not go on pasting what the pasteboard no
            // longer holds (after an app quit, it is nobody's already).
            if !fetchedOnly { clipboard.clear(selection) }
            return
        }
        let count = entry.count
        clipboard.own(selection, DesktopOffer(types: DesktopTypes.offered(types, concealed: entry.isConcealed)) { [self] type in
            try await open(name, count: count, type: type)
        }, reportsSeen: reports)
    }

    /// Whether `entry` is the desktop copy `selection` holds now, imported this run: its app
    /// owns the selection, and it is never offered back. (A restored desktop copy is a change
    /// of its own, and is offered.)
    private func isCurrentImport(_ entry: PasteboardEntry, of selection: DesktopSelection) -> Bool {
        guard state.withLock({ $0.imports[selection]?.count }) == entry.count else { return false }
        // A copy of nothing pasteboardd can hold is an empty change.
        guard let first = entry.items.first?.representations.first else { return true }
        guard case .promised(let promise) = first.payload else { return false }
        return promise.bus == token
    }

    /// The data of `type` (as the desktop names it) of the change `count` of `name`: a
    /// descriptor that reads it from the store, the promise resolved first if need be.
    private func open(_ name: PasteboardName, count: UInt64, type: String) async throws -> UnixFileDescriptor {
        if type == Self.secretHint { return try DesktopTypes.secretHintData() }
        let entry = service.entry(name)
        guard let item = entry.items.first, let stored = DesktopTypes.stored(type, in: item.types) else {
            throw PasteboardError.noSuchType("'\(name)' has no \(type) data")
        }
        let (_, representation) = try service.read(name, item: 0, type: stored, expect: count)
        var payload = representation.payload
        if case .promised(let promise) = payload, let resolve = state.withLock({ $0.resolve }) {
            payload = try await promise.resolve { try await resolve(promise) }
        }
        if type == DesktopTypes.latin1Target {
            return try DescriptorSource.serverSideDescriptor(for: .inline(DesktopTypes.latin1(fromUTF8: try DescriptorSource.bytes(of: payload))))
        }
        return try DescriptorSource.serverSideDescriptor(for: payload)
    }

    // MARK: Names

    static func name(of selection: DesktopSelection) -> PasteboardName {
        selection == .clipboard ? .general : primary
    }

    static func selection(of name: PasteboardName) -> DesktopSelection? {
        name == .general ? .clipboard : name == primary ? .primary : nil
    }
}
