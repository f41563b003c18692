import Foundation

/// Runs blocking work (waiting for a child process, reading a pipe to its end) on a thread of its own.
///
/// The suites run in parallel on Swift's cooperative pool, which has one thread per core: two tests blocking it
/// while their commands run would stall every other test (its servers, clients and timers) for as long, and a
/// test that measures a timeout would then measure the stall.
public func onOwnThread<Result: Sendable>(_ work: @escaping @Sendable () throws -> Result) async throws -> Result {
    try await withCheckedThrowingContinuation { continuation in
        Thread { continuation.resume(with: Swift.Result { try work() }) }.start()
    }
}
