import FeedIngest
import FeedLayout
import Foundation
import HTTPTypes
import LayoutStore
import Logging
import ServiceLifecycle
import Synchronization
import TextMeasure

/// Computes layouts: at most `maximumConcurrentLayouts` at once, the rest waiting in order. Each layout's pages go
/// to the store as they are made, one transaction each, and requests waiting for a page are woken.
///
/// As a `Service` it first resumes the layouts a crash or a shutdown interrupted (their status is still `running`:
/// each continues from its last stored page's cursor), and on graceful shutdown cancels the running ones: what they
/// stored is their checkpoint, and the next start finishes them.
actor LayoutRunner: Service {
    private let store: any LayoutStore
    private let resources: LayoutResources
    private let settings: ServiceSettings
    private let metrics: ServiceMetrics
    private let logger: Logger
    let events = LayoutEvents()
    private var queue: [String] = []
    private var running: [String: Task<Void, Never>] = [:]
    private var isStopping = false
    /// Feeds posted to this process, kept in memory for their layout's turn, so that it need not read them back
    /// from the store; at most one round of layouts' worth (`maximumConcurrentLayouts × maximumFeedBytes`) in all.
    /// A feed beyond that is read from the store when its turn comes, as after a restart.
    private var postedFeeds: [String: [UInt8]] = [:]
    /// The layout each queued new version of a feed may take pages from (``AppendedItemsReuse``), and how its feed
    /// extends that one's when the caller found it.
    private var predecessors: [String: (id: String, match: FeedAppend.Match?)] = [:]

    /// Told of every layout that ends here (done, failed or cancelled): its client's quota counts it no more.
    private let onEnded: @Sendable (String) -> Void

    init(
        store: any LayoutStore, resources: LayoutResources, settings: ServiceSettings, metrics: ServiceMetrics,
        logger: Logger, ended: @escaping @Sendable (String) -> Void = { _ in }
    ) {
        self.onEnded = ended
        self.store = store
        self.resources = resources
        self.settings = settings
        self.metrics = metrics
        self.logger = logger
    }

    /// Queues a layout (once: a layout already queued or running is left alone). `feed`: its feed's bytes, when the
    /// caller has them at hand (just posted). `predecessor`: the layout of the feed's version before, whose pages
    /// this one takes when its feed is that one's with items appended (``AppendedItemsReuse``); a layout resumed
    /// after a restart is computed without. `append`: how `feed` extends the predecessor's, when the caller found
    /// it (``FeedAppend/match(old:new:)``).
    func enqueue(_ id: String, feed: [UInt8]? = nil, predecessor: String? = nil, append: FeedAppend.Match? = nil) {
        guard !isStopping, running[id] == nil, !queue.contains(id) else { return }
        if let predecessor { predecessors[id] = (predecessor, append) }
        if let feed,
            postedFeeds.values.reduce(feed.count, { $0 + $1.count })
                <= settings.maximumConcurrentLayouts * settings.maximumFeedBytes
        {
            postedFeeds[id] = feed
        }
        queue.append(id)
        startWaiting()
    }

    private func startWaiting() {
        while !isStopping, running.count < settings.maximumConcurrentLayouts, !queue.isEmpty {
            let id = queue.removeFirst()
            let feed = postedFeeds.removeValue(forKey: id)
            let predecessor = predecessors.removeValue(forKey: id)
            running[id] = Task {
                await self.compute(id, feed: feed, predecessor: predecessor)
                self.ended(id)
            }
        }
        metrics.setLayoutsRunning(running.count, queued: queue.count)
    }

    /// Whether this process computes the layout now or has it queued.
    func isActive(_ id: String) -> Bool { running[id] != nil || queue.contains(id) }

    /// Stops computing a layout about to be removed: takes it out of the queue, or cancels its computation and
    /// waits until it has ended (its last page is stored whole or not at all).
    /// - Returns: Whether it was queued or running.
    @discardableResult
    func stop(_ id: String) async -> Bool {
        if let position = queue.firstIndex(of: id) {
            queue.remove(at: position)
            postedFeeds[id] = nil
            predecessors[id] = nil
            metrics.setLayoutsRunning(running.count, queued: queue.count)
            return true
        }
        guard let task = running[id] else { return false }
        stoppedForRemoval.insert(id)
        task.cancel()
        await task.value
        stoppedForRemoval.remove(id)
        return true
    }

    /// Layouts ``stop(_:)`` cancelled, until their computation has ended.
    private var stoppedForRemoval: Set<String> = []

    private func isStoppedForRemoval(_ id: String) -> Bool { stoppedForRemoval.contains(id) }

    private func ended(_ id: String) {
        running[id] = nil
        onEnded(id)
        startWaiting()
    }

    func run() async throws {
        for id in try await store.claimableLayouts() {
            logger.info("resuming an interrupted layout", metadata: ["layout": "\(id)"])
            enqueue(id)
        }
        // A shared store: other instances' pages wake this one's waiting requests, and the layouts of an instance
        // that stopped (its lease expired) are taken over.
        let store = self.store
        let events = self.events
        let watcher = Task { await store.watchChanges { id in await events.changed(id) } }
        let takeover = Task { await self.takeOverAbandonedLayouts() }
        try? await gracefulShutdown()
        watcher.cancel()
        takeover.cancel()
        isStopping = true
        for id in queue { onEnded(id) }
        queue.removeAll()
        postedFeeds.removeAll()
        predecessors.removeAll()
        let tasks = Array(running.values)
        for task in tasks { task.cancel() }
        // Cancelled layouts stop at their next window; what they stored is kept, and the next start resumes them.
        for task in tasks { await task.value }
        metrics.setLayoutsRunning(0, queued: 0)
    }

    private func takeOverAbandonedLayouts() async {
        guard let interval = store.takeoverInterval else { return }
        while !Task.isCancelled {
            try? await Task.sleep(for: interval)
            guard !Task.isCancelled, let ids = try? await store.claimableLayouts() else { continue }
            for id in ids where running[id] == nil && !queue.contains(id) {
                logger.info("taking over a layout whose instance stopped", metadata: ["layout": "\(id)"])
                enqueue(id)
            }
        }
    }

    /// Runs a store operation until it succeeds: while the store is unavailable (PostgreSQL restarting), the
    /// layout waits, every second, instead of failing; cancelling the layout ends the wait.
    private nonisolated func patiently<Result: Sendable>(_ operation: () async throws -> Result) async throws -> Result {
        while true {
            do {
                return try await operation()
            } catch let error as StoreError where error.isTransient {
                logger.debug("the store is unavailable; trying again in 1 s")
                try await Task.sleep(for: .seconds(1))
            }
        }
    }

    /// Lays out one stored layout, from its last stored page on, if no other instance computes it. `posted`: its
    /// feed's bytes, when they are still in memory.
    private nonisolated func compute(
        _ id: String, feed posted: [UInt8]?, predecessor: (id: String, match: FeedAppend.Match?)? = nil
    ) async {
        do {
            guard try await patiently({ try await store.claim(id) }) else { return }
            guard var record = try await patiently({ try await store.layout(id) }), record.status == "running" else {
                await store.release(id)
                return
            }
            let feed: [UInt8]? = if let posted { posted } else { try await patiently({ try await store.feed(of: id) }) }
            guard let feed else {
                try await store.failLayout(id, code: "storeDamaged", message: "the stored feed cannot be read")
                return
            }
            let options = try ClientOptions.layoutOptions(stored: record.options, settings: settings)
            let pipeline = try LayoutPipeline(options: options, resources: resources)
            var input = FeedInput.bytes(feed, name: record.feedName, baseURL: record.baseURL)
            if let predecessor,
                let adoption = try await patiently({
                    try await AppendedItemsReuse.adopt(
                        record, feed: feed, predecessor: predecessor.id, match: predecessor.match, pipeline: pipeline,
                        store: store, maximumItems: settings.maximumItems, logger: logger)
                })
            {
                record = adoption.record
                if let resumed = adoption.resumedFeed { input = resumed }
                metrics.versionTookPages(
                    record.parts[0].pageCount, read: adoption.resumedFeed == nil ? .wholeFeed : .fromCursor)
                await events.changed(id)
            }
            // One layout resumes from its last page's cursor. Several (breakpoints) cannot share a cursor: they start
            // again from the beginning, and the pages stored before are kept as they are (the same bytes).
            var resume: String?
            if record.parts.count == 1, let part = record.parts.first, part.pageCount > 0 {
                resume = part.lastCursor
            }
            var itemLimit = ItemLimit(
                maximum: settings.maximumItems, layouts: record.parts.count,
                resumedItems: resume == nil ? 0 : record.itemCount)
            // Pages are stored by a task of their own while the run goes on (``PageStoring``).
            let storing = PageStoring { [store, metrics, events] writes in
                let writes = PageEncoding.compress(writes)
                try await self.patiently { try await store.storePages(writes, layoutId: id) }
                metrics.addItemsLaidOut(writes.reduce(0) { $0 + $1.itemCount })
                await events.changed(id)
            }
            let summary: LayoutSummary
            do {
                summary = try await pipeline.run(input, resume: resume, logger: logger) { page in
                    let write = PageEncoding.write(for: page)
                    guard itemLimit.admits(write) else { return }
                    try await storing.hand(write)
                    if itemLimit.isReached { throw ItemLimit.Reached() }
                }
                try await storing.finish()
            } catch is ItemLimit.Reached {
                try await storing.finish()
                try await patiently { try await store.finishLayout(id, feedWarnings: [ItemLimit.warningCode: 1]) }
                metrics.layoutEnded(failed: false)
                logger.info("layout truncated at --max-items", metadata: ["layout": "\(id)"])
                await events.changed(id)
                return
            } catch {
                // Cancelled (a removal waits for this run to end): nothing more is written. Failed: the pages made
                // before the failure are kept, as they were when each was stored before the next was made.
                if Task.isCancelled { await storing.abandon() } else { try? await storing.finish() }
                throw error
            }
            var feedWarnings: [String: Int] = [:]
            for warning in summary.feedWarnings { feedWarnings[warning.code, default: 0] += 1 }
            try await patiently { try await store.finishLayout(id, feedWarnings: feedWarnings) }
            metrics.layoutEnded(failed: false)
            // Where the run's time went, in milliseconds (probe and measure summed over concurrent tasks; write:
            // encoding the pages and handing them to the store, waiting when it falls behind), as the command's
            // summary line says.
            let times = summary.stageTimes
            func milliseconds(_ duration: Duration) -> String { "\(Int((duration / .milliseconds(1)).rounded()))" }
            logger.info(
                "layout done",
                metadata: [
                    "layout": "\(id)", "items": "\(summary.items)", "pages": "\(summary.pages)",
                    "parse_ms": "\(milliseconds(times.parse))", "probe_ms": "\(milliseconds(times.probe))",
                    "measure_ms": "\(milliseconds(times.measure))", "place_ms": "\(milliseconds(times.place))",
                    "write_ms": "\(milliseconds(times.write))",
                ])
        } catch {
            if Task.isCancelled {
                if await isStoppedForRemoval(id) {
                    logger.info("layout stopped to be removed", metadata: ["layout": "\(id)"])
                } else {
                    logger.info("layout interrupted; it resumes at the next start", metadata: ["layout": "\(id)"])
                }
                await store.release(id)
                return
            }
            if let lost = error as? StoreError, lost.code == .leaseLost {
                logger.warning("layout left to another instance", metadata: ["layout": "\(id)", "reason": "\(lost)"])
                // Stops renewing; the lease is the other instance's, so nothing else changes.
                await store.release(id)
                return
            }
            let (code, message): (String, String) =
                switch error {
                case let error as LayoutError: (error.code.name, error.message)
                case let error as StoreError where error.code == .storageFull:
                    // The message a client reads names no path: the stored pages are whole, and nothing after them
                    // was kept.
                    ("storageFull", "the store's disk is full: the layout stopped after the pages it had stored")
                case let problem as ServiceProblem: ("invalidOptions", problem.detail)
                default: ("internal", "\(error)")
                }
            logger.warning("layout failed", metadata: ["layout": "\(id)", "code": "\(code)", "error": "\(message)"])
            do {
                try await patiently { try await store.failLayout(id, code: code, message: message) }
            } catch {
                logger.error("cannot record a failed layout", metadata: ["layout": "\(id)", "error": "\(error)"])
            }
            metrics.layoutEnded(failed: true)
        }
        await events.changed(id)
    }
}

/// Wakes requests that wait for a layout to change (a new page, the end). Each layout has a version that every
/// change advances; a waiter says which version it last saw, so a change between its look at the store and its
/// wait is never missed.
actor LayoutEvents {
    private var versions: [String: Int] = [:]
    private var waiters: [String: [UUID: CheckedContinuation<Void, Never>]] = [:]

    func version(of id: String) -> Int { versions[id, default: 0] }

    /// A layout changed; `nil`: any may have (every waiter looks at the store again).
    func changed(_ id: String?) {
        guard let id else {
            for id in Array(waiters.keys) { changed(id) }
            return
        }
        versions[id, default: 0] += 1
        if let waiting = waiters.removeValue(forKey: id) {
            for continuation in waiting.values { continuation.resume() }
        }
    }

    /// Returns when the layout changes after `version`, or after `timeout`, whichever is first.
    func wait(for id: String, after version: Int, timeout: Duration) async {
        guard versions[id, default: 0] == version, timeout > .zero else { return }
        let token = UUID()
        let timer = Task {
            try? await Task.sleep(for: timeout)
            self.resume(id, token)
        }
        await withTaskCancellationHandler {
            await withCheckedContinuation { continuation in
                waiters[id, default: [:]][token] = continuation
            }
        } onCancel: {
            Task { await self.resume(id, token) }
        }
        timer.cancel()
    }

    private func resume(_ id: String, _ token: UUID) {
        guard let continuation = waiters[id]?.removeValue(forKey: token) else { return }
        if waiters[id]?.isEmpty == true { waiters[id] = nil }
        continuation.resume()
    }
}
