import Synchronization

/// At most a fixed number of holders at a time; the others wait in the order they came. A waiter whose task is
/// cancelled stops waiting (with `CancellationError`) and takes no permit.
final class AsyncPermits: Sendable {
    private struct Waiter {
        var id: UInt64
        var continuation: CheckedContinuation<Void, any Error>
    }

    private struct State {
        var available: Int
        var waiters: [Waiter] = []
        var nextId: UInt64 = 0
    }

    private let state: Mutex<State>

    /// - Parameter limit: The holders at once (at least 1).
    init(_ limit: Int) {
        precondition(limit >= 1, "AsyncPermits needs at least one permit")
        state = Mutex(State(available: limit))
    }

    /// The tasks waiting for a permit.
    var waiting: Int { state.withLock { $0.waiters.count } }

    /// Runs `body` holding a permit, waiting for one first when all are held.
    func withPermit<Result>(_ body: () async throws -> Result) async throws -> Result {
        try await acquire()
        defer { release() }
        return try await body()
    }

    private func acquire() async throws {
        let id: UInt64? = state.withLock { state in
            if state.available > 0 {
                state.available -= 1
                return nil
            }
            state.nextId += 1
            return state.nextId
        }
        guard let id else { return }
        try await withTaskCancellationHandler {
            try await withCheckedThrowingContinuation { (continuation: CheckedContinuation<Void, any Error>) in
                let outcome: Result<Void, any Error>? = state.withLock { state in
                    if Task.isCancelled { return .failure(CancellationError()) }
                    // A permit freed since this task looked.
                    if state.available > 0 {
                        state.available -= 1
                        return .success(())
                    }
                    state.waiters.append(Waiter(id: id, continuation: continuation))
                    return nil
                }
                if let outcome { continuation.resume(with: outcome) }
            }
        } onCancel: {
            let waiter: Waiter? = state.withLock { state in
                guard let index = state.waiters.firstIndex(where: { $0.id == id }) else { return nil }
                return state.waiters.remove(at: index)
            }
            waiter?.continuation.resume(throwing: CancellationError())
        }
    }

    private func release() {
        let next: Waiter? = state.withLock { state in
            if state.waiters.isEmpty {
                state.available += 1
                return nil
            }
            // The permit passes straight to the first waiter.
            return state.waiters.removeFirst()
        }
        next?.continuation.resume()
    }
}
