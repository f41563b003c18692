import LayoutStore
import Prometheus
import Synchronization

/// What `/metrics` reports, in Prometheus' text format: requests by route and status, request latency, layouts
/// running and queued, items laid out (a rate over it is items per second), and probe cache hits.
///
/// Kept in a registry of the service's own rather than swift-metrics' global one: a library bootstraps nothing
/// global, and two services in one process (the tests) keep their counts apart.
final class ServiceMetrics: Sendable {
    let registry = PrometheusCollectorRegistry()
    /// One route's series, made when the service starts: found per request by one look-up in a dictionary that
    /// never changes, so counting a request takes no lock of ours (the request counter for a status not made
    /// yet is the exception).
    private final class RouteSeries: Sendable {
        let method: String
        let route: String
        let latency: DurationHistogram
        let byStatus: [Int: Counter]
        let otherStatuses = Mutex<[Int: Counter]>([:])

        init(method: String, route: String, latency: DurationHistogram, byStatus: [Int: Counter]) {
            self.method = method
            self.route = route
            self.latency = latency
            self.byStatus = byStatus
        }
    }
    /// By route, then method: a path can answer several methods (`GET` and `POST /v1/layouts`).
    private let routes: [String: [String: RouteSeries]]
    private let unrouted: Mutex<[String: RouteSeries]> = Mutex([:])
    /// The statuses the service answers with, made for every route at start.
    private static let commonStatuses = [200, 202, 304, 400, 404, 405, 408, 413, 422, 500, 503]
    private let layoutsRunning: Gauge
    private let layoutsQueued: Gauge
    private let itemsLaidOut: Counter
    private let layoutsDone: Counter
    private let layoutsFailed: Counter
    private let probeCacheHits: Counter
    private let probes: Counter
    private let lastProbeCounts = Mutex((hits: 0, probes: 0))
    private let pageFastPath: Counter
    /// Requests by key name (`-`: none), made at start for the keys the service knows.
    private let keyRequests: [String: Counter]
    /// Requests refused by the access rules or a quota, by key name and status.
    private let keyRejections = Mutex<[String: Counter]>([:])
    // MARK: The store's size and removals
    private let storeBytes: Gauge
    private let layoutsByStatus: [String: Gauge]
    private let layoutsEvicted: [String: Counter]
    // MARK: Subscriptions
    /// Fetches of subscribed feeds, by what came of them.
    private let feedFetches: [FeedFetchResult: Counter]
    /// Pages new versions took from their predecessors, and how each such version read its feed after them.
    private let pagesTaken: Counter
    private let takenVersionReads: [TakenVersionRead: Counter]
    private let boundMetrics: BoundMetrics

    static let latencyBuckets: [Duration] = [
        .microseconds(250), .microseconds(500), .milliseconds(1), .milliseconds(2), .milliseconds(5),
        .milliseconds(10), .milliseconds(25), .milliseconds(50), .milliseconds(100), .milliseconds(250),
        .milliseconds(500), .seconds(1), .seconds(2.5), .seconds(5), .seconds(10),
    ]

    /// - Parameter routes: The service's routes as the router names them (`/v1/layouts/{id}`), with their method.
    /// - Parameter keyNames: The names of the service's keys, for the per-key series.
    init(routes known: [(method: String, route: String)] = [], keyNames: [String] = []) {
        pageFastPath = registry.makeCounter(
            name: "feedlayout_page_fast_path_total",
            help: "Page requests answered from memory ahead of the HTTP decoder (also counted in the request totals).")
        var keyRequests: [String: Counter] = [:]
        for name in keyNames + ["-"] {
            keyRequests[name] = registry.makeCounter(
                name: "feedlayout_key_requests_total", labels: [("key", name)], help: "Requests by the caller's key.")
        }
        self.keyRequests = keyRequests
        layoutsRunning = registry.makeGauge(name: "feedlayout_layouts_running", help: "Layouts being computed now.")
        layoutsQueued = registry.makeGauge(name: "feedlayout_layouts_queued", help: "Layouts waiting for their turn.")
        itemsLaidOut = registry.makeCounter(
            name: "feedlayout_items_laid_out_total", help: "Items laid out and stored (rate() gives items per second).")
        layoutsDone = registry.makeCounter(
            name: "feedlayout_layouts_finished_total", labels: [("result", "done")], help: "Layouts that ended.")
        layoutsFailed = registry.makeCounter(
            name: "feedlayout_layouts_finished_total", labels: [("result", "failed")], help: "Layouts that ended.")
        probeCacheHits = registry.makeCounter(
            name: "feedlayout_probe_cache_hits_total", help: "Photo probes answered by the probe cache.")
        probes = registry.makeCounter(name: "feedlayout_probes_total", help: "Photo probes, answered by the cache or not.")
        boundMetrics = BoundMetrics(registry)
        storeBytes = registry.makeGauge(
            name: "feedlayout_store_bytes",
            help: "Bytes the stored layouts hold (feeds, gzipped pages, pins), as GET /v1/layouts sizes them.")
        var byStatus: [String: Gauge] = [:]
        for status in ["running", "done", "failed"] {
            byStatus[status] = registry.makeGauge(
                name: "feedlayout_store_layouts", labels: [("status", status)], help: "Layouts in the store, by status.")
        }
        layoutsByStatus = byStatus
        var evicted: [String: Counter] = [:]
        for reason in ["size", "age"] {
            evicted[reason] = registry.makeCounter(
                name: "feedlayout_layouts_evicted_total", labels: [("reason", reason)],
                help: "Layouts the evictor removed: past --max-store-bytes (size) or --keep-days (age).")
        }
        layoutsEvicted = evicted
        var fetches: [FeedFetchResult: Counter] = [:]
        for result in FeedFetchResult.allCases {
            fetches[result] = registry.makeCounter(
                name: "feedlayout_feed_fetches_total", labels: [("result", result.rawValue)],
                help: "Fetches of subscribed feeds: a new version, the same bytes, 304 Not Modified, or failed.")
        }
        feedFetches = fetches
        pagesTaken = registry.makeCounter(
            name: "feedlayout_version_pages_taken_total",
            help: "Pages new versions of feeds took from their predecessors (items appended) instead of laying out.")
        var reads: [TakenVersionRead: Counter] = [:]
        for read in TakenVersionRead.allCases {
            reads[read] = registry.makeCounter(
                name: "feedlayout_version_resumes_total", labels: [("read", read.rawValue)],
                help: "New versions that took their predecessors' pages, by what they read of the feed after them: from "
                    + "the cursor's item on, or the whole feed (its items before the cursor checked, not laid out).")
        }
        takenVersionReads = reads
        var routes: [String: [String: RouteSeries]] = [:]
        for (method, route) in known {
            routes[route, default: [:]][method] = Self.series(registry, method: method, route: route)
        }
        self.routes = routes
    }

    private static func series(_ registry: PrometheusCollectorRegistry, method: String, route: String) -> RouteSeries {
        var byStatus: [Int: Counter] = [:]
        for status in commonStatuses { byStatus[status] = requestCounter(registry, method, route, status) }
        return RouteSeries(
            method: method, route: route,
            latency: registry.makeDurationHistogram(
                name: "feedlayout_http_request_duration_seconds", labels: [("method", method), ("route", route)],
                buckets: latencyBuckets, help: "Time from a request's head to its response."),
            byStatus: byStatus)
    }

    private static func requestCounter(
        _ registry: PrometheusCollectorRegistry, _ method: String, _ route: String, _ status: Int
    ) -> Counter {
        registry.makeCounter(
            name: "feedlayout_http_requests_total",
            labels: [("method", method), ("route", route), ("status", String(status))], help: "HTTP requests answered.")
    }

    /// Records one answered request: its route pattern (not its path: ids would make every series new), status and
    /// time.
    func recordRequest(method: String, route: String, status: Int, duration: Duration) {
        let series: RouteSeries
        if let known = routes[route]?[method] {
            series = known
        } else {
            // An unknown path or method (a 404 or 405): made on first use.
            let key = method + " " + route
            series = unrouted.withLock { unrouted in
                if let made = unrouted[key] { return made }
                let made = Self.series(registry, method: method, route: route)
                unrouted[key] = made
                return made
            }
        }
        let counter =
            series.byStatus[status]
            ?? series.otherStatuses.withLock { counters in
                if let made = counters[status] { return made }
                let made = Self.requestCounter(registry, method, route, status)
                counters[status] = made
                return made
            }
        counter.increment()
        series.latency.record(duration)
    }

    /// A page answered by the fast path.
    func recordFastPathPage() { pageFastPath.increment() }

    /// One request of a service with keys: counted under its key, and as a rejection when the rules or the rate
    /// refused it (401, 403; quotas count their own).
    func recordKeyRequest(key: String?, status: Int) {
        keyRequests[key ?? "-"]?.increment()
        if status == 401 || status == 403 { recordKeyRejection(key: key, status: status) }
    }

    /// A request refused for its key (or its address, without keys: counted under `-`).
    func recordKeyRejection(key: String?, status: Int) {
        let name = key ?? "-"
        let label = name + " " + String(status)
        let counter = keyRejections.withLock { counters in
            if let made = counters[label] { return made }
            let made = registry.makeCounter(
                name: "feedlayout_key_rejections_total", labels: [("key", name), ("status", String(status))],
                help: "Requests refused by the access rules or a quota, by key.")
            counters[label] = made
            return made
        }
        counter.increment()
    }

    func setLayoutsRunning(_ running: Int, queued: Int) {
        layoutsRunning.set(Double(running))
        layoutsQueued.set(Double(queued))
    }

    func addItemsLaidOut(_ count: Int) {
        if count > 0 { itemsLaidOut.increment(by: Int64(count)) }
    }

    func layoutEnded(failed: Bool) {
        (failed ? layoutsFailed : layoutsDone).increment()
    }

    /// What came of fetching a subscribed feed.
    enum FeedFetchResult: String, CaseIterable, Sendable {
        case newVersion = "new-version", unchanged, notModified = "not-modified", failed
    }

    func feedFetched(_ result: FeedFetchResult) {
        feedFetches[result]?.increment()
    }

    enum TakenVersionRead: String, CaseIterable, Sendable {
        case fromCursor = "from-cursor", wholeFeed = "whole-feed"
    }

    /// A new version took `pages` pages from its predecessor and reads its feed as `read` says.
    func versionTookPages(_ pages: Int, read: TakenVersionRead) {
        pagesTaken.increment(by: Int64(pages))
        takenVersionReads[read]?.increment()
    }

    /// The store's size and layouts by status, as last looked at.
    func setStoreUsage(_ usage: StoreUsage) {
        storeBytes.set(Double(usage.bytes))
        for (status, gauge) in layoutsByStatus { gauge.set(Double(usage.layoutsByStatus[status] ?? 0)) }
    }

    /// One layout removed by the evictor, for `reason` (`size` or `age`).
    func layoutEvicted(reason: String) {
        layoutsEvicted[reason]?.increment()
    }

    /// Brings the probe counters up to the shared prober's totals.
    func syncProbeCounts(hits: Int, probes total: Int) {
        let (newHits, newProbes) = lastProbeCounts.withLock { last -> (Int, Int) in
            defer { last = (hits, total) }
            return (hits - last.hits, total - last.probes)
        }
        if newHits > 0 { probeCacheHits.increment(by: Int64(newHits)) }
        if newProbes > 0 { probes.increment(by: Int64(newProbes)) }
    }

    // MARK: Bounded resources

    /// Brings the gauges and counters of the service's bounds up to date (read when `/metrics` is asked for, so
    /// counting costs the request paths nothing more).
    func syncBounds(uploads: UploadBudget, connections: ConnectionLimit) {
        boundMetrics.uploadBytesReserved.set(Double(uploads.capacity - uploads.available))
        boundMetrics.uploadsWaiting.set(Double(uploads.waiting))
        boundMetrics.connectionsOpen.set(Double(connections.openCount))
        boundMetrics.advance(boundMetrics.uploadsRefused, to: uploads.refusedCount, name: "uploads")
        boundMetrics.advance(boundMetrics.connectionsRefused, to: connections.refusedCount, name: "connections")
    }


    /// The text `/metrics` answers with.
    func exposition() -> [UInt8] { registry.emitToBuffer() }
}

/// The series of the service's bounds (`--max-upload-bytes-in-flight`, `--max-connections`).
private final class BoundMetrics: Sendable {
    let uploadBytesReserved: Gauge
    let uploadsWaiting: Gauge
    let uploadsRefused: Counter
    let connectionsOpen: Gauge
    let connectionsRefused: Counter
    private let lastTotals = Mutex<[String: Int]>([:])

    init(_ registry: PrometheusCollectorRegistry) {
        uploadBytesReserved = registry.makeGauge(
            name: "feedlayout_upload_bytes_reserved", help: "Bytes of request bodies and fetched feeds held now.")
        uploadsWaiting = registry.makeGauge(
            name: "feedlayout_uploads_waiting", help: "Posts waiting for room in the upload budget.")
        uploadsRefused = registry.makeCounter(
            name: "feedlayout_uploads_refused_total", help: "Posts answered 503 uploads-busy.")
        connectionsOpen = registry.makeGauge(name: "feedlayout_connections_open", help: "Connections open now.")
        connectionsRefused = registry.makeCounter(
            name: "feedlayout_connections_refused_total", help: "Connections answered 503 too-many-connections.")
    }

    /// Adds to `counter` what `total` grew by since the last look (`name` keeps the totals apart).
    func advance(_ counter: Counter, to total: Int, name: String) {
        let added = lastTotals.withLock { totals -> Int in
            defer { totals[name] = total }
            return total - totals[name, default: 0]
        }
        if added > 0 { counter.increment(by: Int64(added)) }
    }
}
