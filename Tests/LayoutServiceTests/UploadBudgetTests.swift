import Foundation
import Synchronization
import Testing

@testable import LayoutService

/// `--max-upload-bytes-in-flight`: the budget's own logic, with its waits timed by a sleep the test ends itself.
@Suite struct UploadBudgetTests {
    /// A sleep that lasts until the test rings it (or its task is cancelled): every wait the budget times ends when
    /// the test says, not on a clock.
    final class Alarm: Sendable {
        private struct State {
            var sleepers: [(token: Int, continuation: CheckedContinuation<Void, Never>)] = []
            var next = 0
        }
        private let state = Mutex(State())

        var sleepers: Int { state.withLock { $0.sleepers.count } }

        @Sendable func sleep(_ duration: Duration) async throws {
            let token = state.withLock { state in
                state.next += 1
                return state.next
            }
            await withTaskCancellationHandler {
                await withCheckedContinuation { continuation in
                    state.withLock { $0.sleepers.append((token, continuation)) }
                    if Task.isCancelled { wake(token) }
                }
            } onCancel: {
                wake(token)
            }
            try Task.checkCancellation()
        }

        private func wake(_ token: Int) {
            let continuation = state.withLock { state -> CheckedContinuation<Void, Never>? in
                guard let index = state.sleepers.firstIndex(where: { $0.token == token }) else { return nil }
                return state.sleepers.remove(at: index).continuation
            }
            continuation?.resume()
        }

        /// Ends the oldest sleep.
        func ringFirst() {
            guard let token = state.withLock({ $0.sleepers.first?.token }) else { return }
            wake(token)
        }
    }

    /// Waits (yielding) until `condition` holds; the budget's waiters enqueue on other tasks.
    static func eventually(_ condition: () -> Bool) async {
        for _ in 0..<100_000 where !condition() { await Task.yield() }
    }

    @Test func bytesWithinTheBudgetAreGrantedAtOnceAndReturned() async throws {
        let budget = UploadBudget(capacity: 100, waitLimit: .seconds(1), sleep: Alarm().sleep)
        try await budget.acquire(60)
        try await budget.acquire(40)
        #expect(budget.available == 0)
        budget.release(60)
        budget.release(40)
        #expect(budget.available == 100)
    }

    @Test func aRequestBeyondTheBudgetWaitsForBytesToComeBackAndGoesInOrder() async throws {
        let budget = UploadBudget(capacity: 100, waitLimit: .seconds(1), sleep: Alarm().sleep)
        try await budget.acquire(80)
        let order = Order()
        let first = Task {
            try await budget.acquire(50)
            order.append("50")
        }
        await Self.eventually { budget.waiting == 1 }
        // 20 bytes are free, but the waiting 50 came first: the 10 waits behind it.
        let second = Task {
            try await budget.acquire(10)
            order.append("10")
        }
        await Self.eventually { budget.waiting == 2 }
        #expect(order.seen.isEmpty)
        #expect(budget.available == 20)
        budget.release(80)
        try await first.value
        try await second.value
        #expect(order.seen == ["50", "10"])
        #expect(budget.available == 40)
    }

    @Test func aWaitThatRunsOutIsRefusedAndTakesNothing() async throws {
        let alarm = Alarm()
        let budget = UploadBudget(capacity: 100, waitLimit: .seconds(3), sleep: alarm.sleep)
        try await budget.acquire(70)
        let refused = Task { try await budget.acquire(50) }
        await Self.eventually { budget.waiting == 1 && alarm.sleepers == 1 }
        alarm.ringFirst()
        await #expect(throws: UploadBudget.Refusal.timedOut) { try await refused.value }
        #expect(budget.waiting == 0)
        #expect(budget.available == 30, "the refused wait holds no bytes")
        budget.release(70)
        #expect(budget.available == 100)
    }

    @Test func aRefusedWaitLetsThoseBehindItThroughWhenTheyFit() async throws {
        let alarm = Alarm()
        let budget = UploadBudget(capacity: 100, waitLimit: .seconds(3), sleep: alarm.sleep)
        try await budget.acquire(70)
        let large = Task { try await budget.acquire(90) }
        await Self.eventually { budget.waiting == 1 && alarm.sleepers == 1 }
        // 30 bytes are free: the 20 waits only because the 90 came first.
        let small = Task { try await budget.acquire(20) }
        await Self.eventually { budget.waiting == 2 && alarm.sleepers == 2 }
        // Only the 90's wait runs out: the 20 behind it then fits, and goes.
        alarm.ringFirst()
        await #expect(throws: UploadBudget.Refusal.timedOut) { try await large.value }
        try await small.value
        #expect(budget.available == 10)
        #expect(budget.waiting == 0)
    }

    @Test func aRequestLargerThanTheWholeBudgetRunsAlone() async throws {
        let budget = UploadBudget(capacity: 100, waitLimit: .seconds(1), sleep: Alarm().sleep)
        try await budget.acquire(10)
        let alone = Task { try await budget.acquire(1_000) }
        await Self.eventually { budget.waiting == 1 }
        budget.release(10)
        try await alone.value
        #expect(budget.available == 0)
        budget.release(1_000)
        #expect(budget.available == 100, "what is given back is capped as what was taken")
    }

    @Test func aCancelledWaitTakesNothing() async throws {
        let budget = UploadBudget(capacity: 100, waitLimit: .seconds(1), sleep: Alarm().sleep)
        try await budget.acquire(100)
        let cancelled = Task { try await budget.acquire(10) }
        await Self.eventually { budget.waiting == 1 }
        cancelled.cancel()
        await #expect(throws: CancellationError.self) { try await cancelled.value }
        #expect(budget.waiting == 0)
        budget.release(100)
        #expect(budget.available == 100)
    }

    @Test func aReservationGrowsAndGivesEverythingBackOnce() async throws {
        let budget = UploadBudget(capacity: 100, waitLimit: .zero, sleep: Alarm().sleep)
        let reservation = UploadBudget.Reservation(budget: budget)
        try await reservation.grow(to: 30)
        try await reservation.grow(to: 20)
        try await reservation.grow(to: 60)
        #expect(reservation.bytes == 60)
        #expect(budget.available == 40)
        // No wait allowed: a growth past what is free is refused at once, and what was held stays held.
        let other = UploadBudget.Reservation(budget: budget)
        try await other.grow(to: 30)
        await #expect(throws: UploadBudget.Refusal.timedOut) { try await reservation.grow(to: 100) }
        await #expect(throws: ServiceProblem.self) { try await other.growOrRefuse(to: 50) }
        #expect(reservation.bytes == 60)
        #expect(other.bytes == 30)
        #expect(budget.refusedCount == 2)
        other.release()
        reservation.release()
        reservation.release()
        #expect(budget.available == 100)
    }
}

/// What was granted, in order, shared with the tasks that wait.
final class Order: Sendable {
    private let names = Mutex<[String]>([])
    func append(_ name: String) { names.withLock { $0.append(name) } }
    var seen: [String] { names.withLock { $0 } }
}
