import Foundation
import Synchronization

@testable import LayoutService

/// A ``ServiceClock`` that moves only when a test says so: sleepers wake when ``advance(by:)`` passes their
/// deadline, and a test waits for the service to go back to sleep (``waitForSleeps(_:)``) to know its periodic work
/// is done. Nothing waits on the wall clock.
final class ManualClock: ServiceClock {
    private struct Sleeper {
        var deadline: Date
        var continuation: CheckedContinuation<Void, any Error>
    }

    private struct State {
        var now: Date
        var sleepers: [UUID: Sleeper] = [:]
        /// `sleep(for:)` calls so far.
        var sleeps = 0
        var sleepWaiters: [(count: Int, continuation: CheckedContinuation<Void, Never>)] = []
        /// Sleeps cancelled before they were registered.
        var cancelled: Set<UUID> = []
    }

    private let state: Mutex<State>

    init(now: Date = Date()) { state = Mutex(State(now: now)) }

    var now: Date { state.withLock { $0.now } }

    func sleep(for duration: Duration) async throws {
        let token = UUID()
        try await withTaskCancellationHandler {
            try await withCheckedThrowingContinuation { (continuation: CheckedContinuation<Void, any Error>) in
                let woken = state.withLock { state -> [CheckedContinuation<Void, Never>]? in
                    // Cancelled before the handler below could find this sleeper.
                    if state.cancelled.remove(token) != nil { return nil }
                    state.sleepers[token] = Sleeper(
                        deadline: state.now.addingTimeInterval(Self.seconds(duration)), continuation: continuation)
                    state.sleeps += 1
                    let sleeps = state.sleeps
                    let ready = state.sleepWaiters.filter { $0.count <= sleeps }.map(\.continuation)
                    state.sleepWaiters.removeAll { $0.count <= sleeps }
                    return ready
                }
                guard let woken else { return continuation.resume(throwing: CancellationError()) }
                for waiter in woken { waiter.resume() }
            }
        } onCancel: {
            let sleeper = state.withLock { state in
                let sleeper = state.sleepers.removeValue(forKey: token)
                if sleeper == nil { state.cancelled.insert(token) }
                return sleeper
            }
            sleeper?.continuation.resume(throwing: CancellationError())
        }
    }

    /// Moves the clock on, waking every sleeper whose deadline has come.
    func advance(by duration: Duration) {
        let due = state.withLock { state -> [CheckedContinuation<Void, any Error>] in
            state.now = state.now.addingTimeInterval(Self.seconds(duration))
            let now = state.now
            let due = state.sleepers.filter { $0.value.deadline <= now }
            for token in due.keys { state.sleepers[token] = nil }
            return due.values.map(\.continuation)
        }
        for continuation in due { continuation.resume() }
    }

    /// Returns once `sleep(for:)` has been called `count` times in all.
    func waitForSleeps(_ count: Int) async {
        await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
            let ready = state.withLock { state -> Bool in
                if state.sleeps >= count { return true }
                state.sleepWaiters.append((count, continuation))
                return false
            }
            if ready { continuation.resume() }
        }
    }

    /// Whether some task sleeps until exactly `deadline` (to the microsecond).
    func hasSleeper(until deadline: Date) -> Bool {
        state.withLock { state in
            state.sleepers.values.contains { abs($0.deadline.timeIntervalSince(deadline)) < 0.000_001 }
        }
    }

    /// Returns once some task sleeps until exactly `deadline` (the service has looked at the clock and gone to
    /// sleep until then), looking every few milliseconds.
    func waitForSleeper(until deadline: Date, timeout: Duration = .seconds(60)) async throws {
        let end = ContinuousClock.now + timeout
        while !hasSleeper(until: deadline) {
            guard ContinuousClock.now < end else {
                struct NoSleeper: Error, CustomStringConvertible { var description: String }
                throw NoSleeper(description: "nothing went to sleep until \(deadline)")
            }
            try await Task.sleep(for: .milliseconds(5))
        }
    }

    /// How many times `sleep(for:)` was called so far.
    var sleeps: Int { state.withLock { $0.sleeps } }

    private static func seconds(_ duration: Duration) -> TimeInterval {
        let (seconds, attoseconds) = duration.components
        return TimeInterval(seconds) + TimeInterval(attoseconds) / 1e18
    }
}
