import Foundation
import LayoutStore
import Logging
import Synchronization

/// Which layouts were read (a page, by the router or the page fast path; pins; status) since the reads were last
/// written to the store, for each layout's last-read time.
///
/// Marking a read is one insertion into a set under a lock, on the thread that answers the request: serving a page
/// never waits for the store. ``StoreEvictor`` writes the marks in one batch every `storeCheckInterval` (and when
/// the service stops), as reads at the time of the batch; a layout's last-read time is therefore at most one
/// interval late. A process killed before a batch loses those marks, which only makes the layouts look older.
final class LayoutReads: Sendable {
    private let pending = Mutex<Set<String>>([])
    /// The most layouts marked between two flushes; more are not recorded (only layouts that exist are marked, so
    /// this is far beyond a store's layouts read in a minute, and bounds the memory whatever happens).
    static let limit = 100_000

    /// Records a read of the layout `id` (one that exists: the callers mark after finding it).
    func mark(_ id: String) {
        pending.withLock { pending in
            if pending.count < Self.limit { pending.insert(id) }
        }
    }

    /// Drops the marks of a removed layout.
    func forget(_ id: String) {
        pending.withLock { _ = $0.remove(id) }
    }

    /// The layouts marked and not written yet.
    var marked: Set<String> { pending.withLock { $0 } }

    /// Writes the marks gathered since the last flush to the store as reads at `time`. Marks a failed write could
    /// not record are kept for the next flush.
    func flush(to store: any LayoutStore, at time: Date, logger: Logger) async {
        let batch = pending.withLock { pending in
            defer { pending.removeAll(keepingCapacity: true) }
            return pending
        }
        guard !batch.isEmpty else { return }
        do {
            try await store.recordReads(Array(batch), at: time)
        } catch {
            // A service cancelled outright (not stopped gracefully) cannot write them: nothing to report.
            if !(error is CancellationError) {
                logger.warning(
                    "cannot record the layouts' reads", metadata: ["layouts": "\(batch.count)", "error": "\(error)"])
            }
            pending.withLock { $0.formUnion(batch) }
        }
    }
}
