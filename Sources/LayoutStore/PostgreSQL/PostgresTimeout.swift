import Synchronization

/// Runs `body` for at most `timeout`. The caller never waits for a body that ignores its cancellation (a query
/// on a connection that died with the server may never answer): it gets ``StoreTimeout`` on time, and the body is
/// cancelled and left to end on its own.
///
/// The store's operations go through it, and so do the shared probe cache's calls (with a shorter bound).
func withTimeout<Result: Sendable>(
    _ timeout: Duration, _ body: @escaping @Sendable () async throws -> Result
) async throws -> Result {
    try await withCheckedThrowingContinuation { (continuation: CheckedContinuation<Result, any Error>) in
        let waiting = FirstAnswer(continuation)
        let work = Task {
            do { waiting.resume(with: .success(try await body())) } catch { waiting.resume(with: .failure(error)) }
        }
        Task {
            try? await Task.sleep(for: timeout)
            if waiting.resume(with: .failure(StoreTimeout())) { work.cancel() }
        }
    }
}

/// ``withTimeout(_:_:)`` stopped waiting for PostgreSQL.
struct StoreTimeout: Error {}

/// A continuation resumed by the first of two racers; the second finds it taken.
private final class FirstAnswer<Value: Sendable>: Sendable {
    private let continuation: Mutex<CheckedContinuation<Value, any Error>?>

    init(_ continuation: CheckedContinuation<Value, any Error>) { self.continuation = Mutex(continuation) }

    /// Whether this call was the first.
    @discardableResult
    func resume(with outcome: Swift.Result<Value, any Error>) -> Bool {
        guard let continuation = continuation.withLock({ $0.take() }) else { return false }
        continuation.resume(with: outcome)
        return true
    }
}
