import CDBus
import Glibc
@testable import DBus
import Testing
import TestSupport

/// ``WireMarshalling``: a message written in Swift and read back by libdbus must be the very
/// message libdbus builds through its iterators, byte for byte, and anything it cannot write
/// must fall back to the iterators rather than fail.
struct WireMarshallingTests {
    /// Argument lists covering every type, alignment after each, empty containers and nesting.
    static let argumentLists: [[DBusValue]] = [
        [.string("general"), .uint32(0), .string("text/plain"), .uint64(0)],
        [.string("general"), .array(element: "a{say}", [.dictionary(key: "s", value: "ay", [(.string("text/plain"), .bytes(Array("hi".utf8)))])]),
         .dictionary(key: "s", value: "v", [])],
        [.string("g"), .array(element: "a{say}", []), .dictionary(key: "s", value: "v", [(.string("expires"), .variant(.uint64(3))), (.string("concealed"), .variant(.boolean(true)))])],
        [.byte(1), .int16(-2), .byte(3), .uint16(4), .byte(5), .int32(-6), .byte(7), .int64(-8), .byte(9), .double(1.5)],
        [.byte(1), .bytes([]), .byte(2), .array(element: "t", []), .byte(3), .array(element: "(yt)", []), .byte(4), .array(element: "s", [])],
        // Each array's length ends 4 bytes past an 8-byte boundary, so its elements are padded.
        [.uint32(1), .uint32(2), .array(element: "t", []), .uint32(3), .array(element: "t", [.uint64(9)]),
         .uint32(4), .array(element: "(yt)", [.structure([.byte(1), .uint64(2)])]), .uint32(5), .array(element: "{sv}", [])],
        [.objectPath("/org/example"), .signature("a{sv}"), .boolean(false), .strings(["", "a", "ab", "abc"])],
        [.structure([.byte(1), .structure([.uint64(2), .string("x")])]), .variant(.variant(.array(element: "n", [.int16(1), .int16(2)])))],
        [.string(String(repeating: "é", count: 300)), .bytes(Array(repeating: 0xAB, count: 5000))],
    ]

    static func bytes(of message: OpaquePointer) -> [UInt8] {
        var buffer: UnsafeMutablePointer<CChar>? = nil
        var length: Int32 = 0
        guard dbus_message_marshal(message, &buffer, &length) != 0, let buffer else { return [] }
        defer { dbus_free(buffer) }
        return Array(UnsafeRawBufferPointer(start: buffer, count: Int(length)))
    }

    @Test(arguments: argumentLists.indices)
    func aMethodCallIsWhatLibdbusBuilds(index: Int) throws {
        let arguments = Self.argumentLists[index]
        let header = WireMarshalling.Header.methodCall(destination: "org.example.Service", path: "/org/example/Object",
                                                       interface: "org.example.Interface", member: "Method")
        let message = try #require(WireMarshalling.message(header, arguments: arguments))
        let iterated = try #require(dbus_message_new_method_call("org.example.Service", "/org/example/Object", "org.example.Interface", "Method"))
        defer { dbus_message_unref(iterated) }
        try Marshalling.append(arguments, to: iterated)
        Self.expectKept(message, arguments, asLibdbusWrites: Self.bytes(of: iterated))
        // Asked as the call starts, read from the kept bytes without libdbus.
        #expect(message.destination == "org.example.Service")
        #expect(message.wire == nil || message.unreadWire != nil, "asking for the destination made libdbus read the call back")
        let written = Self.bytes(of: message.raw)
        #expect(written.count > 16 && written == Self.bytes(of: iterated))
        #expect(message.serial == 0)
        #expect(message.arguments() == arguments)
    }

    /// The flags of a call (no reply wanted, no auto-start) are written into the kept bytes as
    /// libdbus sets them, instead of making libdbus read the message back to change it.
    @Test(arguments: [(false, true), (true, true), (false, false), (true, false)])
    func aCallsFlagsAreWhatLibdbusSets(noReply: Bool, autoStart: Bool) throws {
        let arguments: [DBusValue] = [.string("general"), .uint32(0)]
        let message = try Message.methodCall(
            destination: "org.example.Service", path: "/org/example/Object", interface: "org.example.Interface", method: "Method",
            arguments: arguments, noReply: noReply, autoStart: autoStart)
        let iterated = try #require(dbus_message_new_method_call("org.example.Service", "/org/example/Object", "org.example.Interface", "Method"))
        defer { dbus_message_unref(iterated) }
        try Marshalling.append(arguments, to: iterated)
        dbus_message_set_no_reply(iterated, noReply ? 1 : 0)
        dbus_message_set_auto_start(iterated, autoStart ? 1 : 0)
        Self.expectKept(message, arguments, asLibdbusWrites: Self.bytes(of: iterated))
        #expect(message.unreadWire != nil)
        #expect(message.expectsReply == !noReply)
        #expect((dbus_message_get_auto_start(message.raw) != 0) == autoStart)
    }

    @Test(arguments: argumentLists.indices)
    func aSignalIsWhatLibdbusBuilds(index: Int) throws {
        let arguments = Self.argumentLists[index]
        let header = WireMarshalling.Header.signal(path: "/org/example/Object", interface: "org.example.Interface", member: "Signal")
        let message = try #require(WireMarshalling.message(header, arguments: arguments))
        let iterated = try #require(dbus_message_new_signal("/org/example/Object", "org.example.Interface", "Signal"))
        defer { dbus_message_unref(iterated) }
        try Marshalling.append(arguments, to: iterated)
        Self.expectKept(message, arguments, asLibdbusWrites: Self.bytes(of: iterated))
        let written = Self.bytes(of: message.raw)
        #expect(written.count > 16 && written == Self.bytes(of: iterated))
        #expect(message.arguments() == arguments)
    }

    @Test(arguments: argumentLists.indices)
    func aReplyIsWhatLibdbusBuilds(index: Int) throws {
        let arguments = Self.argumentLists[index]
        let call = try #require(dbus_message_new_method_call("org.example.Service", "/org/example/Object", "org.example.Interface", "Method"))
        defer { dbus_message_unref(call) }
        dbus_message_set_serial(call, 77)
        #expect(dbus_message_set_sender(call, ":1.23") != 0)
        let wire = try #require(WireMarshalling.message(.reply(to: call), arguments: arguments))
        let iterated = try #require(dbus_message_new_method_return(call))
        defer { dbus_message_unref(iterated) }
        try Marshalling.append(arguments, to: iterated)
        Self.expectKept(wire, arguments, asLibdbusWrites: Self.bytes(of: iterated))
        let written = Self.bytes(of: wire.raw)
        #expect(written.count > 16 && written == Self.bytes(of: iterated))
        #expect(wire.replySerial == 77)
        #expect(wire.serial == 0)
    }

    /// A message of values that cannot be invalid keeps its bytes, which must be libdbus's own
    /// but for the serial (1 until the connection writes the real one); any other is read back.
    static func expectKept(_ message: Message, _ arguments: [DBusValue], asLibdbusWrites iterated: [UInt8]) {
        guard WireMessage.trusts(arguments, signature: arguments.map(\.signature).joined()) else {
            #expect(message.wire == nil, "\(arguments.map(\.signature)) must be validated by libdbus")
            return
        }
        guard let wire = message.wire else {
            Issue.record("\(arguments.map(\.signature)) should be kept as its bytes")
            return
        }
        #expect(wire.bytes.count == iterated.count)
        #expect(Array(wire.bytes[..<8]) == Array(iterated[..<8]) && Array(wire.bytes[12...]) == Array(iterated[12...]))
    }

    /// Kept bytes are never validated as they are sent, so whatever a Swift string may hold must
    /// make a message libdbus accepts: every plane, noncharacters, the largest scalar.
    @Test func keptStringsOfAnyScalarAreValid() throws {
        // Swift's literals refuse noncharacters; strings built of scalars hold them.
        func scalars(_ values: UInt32...) -> String { String(String.UnicodeScalarView(values.compactMap(Unicode.Scalar.init))) }
        let texts = [scalars(0xFFFE, 0xFFFF), scalars(0xFDD0, 0xFDEF, 0x1FFFE), scalars(0x10FFFF), "\u{1F600} é ß 中", "\u{7F}\u{1}\u{1F}", ""]
        for text in texts {
            let signal = try #require(WireMarshalling.message(.signal(path: "/a", interface: "a.b", member: "C"), arguments: [.string(text), .uint64(1), .strings([text])]))
            let wire = try #require(signal.wire)
            #expect(wire.isValid, "\(Array(text.unicodeScalars))")
            #expect(signal.arguments() == [.string(text), .uint64(1), .strings([text])])
        }
    }

    /// Random lists of values of every kind, alignment and nesting, strings of any scalar, as
    /// calls, signals and replies: each message the trust rule keeps as its bytes must be
    /// accepted by libdbus whole (release builds never ask it, and the bus disconnects a
    /// sender of an invalid message), each other one read back; both read back as written.
    @Test(arguments: 1...8)
    func randomKeptMessagesAreValid(seed: UInt64) throws {
        var random = RandomValues(seed: seed)
        let call = try #require(dbus_message_new_method_call(nil, "/a", nil, "M"))
        defer { dbus_message_unref(call) }
        dbus_message_set_serial(call, 9)
        #expect(dbus_message_set_sender(call, ":1.7") != 0)
        var kept = 0
        for _ in 0..<300 {
            let arguments = random.arguments()
            let headers = [
                WireMarshalling.Header.signal(path: "/a/b", interface: "a.b", member: "C"), .reply(to: call),
                .methodCall(destination: "org.example.Service", path: "/a/b", interface: "a.b", member: "M"),
            ]
            for header in headers {
                guard let message = WireMarshalling.message(header, arguments: arguments) else {
                    // Only a single argument not kept is left to the iterators.
                    #expect(arguments.count < 2, "\(arguments.map(\.signature))")
                    continue
                }
                if let wire = message.wire {
                    kept += 1
                    #expect(wire.isValid, "\(arguments)")
                    #expect(message.destination == header.destination)
                }
                #expect(message.arguments() == arguments)
            }
        }
        #expect(kept > 300)
    }

    /// What the trust rule keeps, and what it leaves to libdbus's validation.
    @Test func theTrustRuleKeepsWhatCannotBeInvalidAndNothingElse() {
        func trusts(_ arguments: [DBusValue]) -> Bool {
            WireMessage.trusts(arguments, signature: arguments.map(\.signature).joined())
        }
        // A WriteItems call and its options; a reply's list of strings; a valid object path.
        #expect(trusts([.string("general"), .array(element: "a{say}", [.dictionary(key: "s", value: "ay", [(.string("text/plain"), .bytes([1]))])]),
                        .dictionary(key: "s", value: "v", [(.string("expires"), .variant(.uint64(3)))])]))
        #expect(trusts([.strings(["a", "b"]), .objectPath("/org/a"), .variant(.string("x"))]))
        // Texts that could be malformed, descriptors, variants of containers.
        #expect(!trusts([.objectPath("not a path")]))
        #expect(!trusts([.array(element: "o", [.objectPath("/a"), .objectPath("//")])]))
        #expect(!trusts([.signature("a{sv}")]))
        #expect(!trusts([.variant(.array(element: "y", []))]))
        #expect(!trusts([.variant(.variant(.byte(1)))]))
        #expect(!trusts([.unixFD(UnixFileDescriptor(owning: dup(0)))]))
        // Signatures libdbus refuses, or nested past the short bound.
        #expect(!trusts([.array(element: "{ay s}", [])]))
        #expect(!trusts([.array(element: "{ays}", [])]))
        #expect(!trusts([.dictEntry(.string("k"), .byte(1))]))
        // A nested array whose element signature is not one type: the writer matches it only
        // as part of the outer one (`(aii)`), and the body would be a value short.
        #expect(!trusts([.array(element: "(aii)", [.structure([.array(element: "ii", [])])])]))
        #expect(!trusts([.array(element: "(ai)", [.structure([.array(element: "", [])])]), .byte(1)]))
        #expect(!trusts([.array(element: "aay", [.array(element: "ay", [.array(element: "y", [])]), .array(element: "a", [])])]))
        #expect(!trusts([.array(element: String(repeating: "a", count: 32) + "y", [])]))
        #expect(trusts([.array(element: String(repeating: "a", count: 30) + "y", [])]))
    }

    /// Data over the limit is refused before it is copied, not after: the bindings and the
    /// server pass up to 4 MiB inline, which this path leaves to the iterators.
    @Test func aWriterRefusesWhatPassesItsLimitBeforeCopyingIt() {
        var writer = WireWriter(limit: 100)
        let small = writer.put(.string("small"))
        let bytes = writer.put(.bytes(Array(repeating: 1, count: 1000)))
        let string = writer.put(.string(String(repeating: "s", count: 1000)))
        let array = writer.put(.array(element: "t", Array(repeating: .uint64(1), count: 1000)))
        #expect(small && !bytes && !string && !array)
        #expect(writer.bytes.count <= 100)
    }

    @Test func whatTheWireCannotHoldGoesThroughTheIterators() throws {
        let header = WireMarshalling.Header.methodCall(destination: nil, path: "/a", interface: nil, member: "M")
        let refused: [[DBusValue]] = [
            [.string("a"), .unixFD(UnixFileDescriptor(owning: dup(0)))],
            [.string("nul\u{0}inside"), .byte(1)],
            [.objectPath("not a path"), .byte(1)],
            [.signature("a{"), .byte(1)],
            [.array(element: "s", [.uint32(1)]), .byte(1)],
            [.array(element: "sx", []), .int64(1)],
            [.array(element: "(aii)", [.structure([.array(element: "ii", [])])]), .byte(1)],
            [.structure([]), .byte(1)],
            [.bytes(Array(repeating: 0, count: WireMarshalling.maximumBodySize + 1)), .byte(1)],
        ]
        for arguments in refused {
            #expect(WireMarshalling.message(header, arguments: arguments) == nil, "\(arguments.map(\.signature))")
        }
        // Through Message, the same arguments fail with the iterators' own errors, or succeed.
        #expect(throws: DBusError.self) { try Message.methodCall(destination: nil, path: "/a", interface: nil, method: "M", arguments: [.string("nul\u{0}inside"), .byte(1)]) }
        #expect(throws: DBusError.self) { try Message.methodCall(destination: nil, path: "/a", interface: nil, method: "M", arguments: [.objectPath("not a path"), .byte(1)]) }
        let large = try Message.methodCall(destination: nil, path: "/a", interface: nil, method: "M", arguments: refused.last!)
        #expect(large.arguments() == refused.last!)
    }
}
