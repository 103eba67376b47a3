import Synchronization
import CDBus

/// Validation of the names D-Bus puts on the wire, by libdbus's own rules.
///
/// libdbus asserts (and may abort) when handed an invalid name, so anything that came from a
/// user or a peer is checked here first.
///
/// - Valid object paths: `/`, `/org/pasteboardd/Pasteboard1`.
///   Invalid: `""`, `org`, `/org/`, `/org//x`, `/org/pasteboard-d`.
public enum ObjectPath {
    public static func isValid(_ path: String) -> Bool {
        !path.utf8.contains(0) && dbus_validate_path(path, nil) != 0
    }
}

/// Signatures: `s`, `a{sv}`, `(txas)`. Invalid: `a`, `{sv}`, `(`, `z`.
public enum Signature {
    public static func isValid(_ signature: String) -> Bool {
        !signature.utf8.contains(0) && dbus_signature_validate(signature, nil) != 0
    }

    /// One complete type: `a{sv}` is one, `ss` is two.
    public static func isSingleCompleteType(_ signature: String) -> Bool {
        !signature.utf8.contains(0) && dbus_signature_validate_single(signature, nil) != 0
    }

    /// Whether an array may hold elements of signature `element`. Asked for every array sent:
    /// basic types are known, and the few container signatures a program uses are checked by
    /// libdbus once each.
    static func isValidArrayElement(_ element: String) -> Bool {
        if element.utf8.count == 1, let code = element.utf8.first, basicCodes.contains(code) { return true }
        if validElements.withLock({ $0.contains(element) }) { return true }
        guard isSingleCompleteType("a" + element) else { return false }
        validElements.withLock { known in
            if known.count < 256 { known.insert(element) }
        }
        return true
    }

    /// The one-character single complete types, `v` included.
    private static let basicCodes = Set("ybnqiuxtdsoghv".utf8)
    private static let validElements = Mutex<Set<String>>([])
}

/// Interface names: `org.pasteboardd.Pasteboard1`. Invalid: `org`, `org..x`, `1org.x`.
public enum InterfaceName {
    public static func isValid(_ name: String) -> Bool {
        !name.utf8.contains(0) && dbus_validate_interface(name, nil) != 0
    }
}

/// Member (method and signal) names: `WriteItems`. Invalid: `""`, `Write.Items`, `1Write`.
public enum MemberName {
    public static func isValid(_ name: String) -> Bool {
        !name.utf8.contains(0) && dbus_validate_member(name, nil) != 0
    }
}

/// Error names follow the interface-name rules: `org.pasteboardd.Error.Stale`.
public enum ErrorName {
    public static func isValid(_ name: String) -> Bool {
        !name.utf8.contains(0) && dbus_validate_error_name(name, nil) != 0
    }
}

/// Bus names, unique (`:1.42`) or well-known (`org.pasteboardd.Pasteboard1`).
public enum BusName {
    public static func isValid(_ name: String) -> Bool {
        !name.utf8.contains(0) && dbus_validate_bus_name(name, nil) != 0
    }
}
