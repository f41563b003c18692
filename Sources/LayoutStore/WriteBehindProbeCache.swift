import Logging
import ProbeCache
import ServiceLifecycle
import Synchronization

/// The service's probe cache: the store's (``ProbeCache`` in the SQLite file, or the shared PostgreSQL table), with
/// what layouts learn written in batches, and the entries read or written lately kept in memory.
///
/// A layout probes its photos one at a time, so each photo fetched over HTTP was stored in a transaction of its own:
/// 20 feeds of 300 photos made 6,000 commits, each flushed to disk and each waiting for the store's one writer
/// between the pages of the running layouts. Entries now wait in memory until `batchSize` of them are pending or
/// `delay` has passed since the first, and go in one transaction; lookups see them meanwhile. An entry still in
/// memory when the process is killed is lost, which costs one probe later (a cache may forget); a graceful shutdown
/// writes them (this is a `Service` that flushes when the group stops, after the layouts have).
///
/// A layout of a feed laid out before (a subscription's next version) reads the same thousands of entries again: the
/// last `recentLimit` to `2 × recentLimit` sources read or written are answered from memory, in two generations as
/// the text measurer's caches are. An entry is only ever replaced by a newer one for its source (what this instance
/// learnt), so memory holds what the store would answer, or an entry another instance has since replaced: that one is
/// still a probe its HTTP freshness allows using, or one the prober revalidates, as it would any entry.
public final class WriteBehindProbeCache: ProbeCacheStorage, Service {
    private let base: any ProbeCacheStorage
    private let logger: Logger
    private let batchSize: Int
    private let delay: Duration
    private let recentLimit: Int

    private struct State {
        /// Entries not written yet, by source.
        var pending: [String: CachedProbe] = [:]
        /// Entries being written now (lookups still see them until the write ends).
        var writing: [String: CachedProbe] = [:]
        var flushScheduled = false
        /// Entries read or written lately: the newer generation, and the older one it replaced.
        var recent: [String: CachedProbe] = [:]
        var older: [String: CachedProbe] = [:]

        /// What this instance knows of a source without asking the store.
        mutating func known(_ source: String) -> CachedProbe? {
            if let entry = pending[source] ?? writing[source] ?? recent[source] { return entry }
            guard let entry = older.removeValue(forKey: source) else { return nil }
            recent[source] = entry
            return entry
        }

        /// Keeps an entry read from the store unless this instance knows a newer one; returns the one kept.
        mutating func rememberIfUnknown(_ entry: CachedProbe, for source: String, limit: Int) -> CachedProbe {
            if let known = known(source) { return known }
            if limit > 0 { remember(entry, for: source, limit: limit) }
            return entry
        }

        mutating func remember(_ entry: CachedProbe, for source: String, limit: Int) {
            if recent.count >= limit, recent[source] == nil {
                older = recent
                recent = [:]
            }
            recent[source] = entry
        }
    }

    private let state = Mutex(State())

    /// - Parameter recentLimit: Sources kept in memory per generation (0 keeps none).
    public init(
        base: any ProbeCacheStorage, logger: Logger, batchSize: Int = 256, delay: Duration = .milliseconds(200),
        recentLimit: Int = 16_384
    ) {
        self.base = base
        self.logger = logger
        self.batchSize = batchSize
        self.delay = delay
        self.recentLimit = recentLimit
    }

    public func entry(for source: String) async throws(ProbeCacheError) -> CachedProbe? {
        if let known = state.withLock({ $0.known(source) }) { return known }
        guard let read = try await base.entry(for: source) else { return nil }
        // Stored meanwhile by this instance: that entry is the newer one.
        return state.withLock { $0.rememberIfUnknown(read, for: source, limit: recentLimit) }
    }

    public func entries(for sources: [String]) async throws(ProbeCacheError) -> [String: CachedProbe] {
        var found: [String: CachedProbe] = [:]
        let unknown = state.withLock { state in
            sources.filter { source in
                guard let known = state.known(source) else { return true }
                found[source] = known
                return false
            }
        }
        guard !unknown.isEmpty else { return found }
        let read = try await base.entries(for: unknown)
        state.withLock { state in
            for (source, entry) in read {
                // Stored meanwhile by this instance: that entry is the newer one.
                found[source] = state.rememberIfUnknown(entry, for: source, limit: recentLimit)
            }
        }
        return found
    }

    public func store(_ entries: [(source: String, entry: CachedProbe)]) async throws(ProbeCacheError) {
        let (isFull, startsTimer) = state.withLock { state -> (Bool, Bool) in
            for (source, entry) in entries {
                state.pending[source] = entry
                if recentLimit > 0 { state.remember(entry, for: source, limit: recentLimit) }
            }
            let isFull = state.pending.count >= batchSize
            let startsTimer = !isFull && !state.flushScheduled
            if startsTimer { state.flushScheduled = true }
            return (isFull, startsTimer)
        }
        if isFull {
            await flush()
        } else if startsTimer {
            Task {
                try? await Task.sleep(for: delay)
                await self.flush()
            }
        }
    }

    /// Writes every pending entry, in one batch. A failed write is logged and its entries dropped: the cache only
    /// forgets them.
    public func flush() async {
        let batch = state.withLock { state -> [String: CachedProbe] in
            let batch = state.pending
            state.pending = [:]
            state.flushScheduled = false
            state.writing.merge(batch) { _, new in new }
            return batch
        }
        guard !batch.isEmpty else { return }
        do {
            try await base.store(batch.map { (source: $0.key, entry: $0.value) })
        } catch {
            logger.warning("probe cache write failed", metadata: ["entries": "\(batch.count)", "error": "\(error.message)"])
        }
        state.withLock { state in
            for source in batch.keys { state.writing[source] = nil }
        }
    }

    /// Waits for the shutdown, then writes what is pending.
    public func run() async throws {
        try? await gracefulShutdown()
        await flush()
    }
}
