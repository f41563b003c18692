import Synchronization
import Testing

@testable import LayoutStore

/// Feed writes to PostgreSQL go two at a time: the permits hold the third back until one ends, in arrival order,
/// and a cancelled waiter leaves without taking one.
@Suite(.timeLimit(.minutes(1)))
struct AsyncPermitsTests {
    /// A holder that stays inside `withPermit` until its gate opens, recording when it got in.
    final class Holders: Sendable {
        let entered = Mutex<[Int]>([])
        let gates = Mutex<[Int: CheckedContinuation<Void, Never>]>([:])
        let (events, eventSink) = AsyncStream.makeStream(of: Int.self)

        func hold(_ number: Int, _ permits: AsyncPermits) async throws {
            try await permits.withPermit {
                entered.withLock { $0.append(number) }
                await withCheckedContinuation { continuation in
                    gates.withLock { $0[number] = continuation }
                    eventSink.yield(number)
                }
            }
        }

        func open(_ number: Int) {
            gates.withLock { $0.removeValue(forKey: number) }?.resume()
        }
    }

    @Test func aThirdWaitsForAPermitAndWaitersGoInOrder() async throws {
        let permits = AsyncPermits(2)
        let holders = Holders()
        var events = holders.events.makeAsyncIterator()
        let first = Task { try await holders.hold(1, permits) }
        let second = Task { try await holders.hold(2, permits) }
        let arrived = [await events.next(), await events.next()].compactMap { $0 }.sorted()
        #expect(arrived == [1, 2])
        let third = Task { try await holders.hold(3, permits) }
        // The fourth queues behind the third: the third is waiting before it comes.
        while permits.waiting < 1 { await Task.yield() }
        let fourth = Task { try await holders.hold(4, permits) }
        while permits.waiting < 2 { await Task.yield() }
        #expect(holders.entered.withLock { $0 }.sorted() == [1, 2])
        holders.open(1)
        #expect(await events.next() == 3)
        holders.open(2)
        #expect(await events.next() == 4)
        #expect(holders.entered.withLock { Array($0.suffix(2)) } == [3, 4])
        holders.open(3)
        holders.open(4)
        for task in [first, second, third, fourth] { try await task.value }
    }

    @Test func aCancelledWaiterLeavesWithoutAPermit() async throws {
        let permits = AsyncPermits(1)
        let holders = Holders()
        var events = holders.events.makeAsyncIterator()
        let holder = Task { try await holders.hold(1, permits) }
        #expect(await events.next() == 1)
        let waiter = Task { try await holders.hold(2, permits) }
        while permits.waiting < 1 { await Task.yield() }
        waiter.cancel()
        await #expect(throws: CancellationError.self) { try await waiter.value }
        #expect(holders.entered.withLock { $0 } == [1])
        holders.open(1)
        try await holder.value
        #expect(permits.waiting == 0)
        // The permit came back: the next one gets in at once.
        let next = Task { try await holders.hold(3, permits) }
        #expect(await events.next() == 3)
        holders.open(3)
        try await next.value
    }
}
