import PasteboardModel
import Synchronization

/// The types declared in this process with `UTType(exportedAs:)` and `UTType(importedAs:)`,
/// so that conformance and lookup follow them from any thread.
///
/// Declarations are usually `static let`s, made once; a `static var` with a getter makes the
/// same declaration again on each use, which is harmless.
final class UTTypeRegistry: Sendable {
    static let shared = UTTypeRegistry()

    /// One declared type.
    struct Declaration: Sendable {
        let identifier: String
        /// Normalized, when the declaration gave one.
        let preferredMIMEType: String?
        let parents: [UTType]
        /// Exported (owned by this program) rather than imported.
        let isExported: Bool

        var type: UTType {
            UTType(identifier: identifier, preferredMIMEType: preferredMIMEType)
        }
    }

    private struct State {
        /// Lowercased identifier → declaration.
        var byKey: [String: Declaration] = [:]
        /// Canonical MIME form → lowercased identifier.
        var keyByMIME: [String: String] = [:]
    }

    private let state = Mutex(State())

    /// Records a declaration and returns the one in force: an imported declaration never
    /// replaces an exported one; otherwise the newest wins.
    @discardableResult
    func declare(_ declaration: Declaration) -> Declaration {
        let key = declaration.identifier.lowercased()
        return state.withLock { state in
            if let existing = state.byKey[key] {
                if existing.isExported, !declaration.isExported {
                    return existing
                }
                if let mime = existing.preferredMIMEType, let type = try? PasteboardType(validating: mime),
                    state.keyByMIME[type.canonicalForm] == key
                {
                    state.keyByMIME[type.canonicalForm] = nil
                }
            }
            state.byKey[key] = declaration
            if let mime = declaration.preferredMIMEType, let type = try? PasteboardType(validating: mime) {
                state.keyByMIME[type.canonicalForm] = key
            }
            return declaration
        }
    }

    /// The declaration of a lowercased identifier.
    func declaration(forKey key: String) -> Declaration? {
        state.withLock { $0.byKey[key] }
    }

    /// Every type declared in this process.
    var declaredTypes: [UTType] {
        state.withLock { $0.byKey.values.map(\.type) }
    }

    /// The declaration that gave this MIME type.
    func declaration(forMIME type: PasteboardType) -> Declaration? {
        state.withLock { state in
            state.keyByMIME[type.canonicalForm].flatMap { state.byKey[$0] }
        }
    }
}
