import CDBus
import DBus

#if canImport(Glibc)
import Glibc
#endif

/// A selection another app owns on a Wayland compositor: one data-control offer.
///
/// It names the offer by serial rather than holding its proxy: the proxy belongs to the display
/// thread, which destroys it when the selection changes; a fetch asks that thread whether the
/// offer is still the selection and, if so, sends the request there.
final class WaylandSource: DesktopSource {
    let types: [String]
    private let selection: DesktopSelection
    private let serial: UInt64
    private let loop: WaylandEventLoop

    init(types: [String], selection: DesktopSelection, serial: UInt64, loop: WaylandEventLoop) {
        self.types = types
        self.selection = selection
        self.serial = serial
        self.loop = loop
    }

    /// After a round trip to the compositor, so that a selection it changed before now (the
    /// app quitting makes it empty) has been reported.
    func isStillTheSelection() async -> Bool {
        let (selection, serial) = (self.selection, self.serial)
        return await withCheckedContinuation { (done: CheckedContinuation<Bool, Never>) in
            let queued = loop.submit { session in done.resume(returning: session.isCurrent(serial, of: selection, afterRoundTrip: true)) }
            if !queued { done.resume(returning: false) }
        }
    }

    /// Returns the read end of a pipe the owning app writes the data into.
    ///
    /// The app answers through the pipe, at its own pace: there is nothing to wait for here
    /// beyond the request leaving, so `timeout` is for the caller's reading of the pipe.
    /// A pipe the app writes into: the caller's reading stops at `maxBytes`.
    func fetch(_ type: String, timeout: Duration, maxBytes: UInt64) async throws(DesktopClipboardError) -> UnixFileDescriptor {
        guard types.contains(type) else {
            throw .refused("the app that copied it does not offer \(type)")
        }
        var ends: [Int32] = [-1, -1]
        guard pipe2(&ends, O_CLOEXEC) == 0 else {
            throw .refused("could not make a pipe: \(SystemCallErrorText.current)")
        }
        let readEnd = UnixFileDescriptor(owning: ends[0])
        let writeEnd = UnixFileDescriptor(owning: ends[1])
        let (selection, serial) = (self.selection, self.serial)
        let result = await withCheckedContinuation { (continuation: CheckedContinuation<Result<Void, DesktopClipboardError>, Never>) in
            let queued = loop.submit { session in
                // Our write end is closed when this closure is released, after the flush: the
                // app's copy is then the only writer, and its closing ends the data.
                continuation.resume(returning: session.receive(type, from: serial, of: selection, into: writeEnd.rawValue))
            }
            if !queued {
                continuation.resume(returning: .failure(.ownerGone("the connection to the Wayland compositor has ended")))
            }
        }
        try result.get()
        return readEnd
    }
}
