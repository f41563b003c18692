import Foundation
import LayoutStore
import Logging
import ServiceLifecycle

/// Keeps the store within its bounds (`--max-store-bytes`, `--keep-days`) by removing whole layouts, least recently
/// read first, and writes the layouts' reads (``LayoutReads``) to the store; every `interval` on `clock`, and the
/// reads once more when the service stops.
///
/// A pass first writes the pending reads (so the order is today's), then walks the layouts that may go, `done` and
/// `failed` ones only (``LayoutStore/removableLayouts(limit:)``: never one being computed, on this instance or another
/// sharing the store), oldest read first: each goes while it was last read (or, never read, created) before now minus
/// the keep duration, or while the store holds more than its byte bound. A layout ``isProtected`` says must stay is
/// passed over. Each removal is ``RouteHandlers/removeLayout(_:)``'s, as for `DELETE /v1/layouts/{id}`: one
/// transaction in the store, then the service's memory.
struct StoreEvictor: Service {
    let store: any LayoutStore
    let reads: LayoutReads
    let metrics: ServiceMetrics
    /// `--max-store-bytes`: the most ``StoreUsage/bytes`` may be after a pass; `nil`: no bound.
    let maximumBytes: Int?
    /// `--keep-days`: how long a layout is kept after it was last read; `nil`: for good.
    let keepDuration: Duration?
    let interval: Duration
    let clock: any ServiceClock
    let logger: Logger
    /// Whether a layout must stay whatever its age and the store's size: one this instance computes or has queued
    /// (the store's list has only `done` and `failed` layouts; this closes the gap of one that is started again).
    /// Subscriptions (a later issue) add here: never a subscription's latest version.
    let isProtected: @Sendable (String) async -> Bool
    /// Removes a layout from the store and the service's memory; `false` when it was gone already.
    let remove: @Sendable (String) async throws -> Bool
    /// Lets go of what this instance holds in memory of a layout another instance sharing the store removed (`nil`:
    /// any may have been, while the store's notifications were interrupted).
    let forgetRemoved: @Sendable (String?) async -> Void

    /// Layouts fetched from the store at a time.
    static let batchSize = 256

    /// What one pass removed, and the store's usage after it.
    struct Pass: Sendable, Equatable {
        var removedForAge: [String] = []
        var removedForSize: [String] = []
        var usage: StoreUsage?
    }

    func run() async throws {
        // With a shared store, what another instance removes leaves this one's memory too (its pages would
        // otherwise still be answered from it).
        let store = self.store
        let forgetRemoved = self.forgetRemoved
        let watcher = Task { await store.watchRemovals(forgetRemoved) }
        defer { watcher.cancel() }
        try? await cancelWhenGracefulShutdown { [self] in
            while true {
                try await clock.sleep(for: interval)
                await pass()
            }
        }
        // The reads since the last pass, before the service stops.
        await reads.flush(to: store, at: clock.now, logger: logger)
    }

    /// Writes the pending reads and removes what the bounds say must go.
    @discardableResult
    func pass() async -> Pass {
        let now = clock.now
        await reads.flush(to: store, at: now, logger: logger)
        var pass = Pass()
        do {
            var usage = try await store.usage()
            if maximumBytes != nil || keepDuration != nil {
                let cutoff = keepDuration.map { now.microsecondsSince1970 - Self.microseconds($0) }
                var passedOver: Set<String> = []
                scan: while true {
                    let limit = passedOver.count + Self.batchSize
                    let batch = try await store.removableLayouts(limit: limit)
                    for layout in batch where !passedOver.contains(layout.id) {
                        let lastUsed = layout.lastReadMicroseconds ?? layout.createdMicroseconds
                        let tooOld = cutoff.map { lastUsed < $0 } ?? false
                        let overBound = maximumBytes.map { usage.bytes > $0 } ?? false
                        guard tooOld || overBound else { break scan }
                        if await isProtected(layout.id) {
                            passedOver.insert(layout.id)
                            continue
                        }
                        guard try await remove(layout.id) else { continue }
                        usage.bytes -= layout.bytes
                        usage.layoutsByStatus[layout.status, default: 1] -= 1
                        let reason = tooOld ? "age" : "size"
                        if tooOld {
                            pass.removedForAge.append(layout.id)
                        } else {
                            pass.removedForSize.append(layout.id)
                        }
                        metrics.layoutEvicted(reason: reason)
                        logger.info(
                            "layout evicted",
                            metadata: ["layout": "\(layout.id)", "reason": "\(reason)", "bytes": "\(layout.bytes)"])
                    }
                    if batch.count < limit { break }
                }
                usage = try await store.usage()
            }
            metrics.setStoreUsage(usage)
            pass.usage = usage
        } catch {
            logger.warning("cannot keep the store within its bounds this time", metadata: ["error": "\(error)"])
        }
        return pass
    }

    static func microseconds(_ duration: Duration) -> Int64 {
        let (seconds, attoseconds) = duration.components
        return seconds * 1_000_000 + attoseconds / 1_000_000_000_000
    }
}

extension LayoutServer {
    /// The service's evictor, on its settings' bounds and clock. It stops before the runner (the group stops
    /// services in reverse order), after the HTTP server: the last reads are written once no more come.
    var storeEvictor: StoreEvictor {
        let handlers = self.handlers
        let runner = handlers.runner
        return StoreEvictor(
            store: handlers.store, reads: handlers.pageCache.reads, metrics: handlers.metrics,
            maximumBytes: settings.maximumStoreBytes, keepDuration: settings.keepDuration,
            interval: settings.storeCheckInterval, clock: settings.clock, logger: logger,
            // A live subscription's newest versions stay (Feeds/RouteHandlers+Feeds).
            isProtected: { id in
                if await runner.isActive(id) { return true }
                return await handlers.isKeptBySubscription(id)
            },
            remove: { id in try await handlers.removeLayout(id) },
            forgetRemoved: { id in
                guard let id else { return handlers.pageCache.removeAll() }
                handlers.forget(id)
                await runner.events.changed(id)
            })
    }
}
