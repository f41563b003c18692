/// A counting semaphore for async code: at most `limit` holders at once, waiters served in order.
actor ConcurrencyLimiter {
    private let limit: Int
    private var holders = 0
    private var waiters: [(id: Int, continuation: CheckedContinuation<Void, any Error>)] = []
    private var nextWaiterID = 0
    /// Called each time a caller joins the queue: a test waits for it before it cancels that caller.
    private let whenWaiting: @Sendable () -> Void

    init(limit: Int, whenWaiting: @escaping @Sendable () -> Void = {}) {
        self.limit = max(1, limit)
        self.whenWaiting = whenWaiting
    }

    /// Runs `body` while holding one of the permits.
    nonisolated func withPermit<Result: Sendable>(
        _ body: () async throws -> Result
    ) async throws -> Result {
        try await acquire()
        do {
            let result = try await body()
            await release()
            return result
        } catch {
            await release()
            throw error
        }
    }

    private func acquire() async throws {
        if holders < limit {
            holders += 1
            return
        }
        let id = nextWaiterID
        nextWaiterID += 1
        try await withTaskCancellationHandler {
            try await withCheckedThrowingContinuation { (continuation: CheckedContinuation<Void, any Error>) in
                if Task.isCancelled {
                    continuation.resume(throwing: CancellationError())
                } else {
                    waiters.append((id, continuation))
                    whenWaiting()
                }
            }
        } onCancel: {
            Task { await self.cancelWaiter(id) }
        }
    }

    private func cancelWaiter(_ id: Int) {
        guard let index = waiters.firstIndex(where: { $0.id == id }) else { return }
        waiters.remove(at: index).continuation.resume(throwing: CancellationError())
    }

    private func release() {
        if waiters.isEmpty {
            holders -= 1
        } else {
            // The permit passes straight to the first waiter, so `holders` stays the same.
            waiters.removeFirst().continuation.resume()
        }
    }
}
