import HTTPTypes
import Hummingbird
import NIOCore
import Synchronization

/// The bytes of request bodies the service holds in memory at once, across all connections
/// (`--max-upload-bytes-in-flight`).
///
/// Why: a posted feed is in memory several times over while its request is answered (the body, the copy JSON
/// decoding reads, the decoded text, the feed's bytes), and each connection may post one. Without a bound, 24
/// clients posting 23 MB each took the service to a 769 MiB peak, and twice as many would have taken it past 1 GiB.
///
/// A request reserves its body's bytes before it reads any: by its `Content-Length` at once, or, for a body sent in
/// chunks, chunk by chunk as they arrive. A reservation the budget cannot grant now waits, in order of arrival, at
/// most ``waitLimit``; then the request is answered `503` with `Retry-After` (``ServiceProblem/uploadsBusy``). A
/// waiting request's body is not read meanwhile: TCP holds the client back, so the wait costs no memory. One
/// request larger than the whole budget reserves all of it: it waits for the others and then runs alone.
///
/// The bytes go back when the request has its answer; a feed kept for its layout's turn after that is bounded
/// apart (`LayoutRunner`: at most one round of layouts' worth).
final class UploadBudget: Sendable {
    /// The bytes the budget holds in all.
    let capacity: Int
    /// The longest a reservation waits for bytes before the request is refused.
    let waitLimit: Duration
    private let sleep: @Sendable (Duration) async throws -> Void
    private let state: Mutex<State>
    private let refusals = Atomic<Int>(0)

    private struct State {
        var available: Int
        var waiters: [Waiter] = []
        var nextToken: UInt64 = 0
    }

    private struct Waiter {
        var token: UInt64
        var bytes: Int
        var continuation: CheckedContinuation<Void, any Error>
    }

    /// Why a reservation was not granted.
    enum Refusal: Error, Equatable {
        /// The budget stayed short for the whole ``UploadBudget/waitLimit``.
        case timedOut
    }

    /// - Parameters:
    ///   - capacity: The bytes in all (at least 1).
    ///   - waitLimit: How long a reservation may wait.
    ///   - sleep: How the wait is timed; tests pass one they end themselves.
    init(
        capacity: Int, waitLimit: Duration,
        sleep: @escaping @Sendable (Duration) async throws -> Void = { try await Task.sleep(for: $0) }
    ) {
        self.capacity = max(1, capacity)
        self.waitLimit = waitLimit
        self.sleep = sleep
        state = Mutex(State(available: max(1, capacity)))
    }

    /// The bytes not reserved now.
    var available: Int { state.withLock { $0.available } }

    /// How many reservations wait now.
    var waiting: Int { state.withLock { $0.waiters.count } }

    /// How many waits ran out since the start.
    var refusedCount: Int { refusals.load(ordering: .relaxed) }

    /// Takes `bytes` (at most the capacity) from the budget, waiting in order of arrival for at most ``waitLimit``.
    /// - Throws: ``Refusal/timedOut`` when the wait ran out, `CancellationError` when the task was cancelled; either
    ///   way nothing stays taken.
    func acquire(_ bytes: Int) async throws {
        let bytes = min(max(0, bytes), capacity)
        guard bytes > 0 else { return }
        let token: UInt64? = state.withLock { state in
            // Nobody overtakes a request that waits: a stream of small bodies would keep a large one waiting for ever.
            if state.waiters.isEmpty && state.available >= bytes {
                state.available -= bytes
                return nil
            }
            state.nextToken += 1
            return state.nextToken
        }
        guard let token else { return }
        guard waitLimit > .zero else {
            refusals.wrappingAdd(1, ordering: .relaxed)
            throw Refusal.timedOut
        }
        let timer = Task { [sleep] in
            guard (try? await sleep(waitLimit)) != nil else { return }
            if self.remove(token, resumingWith: Refusal.timedOut) { self.refusals.wrappingAdd(1, ordering: .relaxed) }
        }
        defer { timer.cancel() }
        try await withTaskCancellationHandler {
            try await withCheckedThrowingContinuation { (continuation: CheckedContinuation<Void, any Error>) in
                state.withLock { state in
                    state.waiters.append(Waiter(token: token, bytes: bytes, continuation: continuation))
                }
                // Granted at once if bytes came back between the first look and now.
                grantWaiting()
                if Task.isCancelled { remove(token, resumingWith: CancellationError()) }
            }
        } onCancel: {
            remove(token, resumingWith: CancellationError())
        }
    }

    /// Gives `bytes` back (what ``acquire(_:)`` took: at most the capacity) and wakes the waiters they let through.
    func release(_ bytes: Int) {
        let bytes = min(max(0, bytes), capacity)
        guard bytes > 0 else { return }
        state.withLock { $0.available += bytes }
        grantWaiting()
    }

    /// Grants the waiters at the head of the line as long as their bytes fit.
    private func grantWaiting() {
        let granted = state.withLock { state -> [CheckedContinuation<Void, any Error>] in
            var granted: [CheckedContinuation<Void, any Error>] = []
            while let first = state.waiters.first, first.bytes <= state.available {
                state.available -= first.bytes
                granted.append(state.waiters.removeFirst().continuation)
            }
            return granted
        }
        for continuation in granted { continuation.resume() }
    }

    /// Ends a wait that is still on (a wait already granted is left alone), and lets those behind it through if
    /// they fit.
    /// - Returns: Whether the wait was still on.
    @discardableResult
    private func remove(_ token: UInt64, resumingWith error: any Error) -> Bool {
        let removed = state.withLock { state -> CheckedContinuation<Void, any Error>? in
            guard let index = state.waiters.firstIndex(where: { $0.token == token }) else { return nil }
            return state.waiters.remove(at: index).continuation
        }
        guard let removed else { return false }
        removed.resume(throwing: error)
        grantWaiting()
        return true
    }

    /// A reservation that grows as a body arrives, given back all at once by ``release()``.
    final class Reservation: Sendable {
        let budget: UploadBudget
        private let held = Mutex(0)

        init(budget: UploadBudget) { self.budget = budget }

        /// The bytes held now.
        var bytes: Int { held.withLock { $0 } }

        /// Holds `total` bytes in all (nothing happens when it holds as many already).
        /// - Throws: As ``UploadBudget/acquire(_:)``; what the reservation held before stays held.
        func grow(to total: Int) async throws {
            let more = min(total, budget.capacity) - bytes
            guard more > 0 else { return }
            try await budget.acquire(more)
            held.withLock { $0 += more }
        }

        /// ``grow(to:)``, with a budget that stayed short answered as ``ServiceProblem/uploadsBusy(retryAfterSeconds:)``.
        func growOrRefuse(to total: Int) async throws {
            do {
                try await grow(to: total)
            } catch is Refusal {
                throw ServiceProblem.uploadsBusy()
            }
        }

        /// Gives every byte back; a second call gives nothing.
        func release() {
            let bytes = held.withLock { held in
                defer { held = 0 }
                return held
            }
            budget.release(bytes)
        }
    }

    /// Reads a whole request body within the budget: its `Content-Length` reserved before the first byte is read,
    /// or a body in chunks reserved as it arrives. The bytes stay reserved until `reservation` is released.
    /// - Parameter limit: The largest body accepted.
    /// - Throws: `NIOTooManyBytesError` for a body over `limit` (a 413; nothing is reserved for a declared length
    ///   over it), ``ServiceProblem/uploadsBusy(retryAfterSeconds:)`` when the budget stayed short.
    func collect(_ request: Request, upTo limit: Int, into reservation: Reservation) async throws -> ByteBuffer {
        let declared = request.headers[.contentLength].flatMap { Int($0) }
        if let declared {
            guard declared <= limit else { throw NIOTooManyBytesError(maxBytes: limit) }
            try await reservation.growOrRefuse(to: declared)
        }
        var body = ByteBufferAllocator().buffer(capacity: min(declared ?? 0, limit))
        for try await chunk in request.body {
            let total = body.readableBytes + chunk.readableBytes
            guard total <= limit else { throw NIOTooManyBytesError(maxBytes: limit) }
            if total > reservation.bytes { try await reservation.growOrRefuse(to: total) }
            body.writeImmutableBuffer(chunk)
        }
        return body
    }
}

extension ServiceProblem {
    /// Too many request bodies in memory at once (`--max-upload-bytes-in-flight`): try again in a moment.
    static func uploadsBusy(retryAfterSeconds: Int = 2) -> ServiceProblem {
        var problem = ServiceProblem(
            .serviceUnavailable, "uploads-busy", "Too many uploads at once",
            detail: "the service holds as many request bodies in memory as it may (--max-upload-bytes-in-flight); "
                + "send this one again in \(retryAfterSeconds) s")
        problem.headers[.retryAfter] = "\(retryAfterSeconds)"
        return problem
    }
}
