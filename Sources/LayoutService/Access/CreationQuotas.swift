import Synchronization

/// How much each client may ask of the service: a rate of creations (a token bucket: `burst` at once, refilled at
/// `perMinute`) and a bound on its layouts queued or running. A client is its key's name, or its address when the
/// service runs without keys.
///
/// Time comes from `now` (seconds on a monotonic clock), so that tests run it on a clock of their own.
final class CreationQuotas: Sendable {
    struct Limits: Sendable, Equatable {
        /// Creations refilled per minute; 0: no rate limit.
        var perMinute: Double
        /// Creations a client may make at once.
        var burst: Int
        /// Layouts of one client queued or running at once; 0: no bound.
        var queuedLayouts: Int
    }

    enum Refusal: Equatable {
        /// Over the rate: try again after this many seconds.
        case rate(retryAfterSeconds: Int)
        /// Too many layouts queued or running already.
        case queued(limit: Int)
    }

    let limits: Limits
    private let now: @Sendable () -> Double
    private struct State {
        var buckets: [String: (tokens: Double, updated: Double)] = [:]
        /// Layouts still queued or running, by client; and their clients, by layout.
        var outstanding: [String: Int] = [:]
        var clientOfLayout: [String: String] = [:]
    }
    private let state = Mutex(State())

    init(limits: Limits, now: @escaping @Sendable () -> Double = CreationQuotas.monotonicSeconds) {
        self.limits = limits
        self.now = now
    }

    /// Takes one creation from `client`'s bucket, or says why not (nothing is taken then).
    func admit(_ client: String) -> Refusal? {
        let time = now()
        return state.withLock { state in
            if limits.queuedLayouts > 0, state.outstanding[client, default: 0] >= limits.queuedLayouts {
                return .queued(limit: limits.queuedLayouts)
            }
            guard limits.perMinute > 0 else { return nil }
            let capacity = Double(max(1, limits.burst))
            let perSecond = limits.perMinute / 60
            var bucket = state.buckets[client] ?? (capacity, time)
            bucket.tokens = min(capacity, bucket.tokens + (time - bucket.updated) * perSecond)
            bucket.updated = time
            defer {
                state.buckets[client] = bucket
                // Full buckets are the default: forgetting them keeps the table as small as the busy clients.
                if bucket.tokens >= capacity { state.buckets[client] = nil }
            }
            guard bucket.tokens >= 1 else {
                let wait = (1 - bucket.tokens) / perSecond
                return .rate(retryAfterSeconds: max(1, Int(wait.rounded(.up))))
            }
            bucket.tokens -= 1
            return nil
        }
    }

    /// Gives back a creation that was admitted but made nothing new (the layout existed already).
    func refund(_ client: String) {
        guard limits.perMinute > 0 else { return }
        let time = now()
        state.withLock { state in
            guard var bucket = state.buckets[client] else { return }
            bucket.tokens += 1
            bucket.updated = max(bucket.updated, time)
            state.buckets[client] = bucket.tokens >= Double(max(1, limits.burst)) ? nil : bucket
        }
    }

    /// A layout of `client`'s was queued.
    func layoutQueued(_ id: String, client: String) {
        state.withLock { state in
            guard state.clientOfLayout[id] == nil else { return }
            state.clientOfLayout[id] = client
            state.outstanding[client, default: 0] += 1
        }
    }

    /// A layout ended (done, failed, or cancelled): it no longer counts against its client.
    func layoutEnded(_ id: String) {
        state.withLock { state in
            guard let client = state.clientOfLayout.removeValue(forKey: id) else { return }
            let left = state.outstanding[client, default: 1] - 1
            state.outstanding[client] = left > 0 ? left : nil
        }
    }

    func outstanding(_ client: String) -> Int { state.withLock { $0.outstanding[client, default: 0] } }

    @Sendable static func monotonicSeconds() -> Double {
        let elapsed = ContinuousClock.now - start
        return Double(elapsed.components.seconds) + Double(elapsed.components.attoseconds) * 1e-18
    }
    private static let start = ContinuousClock.now
}
