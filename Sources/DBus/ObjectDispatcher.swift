import CDBus

/// Routes an incoming method call to the exported object at its path, answering the standard
/// `Introspectable` and `Properties` interfaces on the object's behalf.
enum ObjectDispatcher {
    static let introspectable = "org.freedesktop.DBus.Introspectable"
    static let properties = "org.freedesktop.DBus.Properties"
    static let doctype = #"<!DOCTYPE node PUBLIC "-//freedesktop//DTD D-BUS Object Introspection 1.0//EN" "http://www.freedesktop.org/standards/dbus/1.0/introspect.dtd">"#

    static let peer = "org.freedesktop.DBus.Peer"

    static func dispatch(_ message: Message, objects: [String: any DBusObject], loop: EventLoop) {
        let member = message.member ?? ""
        let call = MethodCall(message: message, member: member, loop: loop)

        // `Peer` is answered on every path, object or not, as libdbus would answer it; here
        // rather than by libdbus, so that its answers leave in order with the others (the
        // connection routes them to us: see `EventLoop`).
        if call.hasInterface(peer) {
            guard member == "Ping" || member == "GetMachineId" else {
                return call.fail(.unknownMethod("no method '\(member)' in \(peer)"))
            }
            // Both take no arguments, as GDBus and sd-bus hold them to (libdbus answers
            // whatever a `Ping` carries).
            guard call.signature.isEmpty else { return call.fail(.invalidArgs("\(member) takes no arguments, not '\(call.signature)'")) }
            return member == "Ping" ? call.reply() : answerMachineID(call)
        }

        guard let object = object(at: message, in: objects) else {
            let path = call.path
            if member == "Introspect", !call.namesInterface || call.hasInterface(introspectable) {
                call.reply([.string(parentNode(path, objectPaths: Array(objects.keys)))])
            } else {
                call.fail(.unknownObject("no object at path '\(path)'"))
            }
            return
        }

        let isIntrospect = call.hasInterface(introspectable) || (!call.namesInterface && member == "Introspect")
        if isIntrospect {
            guard member == "Introspect" else { return call.fail(.unknownMethod("no method '\(member)' in \(introspectable)")) }
            guard call.signature.isEmpty else { return call.fail(.invalidArgs("Introspect takes no arguments, not '\(call.signature)'")) }
            return call.reply([.string(object.introspectionXML)])
        }
        if call.hasInterface(properties) {
            answerProperties(call, object: object)
        } else if !call.namesInterface, let standard = StandardMethod(member: member, signature: call.signature) {
            answerWithoutInterface(call, standard, object: object)
        } else {
            object.handle(call)
        }
    }

    /// The standard methods a call naming no interface may mean. The D-Bus specification lets a
    /// caller leave the interface out, the service then choosing a method by its name: GDBus,
    /// zbus and hand-made messages do so for `Ping` and `Get`; they would otherwise reach the
    /// object's own interface and be refused.
    /// Matched by signature too, so that an object's own method of the same name and other
    /// arguments still gets its calls.
    enum StandardMethod {
        case ping, machineID, properties

        init?(member: String, signature: String) {
            switch (member, signature) {
            case ("Ping", ""): self = .ping
            case ("GetMachineId", ""): self = .machineID
            case ("Get", "ss"), ("GetAll", "s"), ("Set", "ssv"): self = .properties
            default: return nil
            }
        }
    }

    private static func answerWithoutInterface(_ call: MethodCall, _ standard: StandardMethod, object: any DBusObject) {
        switch standard {
        case .ping: call.reply()
        case .machineID: answerMachineID(call)
        case .properties: answerProperties(call, object: object)
        }
    }

    /// `Peer.GetMachineId`: the id D-Bus keeps for this machine.
    private static func answerMachineID(_ call: MethodCall) {
        // The "try" form: the other aborts the process on a machine without an id.
        var error = CDBus.DBusError()
        dbus_error_init(&error)
        defer { dbus_error_free(&error) }
        guard let id = dbus_try_get_local_machine_id(&error) else {
            let reason = error.message.map { String(cString: $0) } ?? "no machine id"
            return call.fail(.failed("this machine has no D-Bus machine id: \(reason)"))
        }
        defer { dbus_free(id) }
        call.reply([.string(String(cString: id))])
    }

    /// The object exported at the call's path. A connection exports a few objects: they are
    /// compared with the path in place, which spares making a string of it for every call.
    private static func object(at message: Message, in objects: [String: any DBusObject]) -> (any DBusObject)? {
        guard objects.count > 8 else {
            return objects.first { dbus_message_has_path(message.raw, $0.key) != 0 }?.value
        }
        return objects[message.path ?? "/"]
    }

    /// `Get`, `GetAll` and `Set` (every property here is read-only).
    private static func answerProperties(_ call: MethodCall, object: any DBusObject) {
        let arguments = call.arguments
        switch (call.member, call.signature) {
        case ("Get", "ss"), ("GetAll", "s"):
            let interface = arguments[0].stringValue ?? ""
            let wanted = arguments.count > 1 ? arguments[1].stringValue : nil
            Task { () async -> Void in
                do throws(DBusError) {
                    let all = try await object.properties(of: interface)
                    if let wanted {
                        guard let property = all.first(where: { $0.name == wanted }) else {
                            return call.fail(.unknownProperty("\(interface) has no property '\(wanted)'"))
                        }
                        call.reply([.variant(property.value)])
                    } else {
                        call.reply([.dictionary(key: "s", value: "v", all.map { (.string($0.name), .variant($0.value)) })])
                    }
                } catch {
                    call.fail(error)
                }
            }
        case ("Set", "ssv"):
            // Read-only, but an unknown interface or property is told as such, as for `Get`.
            let interface = arguments[0].stringValue ?? ""
            let wanted = arguments[1].stringValue ?? ""
            Task { () async -> Void in
                do throws(DBusError) {
                    guard try await object.properties(of: interface).contains(where: { $0.name == wanted }) else {
                        return call.fail(.unknownProperty("\(interface) has no property '\(wanted)'"))
                    }
                    call.fail(.propertyReadOnly("\(interface).\(wanted) is read-only"))
                } catch {
                    call.fail(error)
                }
            }
        case ("Get", _), ("GetAll", _), ("Set", _):
            call.fail(.invalidArgs("wrong arguments '\(call.signature)' for \(properties).\(call.member)"))
        default:
            call.fail(.unknownMethod("no method '\(call.member)' in \(properties)"))
        }
    }

    /// The introspection of a path above exported objects: just its child nodes, so tools can
    /// walk the tree (`busctl tree`, `gdbus introspect --recurse`).
    static func parentNode(_ path: String, objectPaths: [String]) -> String {
        let prefix = path == "/" ? "/" : path + "/"
        var children: [String] = []
        for objectPath in objectPaths.sorted() where objectPath.hasPrefix(prefix) {
            let rest = objectPath.dropFirst(prefix.count)
            if let child = rest.split(separator: "/").first.map(String.init), !children.contains(child) {
                children.append(child)
            }
        }
        var xml = doctype + "\n<node>\n"
        if !children.isEmpty {
            xml += "  <interface name=\"\(introspectable)\">\n    <method name=\"Introspect\">\n      <arg name=\"xml_data\" type=\"s\" direction=\"out\"/>\n    </method>\n  </interface>\n"
        }
        for child in children { xml += "  <node name=\"\(child)\"/>\n" }
        return xml + "</node>\n"
    }
}
