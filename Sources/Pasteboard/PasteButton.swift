import Observation
import Synchronization

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
/// It may be made and used from any isolation (a toolkit's main thread, a test, a service);
/// the pasteboard is followed on the main actor, so observers hear of ``isEnabled`` there, as
/// a toolkit binding wants, and the main actor must be running (it is in an app, and in a
/// program whose `main` is `async`). ``paste(isolation:action:)`` runs its action where it is
/// called.
///
/// Contents another process wrote `owner-only` (`.visibility(.ownProcess)`) keep their types
/// listed, as the contract has it, so the button is enabled for them too, and
/// ``paste(isolation:action:)`` then throws `AccessDenied`.
@Observable
public final class PasteButton<Payload: Transferable>: Sendable {
    /// Whether pasting would find something to import.
    public var isEnabled: Bool {
        access(keyPath: \.isEnabled)
        return enabled.withLock { $0 }
    }

    /// The pasteboard this button pastes from.
    public let pasteboard: Pasteboard

    @ObservationIgnored private let enabled = Mutex(false)
    /// The validator, run on the main actor; nil for `{ $0 }`, which needs no trip there.
    @ObservationIgnored private let validate: (@Sendable (sending [Payload]) async -> sending [Payload])?
    @ObservationIgnored private let availability: ImportAvailability<Payload>

    /// A button that pastes every value loaded (`validator` is `{ $0 }`).
    ///
    /// - Parameters:
    ///   - payloadType: What the button pastes.
    ///   - pasteboard: Where from (`.general` by default).
    public convenience init(payloadType: Payload.Type, pasteboard: Pasteboard = .general) {
        self.init(pasteboard: pasteboard, validate: nil)
    }

    /// - Parameters:
    ///   - payloadType: What the button pastes.
    ///   - pasteboard: Where from (`.general` by default).
    ///   - validator: Filters the loaded values before the action sees them; the action runs
    ///     only when something is left (`pasteDestination` semantics). It runs on the main
    ///     actor, where a toolkit's model lives; the values it returns go on to the action, so
    ///     they are `Sendable`.
    public convenience init(
        payloadType: Payload.Type, pasteboard: Pasteboard = .general,
        validator: @escaping @MainActor ([Payload]) -> [Payload]
    ) where Payload: Sendable {
        self.init(pasteboard: pasteboard) { values in
            await MainActor.run { validator(values) }
        }
    }

    private init(pasteboard: Pasteboard, validate: (@Sendable (sending [Payload]) async -> sending [Payload])?) {
        self.pasteboard = pasteboard
        self.validate = validate
        availability = ImportAvailability(pasteboard: pasteboard)
        availability.start { [weak self] state in
            self?.setEnabled(state.canImport)
        }
    }

    /// Loads every item the payload type can import, validates them, and calls `action` with
    /// the result when it is not empty. Returns whether the action ran.
    ///
    /// - Parameters:
    ///   - isolation: Where `action` runs: the caller's actor (nothing to pass).
    ///   - action: Receives the validated values, never an empty array.
    @discardableResult
    public func paste(
        isolation: isolated (any Actor)? = #isolation, action: ([Payload]) async throws -> Void
    ) async throws -> Bool {
        let loaded = try await pasteboard.loadTransferables(type: Payload.self)
        let valid: [Payload]
        if let validate {
            // Made only by the initializer that requires `Payload: Sendable`: the values that go
            // to the main actor and back are Sendable, which the stored closure's type cannot say.
            nonisolated(unsafe) let values = loaded
            valid = await validate(values)
        } else {
            valid = loaded
        }
        guard !valid.isEmpty else { return false }
        try await action(valid)
        return true
    }

    /// Re-reads the state from the server (normally unnecessary: changes arrive by signal).
    public func refresh() async {
        await availability.refresh()
    }

    private func setEnabled(_ value: Bool) {
        guard enabled.withLock({ $0 }) != value else { return }
        withMutation(keyPath: \.isEnabled) {
            enabled.withLock { $0 = value }
        }
    }
}
