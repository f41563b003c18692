import Logging
import ProbeCache
import ServiceLifecycle
import Synchronization

/// The service's probe cache: the store's (``ProbeCache`` in the SQLite file, or the shared PostgreSQL table), with
/// what layouts learn written in batches.
///
/// A layout probes its photos one at a time, so each photo fetched over HTTP was stored in a transaction of its own:
/// 20 feeds of 300 photos made 6,000 commits, each flushed to disk and each waiting for the store's one writer
/// between the pages of the running layouts. Entries now wait in memory until `batchSize` of them are pending or
/// `delay` has passed since the first, and go in one transaction; lookups see them meanwhile. An entry still in
/// memory when the process is killed is lost, which costs one probe later (a cache may forget); a graceful shutdown
/// writes them (this is a `Service` that flushes when the group stops, after the layouts have).
public final class WriteBehindProbeCache: ProbeCacheStorage, Service {
    private let base: any ProbeCacheStorage
    private let logger: Logger
    private let batchSize: Int
    private let delay: Duration

    private struct State {
        /// Entries not written yet, by source.
        var pending: [String: CachedProbe] = [:]
        /// Entries being written now (lookups still see them until the write ends).
        var writing: [String: CachedProbe] = [:]
        var flushScheduled = false
    }

    private let state = Mutex(State())

    public init(base: any ProbeCacheStorage, logger: Logger, batchSize: Int = 256, delay: Duration = .milliseconds(200)) {
        self.base = base
        self.logger = logger
        self.batchSize = batchSize
        self.delay = delay
    }

    public func entry(for source: String) async throws(ProbeCacheError) -> CachedProbe? {
        if let unwritten = state.withLock({ $0.pending[source] ?? $0.writing[source] }) { return unwritten }
        return try await base.entry(for: source)
    }

    public func entries(for sources: [String]) async throws(ProbeCacheError) -> [String: CachedProbe] {
        var found = try await base.entries(for: sources)
        state.withLock { state in
            for source in sources {
                if let unwritten = state.pending[source] ?? state.writing[source] { found[source] = unwritten }
            }
        }
        return found
    }

    public func store(_ entries: [(source: String, entry: CachedProbe)]) async throws(ProbeCacheError) {
        let (isFull, startsTimer) = state.withLock { state -> (Bool, Bool) in
            for (source, entry) in entries { state.pending[source] = entry }
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
