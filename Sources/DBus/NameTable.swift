/// Values by name, for the few well-known names a connection follows (one, for every client
/// in this package): what a `[String: Value]` would be, searched in order instead.
///
/// A dictionary's first use in a process makes the type metadata of its storage, for which the
/// Swift runtime checks that the key is `Hashable` by searching every protocol conformance the
/// executable holds: more than the rest of the table's work in a short-lived `pbctl`.
struct NameTable<Value> {
    private var entries: [(name: String, value: Value)] = []

    var isEmpty: Bool { entries.isEmpty }

    subscript(name: String) -> Value? {
        get {
            for entry in entries where entry.name == name { return entry.value }
            return nil
        }
        set {
            let index = entries.firstIndex { $0.name == name }
            switch (index, newValue) {
            case (let index?, let value?): entries[index].value = value
            case (let index?, nil): entries.remove(at: index)
            case (nil, let value?): entries.append((name, value))
            case (nil, nil): break
            }
        }
    }
}
