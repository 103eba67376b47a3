import CDBus

#if canImport(Glibc)
import Glibc
#endif

/// A message sent again and again with the same arguments except for one number: a name
/// followed by its counter (`s t …`, as in `Changed(s name, t count, as types)`).
///
/// Appending arguments through libdbus costs about 2 µs each after the first (it rewrites the
/// header's signature after every top-level argument), more on a cold cache. Copying a finished
/// message and overwriting the number in the copy's body costs a fraction of that. libdbus has
/// no call that changes an argument, but it hands out a string argument's characters as a
/// pointer into the body, and the wire format fixes where the number after it lies: after the
/// string's length word, its bytes and their NUL, aligned to 8. ``init(_:)`` checks that the
/// number is found there, and in which byte order (a message is in the order of whoever wrote
/// it), before any copy is made. A template kept as its bytes (``WireMessage``) is copied as
/// bytes, the number overwritten at the same place in its body.
public struct CountedMessage: Sendable {
    /// The finished message; never sent itself, only copied.
    private let template: Message
    /// Where the number lies, in bytes from the string's length word (the body's start).
    private let countOffset: Int
    /// The message's byte order is not this machine's.
    private let swapped: Bool

    /// A template of `message`, whose first argument must be a string and second a `t` that
    /// reads differently in the two byte orders (not 0, say); nil for any other message.
    public init?(_ message: Message) {
        guard let located = Self.countLocation(in: message.raw), located.value != located.value.byteSwapped else { return nil }
        let stored = UnsafeRawPointer(located.body).loadUnaligned(fromByteOffset: located.offset, as: UInt64.self)
        guard stored == located.value || stored == located.value.byteSwapped else { return nil }
        template = message
        countOffset = located.offset
        swapped = stored != located.value
    }

    /// A new message equal to the template but for its number, which is `count`.
    public func copy(count: UInt64) -> Message? {
        if let wire = template.wire {
            // The template's bytes, copied, with the number overwritten where it lies in them.
            var bytes = wire.bytes
            let fieldsLength = bytes.withUnsafeBytes { Int(UInt32(littleEndian: $0.loadUnaligned(fromByteOffset: 12, as: UInt32.self))) }
            let bodyStart = (16 + fieldsLength + 7) & ~7
            bytes.withUnsafeMutableBytes { $0.storeBytes(of: swapped ? count.byteSwapped : count, toByteOffset: bodyStart + countOffset, as: UInt64.self) }
            return Message(wire: WireMessage(bytes: bytes))
        }
        guard let raw = dbus_message_copy(template.raw) else { return nil }
        let message = Message(taking: raw)
        var iter = DBusMessageIter()
        guard dbus_message_iter_init(raw, &iter) != 0 else { return nil }
        var characters: UnsafePointer<CChar>? = nil
        dbus_message_iter_get_basic(&iter, &characters)
        guard let characters else { return nil }
        let body = UnsafeMutableRawPointer(mutating: characters) - 4
        body.storeBytes(of: swapped ? count.byteSwapped : count, toByteOffset: countOffset, as: UInt64.self)
        return message
    }

    /// The body's start (the leading string's length word), the number's offset from it, and
    /// the number as libdbus reads it.
    private static func countLocation(in raw: OpaquePointer) -> (body: UnsafePointer<CChar>, offset: Int, value: UInt64)? {
        var iter = DBusMessageIter()
        guard dbus_message_iter_init(raw, &iter) != 0, dbus_message_iter_get_arg_type(&iter) == TypeCode.string else { return nil }
        var characters: UnsafePointer<CChar>? = nil
        dbus_message_iter_get_basic(&iter, &characters)
        guard let characters, dbus_message_iter_next(&iter) != 0, dbus_message_iter_get_arg_type(&iter) == TypeCode.uint64 else { return nil }
        var value: UInt64 = 0
        dbus_message_iter_get_basic(&iter, &value)
        let afterString = 4 + strlen(characters) + 1
        return (characters - 4, (afterString + 7) & ~7, value)
    }
}
