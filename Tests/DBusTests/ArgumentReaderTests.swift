import CDBus
@testable import DBus
import Testing

/// ``ArgumentReader`` reads what ``Message/arguments()`` decodes, value by value, and refuses
/// a value of another type than asked for; ``DataReply`` writes the very reply libdbus builds.
struct ArgumentReaderTests {
    static func call(_ arguments: [DBusValue]) throws -> Message {
        try Message.methodCall(destination: "org.example.Service", path: "/org/example/Object", interface: "org.example.Interface",
                               method: "WriteItems", arguments: arguments)
    }

    @Test func aWriteIsReadAsItWasWritten() throws {
        let message = try Self.call([
            .string("general"),
            .array(element: "a{say}", [
                .dictionary(key: "s", value: "ay", [(.string("text/plain"), .bytes(Array("hi".utf8))), (.string("text/html"), .bytes([]))]),
                .dictionary(key: "s", value: "ay", []),
            ]),
            .dictionary(key: "s", value: "v", [(.string("expires-in-ms"), .variant(.uint64(5))), (.string("concealed"), .variant(.boolean(true))),
                                               (.string("odd"), .variant(.strings(["x"])))]),
        ])
        var items: [[(String, [UInt8])]] = []
        var options: [(String, String, DBusValue)] = []
        let name = try message.readArguments { reader throws(DBus.DBusError) -> String in
            let name = try reader.string()
            try reader.forEach { item throws(DBus.DBusError) in
                var representations: [(String, [UInt8])] = []
                try item.forEach { entry throws(DBus.DBusError) in representations.append((try entry.string(), try entry.bytes())) }
                items.append(representations)
            }
            try reader.forEach { entry throws(DBus.DBusError) in
                let key = try entry.string()
                let (signature, value) = try entry.variant { inner, signature throws(DBus.DBusError) in (signature, try inner.value()) }
                options.append((key, signature, value))
            }
            let atEnd = reader.isAtEnd
            #expect(atEnd)
            return name
        }
        #expect(name == "general")
        #expect(items.count == 2)
        #expect(items[0].map(\.0) == ["text/plain", "text/html"] && items[0].map(\.1) == [Array("hi".utf8), []])
        #expect(items[1].isEmpty)
        #expect(options.map(\.0) == ["expires-in-ms", "concealed", "odd"])
        #expect(options.map(\.1) == ["t", "b", "as"])
        #expect(options.map(\.2) == [.uint64(5), .boolean(true), .strings(["x"])])
    }

    @Test func aValueOfAnotherTypeIsAnError() throws {
        let message = try Self.call([.string("general"), .uint32(7)])
        #expect(throws: DBus.DBusError.self) {
            try message.readArguments { reader throws(DBus.DBusError) in
                _ = try reader.string()
                _ = try reader.uint64()
            }
        }
        do throws(DBus.DBusError) {
            try message.readArguments { reader throws(DBus.DBusError) in
                _ = try reader.string()
                _ = try reader.uint32()
                _ = try reader.string()
            }
            Issue.record("reading past the end did not fail")
        } catch {
            #expect(error.name == "org.freedesktop.DBus.Error.InvalidArgs")
            #expect(error.message.contains("end of the arguments"))
        }
        // An array of another element type is not read as bytes.
        #expect(throws: DBus.DBusError.self) {
            try Self.call([.strings(["a"])]).readArguments { reader throws(DBus.DBusError) in _ = try reader.bytes() }
        }
    }

    /// A reader on one element of an array, or inside a variant, holds that value only.
    @Test func anElementsReaderHoldsOneValue() throws {
        let message = try Self.call([.strings(["a", "b", "c"]), .variant(.uint64(1)), .string("after")])
        let (read, after) = try message.readArguments { reader throws(DBus.DBusError) -> ([String], String) in
            var read: [String] = []
            try reader.forEach { element throws(DBus.DBusError) in
                read.append(try element.string())
                let atEnd = element.isAtEnd
                #expect(atEnd)
                var refused = false
                do { _ = try element.string() } catch { refused = true }
                #expect(refused)
            }
            try reader.variant { inner, _ throws(DBus.DBusError) in
                _ = try inner.uint64()
                let atEnd = inner.isAtEnd
                #expect(atEnd)
            }
            return (read, try reader.string())
        }
        #expect(read == ["a", "b", "c"])
        #expect(after == "after")
        let limited = try Self.call([.bytes([1, 2, 3]), .string("next")]).readArguments { reader throws(DBus.DBusError) -> ([UInt8]?, String) in
            (try reader.bytes(atMost: 2), try reader.string())
        }
        #expect(limited.0 == nil && limited.1 == "next")
    }

    @Test func anEmptyBodyIsAtItsEnd() throws {
        let message = try Self.call([])
        let atEnd = try message.readArguments { reader throws(DBus.DBusError) in reader.isAtEnd }
        #expect(atEnd)
        #expect(throws: DBus.DBusError.self) { try message.readArguments { reader throws(DBus.DBusError) in _ = try reader.string() } }
    }

    /// Sizes across the padding of the body, and callers whose names end the destination
    /// field at and off an 8-byte boundary.
    @Test(arguments: [(0, ":1.23"), (1, ":1.2345"), (100, ":1.2"), (5000, "org.example.AWellKnownName")])
    func aDataReplyIsWhatLibdbusBuilds(size: Int, sender: String) throws {
        let call = try #require(dbus_message_new_method_call("org.example.Service", "/org/example/Object", "org.example.Interface", "ReadData"))
        defer { dbus_message_unref(call) }
        dbus_message_set_serial(call, 77)
        #expect(dbus_message_set_sender(call, sender) != 0)
        let bytes = (0..<size).map { UInt8(truncatingIfNeeded: $0 &* 7) }
        let written = try #require(DataReply.message(replyingTo: call, count: 42, bytes: bytes))
        let iterated = try #require(dbus_message_new_method_return(call))
        defer { dbus_message_unref(iterated) }
        try Marshalling.append([.uint64(42), .bytes(bytes)], to: iterated)
        WireMarshallingTests.expectKept(written, [.uint64(42), .bytes(bytes)], asLibdbusWrites: WireMarshallingTests.bytes(of: iterated))
        #expect(WireMarshallingTests.bytes(of: written.raw) == WireMarshallingTests.bytes(of: iterated))
        #expect(written.serial == 0 && written.replySerial == 77 && written.destination == sender)
        #expect(written.arguments() == [.uint64(42), .bytes(bytes)])
    }

    @Test func aDataReplyWithoutASenderHasNoDestination() throws {
        let call = try #require(dbus_message_new_method_call(nil, "/org/example/Object", nil, "ReadData"))
        defer { dbus_message_unref(call) }
        dbus_message_set_serial(call, 5)
        let written = try #require(DataReply.message(replyingTo: call, count: 1, bytes: [9]))
        let iterated = try #require(dbus_message_new_method_return(call))
        defer { dbus_message_unref(iterated) }
        try Marshalling.append([.uint64(1), .bytes([9])], to: iterated)
        #expect(WireMarshallingTests.bytes(of: written.raw) == WireMarshallingTests.bytes(of: iterated))
        #expect(written.destination == nil)
        // Over the limit, the general paths take it.
        #expect(DataReply.message(replyingTo: call, count: 1, bytes: [UInt8](repeating: 0, count: DataReply.maximumBytes + 1)) == nil)
    }
}
