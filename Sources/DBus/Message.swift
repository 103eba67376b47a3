import CDBus
import Dispatch
import Synchronization

#if canImport(Glibc)
import Glibc
#endif

/// A D-Bus message: a method call, a reply, an error or a signal.
///
/// Owns one reference to a libdbus `DBusMessage`, or the bytes of one this module wrote
/// (``WireMessage``), read back by libdbus only when needed. A message is built completely
/// before it is handed to a ``Connection`` and never changed afterwards; libdbus counts
/// references atomically, so passing a finished message between threads is safe.
public final class Message: @unchecked Sendable {
    /// The most file descriptors one message carries. dbus-daemon's default
    /// (`max_message_unix_fds`, which the usual session and system configurations keep)
    /// disconnects a sender of more, so every call of that connection waiting for its reply
    /// would fail as if the bus had gone away: refused here instead, with an error that says so.
    public static let maximumDescriptors = 16

    /// The bytes of a message this module wrote itself (``WireMessage``), which stay as they
    /// were made (the copy written is numbered); nil for a message libdbus made or read.
    ///
    /// Such a message is written to the socket as it is when the loop may write (see
    /// ``GatheredWrite``), and becomes a libdbus message only if something asks for ``raw``:
    /// libdbus reading the bytes back validates them whole, which cost a reply more than
    /// writing them.
    let wire: WireMessage?

    /// ``wire`` while libdbus has not read the bytes back: once it has, its message is the one
    /// sent, as whoever asked for it may have changed it (a destination set, say).
    var unreadWire: WireMessage? {
        made.load(ordering: .acquiring) == 0 ? wire : nil
    }

    /// The libdbus message, once there is one (as an address; 0 until a wire message is read
    /// back). Made at most once, whichever thread asks first.
    private let made: Atomic<UInt>

    /// The libdbus message. For a wire message, made from its bytes on first use.
    var raw: OpaquePointer {
        if let raw = OpaquePointer(bitPattern: made.load(ordering: .acquiring)) { return raw }
        return readBack()
    }

    init(taking raw: OpaquePointer) {
        wire = nil
        made = Atomic(UInt(bitPattern: raw))
    }

    init(retaining raw: OpaquePointer) {
        wire = nil
        made = Atomic(UInt(bitPattern: dbus_message_ref(raw)))
    }

    init(wire: WireMessage) {
        assert(wire.isValid, "libdbus refuses the bytes of a message written by WireMessage")
        self.wire = wire
        made = Atomic(0)
    }

    deinit {
        guard let raw = OpaquePointer(bitPattern: made.load(ordering: .acquiring)) else { return }
        if wire == nil, dbus_message_contains_unix_fds(raw) != 0 {
            Self.disposeOffThread(raw)
        } else {
            dbus_message_unref(raw)
        }
    }

    /// The wire message's bytes read back by libdbus; kept, unless another thread made its own
    /// first.
    private func readBack() -> OpaquePointer {
        guard let wire, let read = wire.readBack() else {
            // A wire message is written only from values that make a valid message (see
            // WireMessage); bytes libdbus refuses are a fault of this module's.
            preconditionFailure("libdbus refused the bytes of a message written by WireMessage")
        }
        let (exchanged, original) = made.compareExchange(expected: 0, desired: UInt(bitPattern: read), ordering: .acquiringAndReleasing)
        if exchanged { return read }
        dbus_message_unref(read)
        return OpaquePointer(bitPattern: original)!
    }

    /// Lets go of a message that carries descriptors on a thread of the system's.
    ///
    /// libdbus closes a message's own copies of its descriptors when the message goes, and
    /// closing the last descriptor of a large memfd or deleted file frees its pages then and
    /// there: about 125 ms per GiB. A client that hands over a memfd and closes its own copy
    /// leaves that to whoever lets go of the message last, which in a server is a thread
    /// others wait on (the bus thread, a service queue). The message is finished, and libdbus
    /// counts references atomically, so any thread may drop it.
    private static func disposeOffThread(_ raw: OpaquePointer) {
        let message = UncheckedRaw(raw)
        DispatchQueue.global(qos: .utility).async {
            dbus_message_unref(message.raw)
        }
    }

    /// A finished message's pointer, handed to the thread that lets go of it.
    private struct UncheckedRaw: @unchecked Sendable {
        let raw: OpaquePointer
        init(_ raw: OpaquePointer) { self.raw = raw }
    }

    // MARK: Building

    /// A method call to `destination` (nil for a peer-to-peer connection).
    ///
    /// - Parameters:
    ///   - noReply: asks the receiver not to send a reply (for calls whose answer nobody reads).
    ///   - autoStart: lets the bus start the destination service if it is not running.
    public static func methodCall(
        destination: String?, path: String, interface: String?, method: String,
        arguments: [DBusValue] = [], noReply: Bool = false, autoStart: Bool = true
    ) throws(DBusError) -> Message {
        if let destination, !BusName.isValid(destination) { throw .invalidArgs("'\(destination)' is not a valid bus name") }
        guard ObjectPath.isValid(path) else { throw .invalidArgs("'\(path)' is not a valid object path") }
        if let interface, !InterfaceName.isValid(interface) { throw .invalidArgs("'\(interface)' is not a valid interface name") }
        guard MemberName.isValid(method) else { throw .invalidArgs("'\(method)' is not a valid method name") }
        let header = WireMarshalling.Header.methodCall(
            destination: destination, path: path, interface: interface, member: method, noReply: noReply, autoStart: autoStart)
        if let message = WireMarshalling.message(header, arguments: arguments) {
            return message
        }
        let message = try appending(arguments, to: dbus_message_new_method_call(destination, path, interface, method))
        dbus_message_set_no_reply(message.raw, noReply ? 1 : 0)
        dbus_message_set_auto_start(message.raw, autoStart ? 1 : 0)
        return message
    }

    /// A signal emitted from `path`.
    public static func signal(path: String, interface: String, name: String, arguments: [DBusValue] = []) throws(DBusError) -> Message {
        guard ObjectPath.isValid(path) else { throw .invalidArgs("'\(path)' is not a valid object path") }
        guard InterfaceName.isValid(interface) else { throw .invalidArgs("'\(interface)' is not a valid interface name") }
        guard MemberName.isValid(name) else { throw .invalidArgs("'\(name)' is not a valid signal name") }
        let header = WireMarshalling.Header.signal(path: path, interface: interface, member: name)
        if let message = WireMarshalling.message(header, arguments: arguments) {
            return message
        }
        return try appending(arguments, to: dbus_message_new_signal(path, interface, name))
    }

    /// A message of what libdbus made, with `arguments` appended through its iterators.
    private static func appending(_ arguments: [DBusValue], to raw: OpaquePointer?) throws(DBusError) -> Message {
        guard let raw else { throw .noMemory("out of memory") }
        let message = Message(taking: raw)
        try Marshalling.append(arguments, to: raw)
        return message
    }

    /// A copy of this message with `arguments` appended: for a signal sent often, copying a
    /// template made once with ``signal(path:interface:name:arguments:)`` skips checking and
    /// setting its header fields each time, which costs libdbus more than the copy.
    public func copy(appending arguments: [DBusValue]) throws(DBusError) -> Message {
        guard let raw = dbus_message_copy(raw) else { throw .noMemory("out of memory") }
        let message = Message(taking: raw)
        try Marshalling.append(arguments, to: raw)
        return message
    }

    /// The successful reply to this method call.
    public func makeReturn(_ arguments: [DBusValue] = []) throws(DBusError) -> Message {
        if arguments.count == 2, case .uint64(let count) = arguments[0], case .bytes(let bytes) = arguments[1],
           let reply = DataReply.message(replyingTo: raw, count: count, bytes: bytes) {
            return reply
        }
        let header = WireMarshalling.Header.reply(to: raw)
        if let reply = WireMarshalling.message(header, arguments: arguments) {
            return reply
        }
        return try Self.appending(arguments, to: dbus_message_new_method_return(raw))
    }

    /// The error reply to this method call.
    public func makeError(_ error: DBusError) -> Message? {
        let name = ErrorName.isValid(error.name) ? error.name : "org.freedesktop.DBus.Error.Failed"
        let text = error.message.replacingNUL()
        return dbus_message_new_error(raw, name, text).map { Message(taking: $0) }
    }

    /// Asks the receiver not to send a reply (for calls whose answer nobody reads). A message
    /// kept as its bytes is read back by libdbus to be changed, and sent by libdbus: pass
    /// `noReply` to ``methodCall(destination:path:interface:method:arguments:noReply:autoStart:)``
    /// instead.
    public func setNoReply(_ noReply: Bool) {
        dbus_message_set_no_reply(raw, noReply ? 1 : 0)
    }

    /// Lets the bus start the destination service if it is not running. As with
    /// ``setNoReply(_:)``, better given to the maker.
    public func setAutoStart(_ autoStart: Bool) {
        dbus_message_set_auto_start(raw, autoStart ? 1 : 0)
    }

    // MARK: Header fields

    public var type: MessageType { MessageType(rawValue: dbus_message_get_type(raw)) ?? .invalid }
    public var path: String? { dbus_message_get_path(raw).map { String(cString: $0) } }
    public var interface: String? { dbus_message_get_interface(raw).map { String(cString: $0) } }
    public var member: String? { dbus_message_get_member(raw).map { String(cString: $0) } }
    public var errorName: String? { dbus_message_get_error_name(raw).map { String(cString: $0) } }
    public var sender: String? { dbus_message_get_sender(raw).map { String(cString: $0) } }
    public var destination: String? {
        if let wire = unreadWire, wire.type == DBUS_MESSAGE_TYPE_METHOD_CALL { return wire.callDestination }
        return dbus_message_get_destination(raw).map { String(cString: $0) }
    }
    /// Whether the message carries descriptors; a message kept as its bytes never does.
    var carriesDescriptors: Bool { unreadWire == nil && dbus_message_contains_unix_fds(raw) != 0 }
    public var signature: String { dbus_message_get_signature(raw).map { String(cString: $0) } ?? "" }
    public var serial: UInt32 { dbus_message_get_serial(raw) }
    public var replySerial: UInt32 { dbus_message_get_reply_serial(raw) }
    public var expectsReply: Bool { dbus_message_get_no_reply(raw) == 0 }

    /// The body, decoded. Every unix fd in it becomes a new descriptor the result owns.
    public func arguments() -> [DBusValue] {
        Marshalling.readArguments(of: raw)
    }

    /// Whether the first argument is the string `text`, read without decoding the rest.
    func firstArgumentIs(_ text: String) -> Bool {
        var iter = DBusMessageIter()
        guard dbus_message_iter_init(raw, &iter) != 0, dbus_message_iter_get_arg_type(&iter) == TypeCode.string else { return false }
        var characters: UnsafePointer<CChar>? = nil
        dbus_message_iter_get_basic(&iter, &characters)
        guard let characters else { return false }
        return text.withCString { strcmp($0, characters) == 0 }
    }

    /// For an error reply: the error it carries.
    public var error: DBusError? {
        guard type == .error else { return nil }
        let text = arguments().first?.stringValue ?? ""
        return DBusError(name: errorName ?? "org.freedesktop.DBus.Error.Failed", message: text)
    }
}

extension String {
    func replacingNUL() -> String {
        guard utf8.contains(0) else { return self }
        return String(decoding: utf8.map { $0 == 0 ? UInt8(ascii: "?") : $0 }, as: UTF8.self)
    }
}
