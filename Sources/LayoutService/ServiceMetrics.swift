import Prometheus
import Synchronization

/// What `/metrics` reports, in Prometheus' text format: requests by route and status, request latency, layouts
/// running and queued, items laid out (a rate over it is items per second), and probe cache hits.
///
/// Kept in a registry of the service's own rather than swift-metrics' global one: a library bootstraps nothing
/// global, and two services in one process (the tests) keep their counts apart.
final class ServiceMetrics: Sendable {
    let registry = PrometheusCollectorRegistry()
    private let latency: Mutex<[String: DurationHistogram]> = Mutex([:])
    private let requests: Mutex<[String: Counter]> = Mutex([:])
    private let layoutsRunning: Gauge
    private let layoutsQueued: Gauge
    private let itemsLaidOut: Counter
    private let layoutsDone: Counter
    private let layoutsFailed: Counter
    private let probeCacheHits: Counter
    private let probes: Counter
    private let lastProbeCounts = Mutex((hits: 0, probes: 0))

    static let latencyBuckets: [Duration] = [
        .microseconds(250), .microseconds(500), .milliseconds(1), .milliseconds(2), .milliseconds(5),
        .milliseconds(10), .milliseconds(25), .milliseconds(50), .milliseconds(100), .milliseconds(250),
        .milliseconds(500), .seconds(1), .seconds(2.5), .seconds(5), .seconds(10),
    ]

    init() {
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
    }

    /// Records one answered request: its route pattern (not its path: ids would make every series new), status and
    /// time.
    func recordRequest(method: String, route: String, status: Int, duration: Duration) {
        let key = method + " " + route + " " + String(status)
        let counter = requests.withLock { counters in
            if let known = counters[key] { return known }
            let made = registry.makeCounter(
                name: "feedlayout_http_requests_total",
                labels: [("method", method), ("route", route), ("status", String(status))],
                help: "HTTP requests answered.")
            counters[key] = made
            return made
        }
        counter.increment()
        let histogram = latency.withLock { histograms in
            let key = method + " " + route
            if let known = histograms[key] { return known }
            let made = registry.makeDurationHistogram(
                name: "feedlayout_http_request_duration_seconds", labels: [("method", method), ("route", route)],
                buckets: Self.latencyBuckets, help: "Time from a request's head to its response.")
            histograms[key] = made
            return made
        }
        histogram.record(duration)
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

    /// Brings the probe counters up to the shared prober's totals.
    func syncProbeCounts(hits: Int, probes total: Int) {
        let (newHits, newProbes) = lastProbeCounts.withLock { last -> (Int, Int) in
            defer { last = (hits, total) }
            return (hits - last.hits, total - last.probes)
        }
        if newHits > 0 { probeCacheHits.increment(by: Int64(newHits)) }
        if newProbes > 0 { probes.increment(by: Int64(newProbes)) }
    }

    /// The text `/metrics` answers with.
    func exposition() -> [UInt8] { registry.emitToBuffer() }
}
