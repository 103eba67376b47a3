import DBus
import Foundation
import Testing
import TestSupport

/// The server seen through D-Bus implementations other than libdbus: GDBus (`gdbus`) and
/// dbus-python, as other-language clients and the acceptance tests see it.
struct IndependentClientTests {
    /// `gdbus ARGUMENTS` against the harness's server, to completion.
    func gdbus(_ h: Harness, _ arguments: [String]) async throws -> Outcome {
        try await runProgram(try Paths.executable(named: "gdbus"), [arguments[0], "--address", h.bus.address, "--dest", Harness.busName, "--object-path", Harness.path] + arguments.dropFirst(), timeout: .seconds(20))
    }

    func gdbusCall(_ h: Harness, _ method: String, _ arguments: String...) async throws -> Outcome {
        try await gdbus(h, ["call", "--method", "\(Harness.interface).\(method)"] + arguments)
    }

    /// A dbus-python script run with the bus address as its first argument; prints JSON.
    func python(_ h: Harness, _ script: String, _ arguments: [String] = []) async throws -> [String: Any] {
        let result = try await runProgram("/usr/bin/python3", ["-c", script, h.bus.address] + arguments, timeout: .seconds(30))
        try #require(result.status == 0, "\(result)")
        let object = try JSONSerialization.jsonObject(with: result.stdout)
        return try #require(object as? [String: Any], "\(result)")
    }

    static let pythonPrelude = """
        import dbus, json, os, sys, threading
        bus = dbus.bus.BusConnection(sys.argv[1])
        proxy = bus.get_object('org.pasteboardd.Pasteboard1', '/org/pasteboardd/Pasteboard1', introspect=False)
        pb = dbus.Interface(proxy, 'org.pasteboardd.Pasteboard1')
        def error_name(call):
            try:
                call()
                return None
            except dbus.exceptions.DBusException as e:
                return e.get_dbus_name()

        """

    // MARK: gdbus

    @Test func gdbusWritesAndReadsBack() async throws {
        let h = try await Harness()
        let write = try await gdbusCall(h, "WriteItems", "general", "[{'text/plain': [byte 0x68, 0x69], 'text/html': [byte 0x3c, 0x62, 0x3e]}]", "{}")
        #expect(write.status == 0, "\(write)")
        #expect(write.out == "(uint64 1,)\n")
        let read = try await gdbusCall(h, "ReadData", "general", "0", "text/plain", "1")
        #expect(read.out == "(uint64 1, [byte 0x68, 0x69])\n", "\(read)")
        let types = try await gdbusCall(h, "Types", "general")
        #expect(types.out == "(uint64 1, ['text/plain', 'text/html'])\n", "\(types)")
        let append = try await gdbusCall(h, "WriteItems", "general", "[{'image/png': [byte 0x01]}]", "{'append': <true>, 'if-change-count': <uint64 1>}")
        #expect(append.out == "(uint64 2,)\n", "\(append)")
        let items = try await gdbusCall(h, "Items", "general")
        #expect(items.out == "(uint64 2, [{'types': <['text/plain', 'text/html']>, 'sizes': <[int64 2, 3]>}, {'types': <['image/png']>, 'sizes': <[int64 1]>}])\n", "\(items)")
        // And what gdbus wrote, libdbus reads.
        #expect(try await h.readData("text/html").data == "<b>".bytes)
        #expect(try await h.readBest(["public.png"], item: 1) == (2, "image/png", [1]))
    }

    @Test func gdbusSeesTheContractsErrorNames() async throws {
        let h = try await Harness()
        try await h.write(text: "x")
        let missing = try await gdbusCall(h, "ReadData", "general", "7", "text/plain;charset=utf-8", "0")
        #expect(missing.status != 0)
        #expect(missing.err.contains("GDBus.Error:org.pasteboardd.Error.NoSuchItem: "), "\(missing)")
        let invalid = try await gdbusCall(h, "ChangeCount", "")
        #expect(invalid.err.contains("GDBus.Error:org.pasteboardd.Error.InvalidName: "), "\(invalid)")
        let stale = try await gdbusCall(h, "ReadData", "general", "0", "text/plain;charset=utf-8", "9")
        #expect(stale.err.contains("GDBus.Error:org.pasteboardd.Error.Stale: "), "\(stale)")
        let option = try await gdbusCall(h, "WriteItems", "general", "[{'text/plain': [byte 0x01]}]", "{'no-such-option': <true>}")
        #expect(option.err.contains("GDBus.Error:org.pasteboardd.Error.InvalidArgument: "), "\(option)")
        try await h.write([[("text/plain", [1])]], to: "private", options: [("owner-only", .boolean(true))])
        let denied = try await gdbusCall(h, "ReadData", "private", "0", "text/plain", "0")
        #expect(denied.err.contains("GDBus.Error:org.pasteboardd.Error.AccessDenied: "), "\(denied)")
        #expect(try await h.readData("text/plain;charset=utf-8") == (1, "x".bytes))
    }

    @Test func gdbusIntrospectShowsTheDocumentedInterface() async throws {
        let h = try await Harness()
        try await h.write(text: "x", to: "listed")
        let result = try await gdbus(h, ["introspect"])
        try #require(result.status == 0, "\(result)")
        let output = result.out
        let interface = try InterfaceDescription(contentsOf: InterfaceTests.xmlPath, interface: Harness.interface)
        #expect(output.contains("interface \(Harness.interface) {"))
        for name in interface.methods.map(\.name) + interface.signals.map(\.name) {
            #expect(output.contains("\n      \(name)("), "gdbus introspect does not show \(name)")
        }
        #expect(output.contains("in  aa{say} items,"))
        #expect(output.contains("out a(txas) entries);"))
        #expect(output.contains("readonly s Version = '"))
        #expect(output.contains("readonly as Pasteboards = ['listed'];"))
        #expect(output.contains("readonly a{st} Limits = {'max-item-bytes': "))
        #expect(output.contains("@org.gtk.GDBus.DocString(\"A store of named pasteboards"))
        for standard in ["org.freedesktop.DBus.Introspectable", "org.freedesktop.DBus.Properties", "org.freedesktop.DBus.Peer"] {
            #expect(output.contains("interface \(standard) {"))
        }
    }

    // MARK: dbus-python

    @Test func pythonWritesThroughAPipeAndReadsThroughADescriptor() async throws {
        let h = try await Harness()
        let script = Self.pythonPrelude + """
            payload = bytes((i * 7 + 3) % 256 for i in range(1 << 20))
            r, w = os.pipe()
            def feed():
                os.write(w, payload)
                os.close(w)
            writer = threading.Thread(target=feed)
            writer.start()
            count = pb.WriteItemsFd('general', [{'application/x-python': dbus.types.UnixFd(r), 'text/plain': dbus.types.UnixFd(r)}],
                                    dbus.Dictionary({}, signature='sv'), signature='saa{sh}a{sv}')
            writer.join()
            os.close(r)
            read_count, descriptor = pb.ReadFd('general', dbus.UInt32(0), 'application/x-python', dbus.UInt64(count))
            fd = descriptor.take()
            chunks = []
            while True:
                chunk = os.read(fd, 65536)
                if not chunk:
                    break
                chunks.append(chunk)
            os.close(fd)
            back = b''.join(chunks)
            print(json.dumps({'count': int(count), 'read_count': int(read_count), 'equal': back == payload,
                              'size': len(back)}))
            """
        let result = try await python(h, script)
        #expect(result["count"] as? Int == 1)
        #expect(result["read_count"] as? Int == 1)
        #expect(result["equal"] as? Bool == true)
        #expect(result["size"] as? Int == 1 << 20)
        // What python wrote, libdbus reads byte for byte, under both types.
        let expected = (0..<(1 << 20)).map { UInt8(($0 * 7 + 3) % 256) }
        #expect(try await h.readFdBytes("application/x-python").data == expected)
        #expect(try await h.readFdBytes("text/plain").data == expected)
        #expect(try await h.items().items == [.init(types: ["application/x-python", "text/plain"], sizes: [1 << 20, 1 << 20])])
    }

    @Test func pythonWrongSignaturesGetInvalidArgument() async throws {
        let h = try await Harness()
        try await h.write(text: "kept")
        let script = Self.pythonPrelude + """
            names = {
                'ReadData-ss': error_name(lambda: pb.ReadData('general', 'zero', signature='ss')),
                'ReadData-sust-as-ssst': error_name(lambda: pb.ReadData('general', '0', 'text/plain', dbus.UInt64(0), signature='ssst')),
                'ChangeCount-u': error_name(lambda: pb.ChangeCount(dbus.UInt32(1), signature='u')),
                'ChangeCount-none': error_name(lambda: pb.ChangeCount(signature='')),
                'ListPasteboards-s': error_name(lambda: pb.ListPasteboards('general', signature='s')),
                'WriteItems-aa{ss}': error_name(lambda: pb.WriteItems('general', [{'text/plain': 'x'}], {}, signature='saa{ss}a{sv}')),
                'WriteItems-no-options': error_name(lambda: pb.WriteItems('general', [{'text/plain': b'x'}], signature='saa{say}')),
                'WriteItemsFd-ay': error_name(lambda: pb.WriteItemsFd('general', [{'text/plain': b'x'}], {}, signature='saa{say}a{sv}')),
                'CanRead-s': error_name(lambda: pb.CanRead('general', 'text/plain', signature='ss')),
                'ReadData-invalid-name': error_name(lambda: pb.ReadData('', dbus.UInt32(0), 'text/plain', dbus.UInt64(0), signature='sust')),
                'ReadData-right': error_name(lambda: pb.ReadData('general', dbus.UInt32(0), 'text/plain;charset=utf-8', dbus.UInt64(0), signature='sust')),
            }
            print(json.dumps(names))
            """
        let names = try await python(h, script)
        let invalidArgument = Harness.errorPrefix + "InvalidArgument"
        for key in ["ReadData-ss", "ReadData-sust-as-ssst", "ChangeCount-u", "ChangeCount-none", "ListPasteboards-s", "WriteItems-aa{ss}", "WriteItems-no-options", "WriteItemsFd-ay", "CanRead-s"] {
            #expect(names[key] as? String == invalidArgument, "\(key): \(String(describing: names[key]))")
        }
        #expect(names["ReadData-invalid-name"] as? String == Harness.errorPrefix + "InvalidName")
        #expect(names["ReadData-right"] is NSNull)
        #expect(try await h.snapshot() == .init(count: 1, types: ["text/plain;charset=utf-8"], items: [[.init(type: "text/plain;charset=utf-8", data: "kept".bytes)]]))
    }
}
