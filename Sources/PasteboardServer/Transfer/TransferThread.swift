import Foundation
import PasteboardModel

/// Blocking transfer work (reading a descriptor to its end) on a thread of its own, awaited
/// from async code: it may wait on a slow app for seconds, which must hold neither the bus
/// thread nor a thread of Swift's cooperative pool.
enum TransferThread {
    static func run<Result: Sendable>(_ work: @escaping @Sendable () throws(PasteboardError) -> Result) async throws(PasteboardError) -> Result {
        let outcome: Swift.Result<Result, PasteboardError> = await withCheckedContinuation { done in
            Thread.detachNewThread {
                do throws(PasteboardError) {
                    done.resume(returning: .success(try work()))
                } catch {
                    done.resume(returning: .failure(error))
                }
            }
        }
        return try outcome.get()
    }
}
