import FeedIngest
import FeedLayout
import Foundation
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
    private let store: LayoutStore
    private let resources: LayoutResources
    private let settings: ServiceSettings
    private let metrics: ServiceMetrics
    private let logger: Logger
    let events = LayoutEvents()
    private var queue: [String] = []
    private var running: [String: Task<Void, Never>] = [:]
    private var isStopping = false

    init(store: LayoutStore, resources: LayoutResources, settings: ServiceSettings, metrics: ServiceMetrics, logger: Logger) {
        self.store = store
        self.resources = resources
        self.settings = settings
        self.metrics = metrics
        self.logger = logger
    }

    /// Queues a layout (once: a layout already queued or running is left alone).
    func enqueue(_ id: String) {
        guard !isStopping, running[id] == nil, !queue.contains(id) else { return }
        queue.append(id)
        startWaiting()
    }

    private func startWaiting() {
        while !isStopping, running.count < settings.maximumConcurrentLayouts, !queue.isEmpty {
            let id = queue.removeFirst()
            running[id] = Task {
                await self.compute(id)
                self.ended(id)
            }
        }
        metrics.setLayoutsRunning(running.count, queued: queue.count)
    }

    private func ended(_ id: String) {
        running[id] = nil
        startWaiting()
    }

    func run() async throws {
        for id in try await store.runningLayouts() {
            logger.info("resuming an interrupted layout", metadata: ["layout": "\(id)"])
            enqueue(id)
        }
        try? await gracefulShutdown()
        isStopping = true
        queue.removeAll()
        let tasks = Array(running.values)
        for task in tasks { task.cancel() }
        // Cancelled layouts stop at their next window; what they stored is kept, and the next start resumes them.
        for task in tasks { await task.value }
        metrics.setLayoutsRunning(0, queued: 0)
    }

    /// Lays out one stored layout, from its last stored page on.
    private nonisolated func compute(_ id: String) async {
        do {
            guard let record = try await store.layout(id), record.status == "running" else { return }
            guard let feed = try await store.feed(of: id) else {
                try await store.failLayout(id, code: "storeDamaged", message: "the stored feed cannot be read")
                return
            }
            let options = try ClientOptions.layoutOptions(
                record.arguments, settings: settings)
            let pipeline = try LayoutPipeline(options: options, resources: resources)
            // One layout resumes from its last page's cursor. Several (breakpoints) cannot share a cursor: they start
            // again from the beginning, and the pages stored before are kept as they are (the same bytes).
            var resume: String?
            if record.parts.count == 1, let part = record.parts.first, part.pageCount > 0 {
                resume = part.lastCursor
            }
            let summary = try await pipeline.run(
                .bytes(feed, name: record.feedName, baseURL: record.baseURL), resume: resume, logger: logger
            ) { page in
                let write = PageEncoding.write(for: page)
                try await store.storePage(write, layoutId: id)
                metrics.addItemsLaidOut(write.itemCount)
                await events.changed(id)
            }
            var feedWarnings: [String: Int] = [:]
            for warning in summary.feedWarnings { feedWarnings[warning.code, default: 0] += 1 }
            try await store.finishLayout(id, feedWarnings: feedWarnings)
            metrics.layoutEnded(failed: false)
            logger.info(
                "layout done", metadata: ["layout": "\(id)", "items": "\(summary.items)", "pages": "\(summary.pages)"])
        } catch {
            if Task.isCancelled {
                logger.info("layout interrupted; it resumes at the next start", metadata: ["layout": "\(id)"])
                return
            }
            let (code, message): (String, String) =
                switch error {
                case let error as LayoutError: (error.code.name, error.message)
                case let problem as ServiceProblem: ("invalidOptions", problem.detail)
                default: ("internal", "\(error)")
                }
            logger.warning("layout failed", metadata: ["layout": "\(id)", "code": "\(code)", "error": "\(message)"])
            do {
                try await store.failLayout(id, code: code, message: message)
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

    func changed(_ id: String) {
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
