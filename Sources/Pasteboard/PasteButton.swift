import Observation

/// The model behind a Paste button, as SwiftUI's `PasteButton` and
/// `pasteDestination(for:action:validator:)` behave: enabled exactly when the pasteboard holds
/// something the payload type can import, following the pasteboard live, without reading any
/// data.
///
/// ```swift
/// let paste = PasteButton(payloadType: Bird.self) { birds in birds.filter(\.isValid) }
/// // bind a toolkit button's sensitivity to paste.isEnabled (it is @Observable), and on click:
/// try await paste.paste { birds in flock.append(contentsOf: birds) }
/// ```
///
/// Enablement is decided from the types each `Changed` signal carries, matched by conformance
/// against the payload's importable representations; when a change carries no types (a
/// concealed write) it asks the server with `CanRead`.
///
/// Contents another process wrote `owner-only` (`.visibility(.ownProcess)`) keep their types
/// listed, as the contract has it, so the button is enabled for them too, and ``paste(action:)``
/// then throws `AccessDenied`.
///
/// It lives on the main actor, as SwiftUI's views do: a toolkit binds to it from its UI
/// thread, and observers hear of `isEnabled` there. From other code, `await` its members.
@MainActor
@Observable
public final class PasteButton<Payload: Transferable> {
    /// Whether pasting would find something to import.
    public private(set) var isEnabled = false

    /// The pasteboard this button pastes from.
    public let pasteboard: Pasteboard

    @ObservationIgnored private let validator: @MainActor ([Payload]) -> [Payload]
    @ObservationIgnored private let availability: ImportAvailability<Payload>

    /// - Parameters:
    ///   - payloadType: What the button pastes.
    ///   - pasteboard: Where from (`.general` by default).
    ///   - validator: Filters the loaded values before the action sees them; the action runs
    ///     only when something is left (`pasteDestination` semantics).
    public init(
        payloadType: Payload.Type, pasteboard: Pasteboard = .general,
        validator: @escaping @MainActor ([Payload]) -> [Payload] = { $0 }
    ) {
        self.pasteboard = pasteboard
        self.validator = validator
        availability = ImportAvailability(pasteboard: pasteboard)
        availability.start { [weak self] state in
            guard let self, isEnabled != state.canImport else { return }
            isEnabled = state.canImport
        }
    }

    /// Loads every item the payload type can import, validates them, and calls `action` with
    /// the result when it is not empty. Returns whether the action ran.
    @discardableResult
    public func paste(action: @MainActor ([Payload]) async throws -> Void) async throws -> Bool {
        let values = try await pasteboard.loadTransferables(type: Payload.self)
        let valid = validator(values)
        guard !valid.isEmpty else { return false }
        try await action(valid)
        return true
    }

    /// Re-reads the state from the server (normally unnecessary: changes arrive by signal).
    public func refresh() async {
        await availability.refresh()
    }
}
