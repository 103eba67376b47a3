import DBus
import Synchronization

/// The floor: the least a service on the same D-Bus layer can do, run in a process of its own
/// (`pasteboard-bench --role echo`). `Set(ay)` keeps the bytes,
/// `Get() → ay` returns them, `Emit()` replies and then emits `Pinged`, as the server emits
/// `Changed` after a write's reply.
final class EchoFloor: DBusObject {
    static let path = "/org/pasteboardd/BenchEcho"
    static let interface = "org.pasteboardd.BenchEcho"
    static let signal = "Pinged"
    static let busName = "org.pasteboardd.BenchEcho"
    /// The name of the same service written in C on libdbus (`pasteboard-c-floor`).
    static let cBusName = "org.pasteboardd.BenchCEcho"

    private let stored = Mutex<[UInt8]>([])

    var introspectionXML: String {
        """
        <node><interface name="\(Self.interface)">
          <method name="Set"><arg name="data" type="ay" direction="in"/></method>
          <method name="Get"><arg name="data" type="ay" direction="out"/></method>
          <method name="Emit"/>
          <signal name="\(Self.signal)"/>
        </interface></node>
        """
    }

    func handle(_ call: MethodCall) {
        switch call.member {
        case "Set":
            guard let bytes = call.arguments.first?.bytesValue else { return call.fail(.invalidArgs("Set takes ay")) }
            stored.withLock { $0 = bytes }
            call.reply()
        case "Get":
            call.reply([.bytes(stored.withLock { $0 })])
        case "Emit":
            do {
                call.reply([], followedBy: [try Message.signal(path: Self.path, interface: Self.interface, name: Self.signal)])
            } catch {
                call.fail(error)
            }
        default:
            call.fail(.unknownMethod("no method \(call.member)"))
        }
    }

    func properties(of interface: String) async throws(DBusError) -> [(name: String, value: DBusValue)] {
        guard interface == Self.interface else { throw .unknownInterface("no interface \(interface)") }
        return []
    }
}
