import Foundation
import Synchronization

/// Wakes a task that waits for "something to do": every ``wake()`` counts, and ``wait(after:)`` returns at once when
/// a wake came after the count the waiter saw, so none is missed between a look and a wait. Cancelling the waiting
/// task ends its wait.
final class WakeSignal: Sendable {
    private struct State {
        var count = 0
        var waiters: [UUID: CheckedContinuation<Void, Never>] = [:]
        var cancelled: Set<UUID> = []
    }

    private let state = Mutex(State())

    /// The wakes so far.
    var count: Int { state.withLock { $0.count } }

    func wake() {
        let waiters = state.withLock { state in
            state.count += 1
            defer { state.waiters.removeAll() }
            return Array(state.waiters.values)
        }
        for waiter in waiters { waiter.resume() }
    }

    /// Returns once the count is past `seen`, or the task is cancelled.
    func wait(after seen: Int) async {
        let token = UUID()
        await withTaskCancellationHandler {
            await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
                let now = state.withLock { state -> Bool in
                    if state.cancelled.remove(token) != nil || state.count != seen { return true }
                    state.waiters[token] = continuation
                    return false
                }
                if now { continuation.resume() }
            }
        } onCancel: {
            let waiter = state.withLock { state in
                let waiter = state.waiters.removeValue(forKey: token)
                if waiter == nil { state.cancelled.insert(token) }
                return waiter
            }
            waiter?.resume()
        }
    }
}
