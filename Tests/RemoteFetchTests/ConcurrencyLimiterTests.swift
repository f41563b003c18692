import Synchronization
import Testing

@testable import RemoteFetch

/// The request limiter is a counting semaphore shared by every caller of one fetcher (a server's many layouts are
/// not children of one task group, so a group cannot bound them). These check the bound and that a waiting caller
/// that is cancelled leaves without taking a permit.
///
/// The time limit ends a real hang; like the network suites' it is 5 minutes, since in a full run on an
/// oversubscribed machine (load average 12 on 2 cores) these event-driven tests waited over 3 minutes for a thread.
@Suite(.timeLimit(.minutes(5))) struct ConcurrencyLimiterTests {
    /// Counters the concurrent callers share.
    final class Counters: Sendable {
        let ran = Atomic<Bool>(false)
        let inside = Atomic<Int>(0)
        let most = Atomic<Int>(0)
    }

    /// Holds the single permit until `release` is resumed; `held` is resumed once the permit is taken.
    static func holdPermit(
        _ limiter: ConcurrencyLimiter, held: CheckedContinuation<Void, Never>, release: AsyncStream<Void>
    ) -> Task<Void, any Error> {
        Task {
            try await limiter.withPermit {
                held.resume()
                for await _ in release { break }
            }
        }
    }

    @Test func aCancelledWaiterLeavesWithoutAPermit() async throws {
        let (waiting, nowWaiting) = AsyncStream<Void>.makeStream()
        let limiter = ConcurrencyLimiter(limit: 1) { nowWaiting.yield() }
        let (release, releaseHolder) = AsyncStream<Void>.makeStream()
        var holder: Task<Void, any Error>?
        await withCheckedContinuation { held in holder = Self.holdPermit(limiter, held: held, release: release) }
        // The permit is taken: this caller waits, and is cancelled once it is in the queue (cancelled before, it
        // would leave by another way, never having waited).
        let counters = Counters()
        let waiter = Task { try await limiter.withPermit { counters.ran.store(true, ordering: .relaxed) } }
        for await _ in waiting { break }
        waiter.cancel()
        await #expect(throws: CancellationError.self) { try await waiter.value }
        let waiterRan = counters.ran.load(ordering: .relaxed)
        #expect(!waiterRan)
        // The holder's permit is the only one given out: once it is back, the next caller gets it at once.
        releaseHolder.yield()
        try await holder?.value
        let next = try await limiter.withPermit { 42 }
        #expect(next == 42)
    }

    @Test func theBoundHoldsOverFiftyCallers() async throws {
        let limiter = ConcurrencyLimiter(limit: 2)
        let counters = Counters()
        try await withThrowingTaskGroup(of: Void.self) { group in
            for _ in 0..<50 {
                group.addTask {
                    try await limiter.withPermit {
                        let now = counters.inside.wrappingAdd(1, ordering: .relaxed).newValue
                        counters.most.max(now, ordering: .relaxed)
                        await Task.yield()
                        counters.inside.wrappingSubtract(1, ordering: .relaxed)
                    }
                }
            }
            try await group.waitForAll()
        }
        let (mostInside, insideAtEnd) = (
            counters.most.load(ordering: .relaxed), counters.inside.load(ordering: .relaxed)
        )
        #expect((1...2).contains(mostInside))
        #expect(insideAtEnd == 0)
    }
}
