import Synchronization

/// Layouts that failed while the store's disk was full, so that marking them failed could not be written either.
///
/// A layout that meets a full disk ends as failed, with the reason; but the row that says so is a write too, and on a
/// full disk it may fail like the page did. Then the store keeps the failure here: ``LayoutStore/layout(_:)`` shows
/// it (a client sees `failed` and why, not a layout `running` for ever), and it is written at the store's next
/// successful write, once there is room again. A process that stops before then leaves the layout `running` in the
/// store: the next start resumes it, which is what a layout cut short by a crash gets too.
final class UnrecordedFailures: Sendable {
    struct Failure: Sendable, Equatable {
        var code: String
        var message: String
    }

    private let failures = Mutex<[String: Failure]>([:])

    var isEmpty: Bool { failures.withLock { $0.isEmpty } }

    /// The failures not written yet, by layout id.
    var pending: [String: Failure] { failures.withLock { $0 } }

    func remember(_ id: String, code: String, message: String) {
        failures.withLock { $0[id] = Failure(code: code, message: message) }
    }

    /// The failure is in the store now (or the layout was written otherwise).
    func forget(_ id: String) {
        _ = failures.withLock { $0.removeValue(forKey: id) }
    }

    /// The record as a client should see it: failed, with the reason, when its failure is only known here.
    func applied(to record: LayoutRecord?) -> LayoutRecord? {
        guard var record, record.status == "running",
            let failure = failures.withLock({ $0[record.id] })
        else { return record }
        record.status = "failed"
        record.errorCode = failure.code
        record.errorMessage = failure.message
        return record
    }

    /// Writes each pending failure with `write`, forgetting those written; stops at the first that fails (the disk is
    /// still full: the others would fail alike).
    func writePending(_ write: (String, Failure) async throws -> Void) async {
        for (id, failure) in pending.sorted(by: { $0.key < $1.key }) {
            do {
                try await write(id, failure)
                forget(id)
            } catch {
                return
            }
        }
    }
}
