import Foundation
import Logging
import ProbeCache
import RemoteFetch
import ServiceLifecycle
import Synchronization
import TextMeasure

/// What a process that lays out many feeds holds once and shares between its layouts: one HTTP client (with its
/// connection pool and address policy), one probe cache, one catalog of loaded fonts, and threads of their own
/// for the C work (``LayoutThreadPool``).
///
/// A command-line run needs none of it (``LayoutPipeline`` makes what one run needs); a server makes one, passes it
/// to every ``LayoutPipeline/init(options:resources:)``, and runs it as a `Service` in its service group, which
/// shuts the HTTP client down after the services listed after it have stopped.
public final class LayoutResources: Sendable {
    /// Fetches remote feeds and photos; its configuration's `allowPrivateNetwork` must be the layouts'.
    public let fetcher: RemoteFetcher
    /// Probe results by source; `nil` probes every photo every time.
    public let probeCache: (any ProbeCacheStorage)?
    /// Text measurers by style: a measurer opens its fonts once and keeps its shaping caches warm across layouts.
    public let measurers: TextMeasurerCatalog
    /// Where layouts run (see ``LayoutThreadPool`` for why not on Swift's cooperative pool).
    public let executor: LayoutThreadPool
    /// Photo probes of every layout, and how many the probe cache answered.
    public let probeStatistics = ProbeStatistics()
    /// The clock photos' HTTP freshness in the probe cache is read on (a service's tests move it by hand).
    public let now: @Sendable () -> Date
    let logger: Logger

    /// Makes the shared resources.
    /// - Parameters:
    ///   - fetch: The HTTP client's timeouts, limits and address policy.
    ///   - probeCache: The probe cache every layout reads and fills, or `nil`.
    ///   - threadCount: Threads for layout work (parsing, probing, measuring, placing).
    ///   - logger: Where fetching logs its requests.
    ///   - now: The clock of the probe cache's freshness.
    public init(
        fetch: RemoteFetchConfiguration = RemoteFetchConfiguration(), probeCache: (any ProbeCacheStorage)? = nil,
        threadCount: Int = ProcessInfo.processInfo.activeProcessorCount, logger: Logger,
        now: @escaping @Sendable () -> Date = { Date() }
    ) {
        self.now = now
        fetcher = RemoteFetcher(configuration: fetch, logger: logger)
        self.probeCache = probeCache
        measurers = TextMeasurerCatalog()
        executor = LayoutThreadPool(threadCount: threadCount)
        self.logger = logger
    }

    /// Shuts the HTTP client down and lets the layout threads end. No layout may use the resources afterwards.
    public func shutdown() async throws {
        executor.shutdown()
        try await fetcher.shutdown()
    }
}

extension LayoutResources: Service {
    /// Holds the resources until the service group shuts down, then releases them.
    public func run() async throws {
        try? await gracefulShutdown()
        try await shutdown()
    }
}

/// Counts of photo probes across layouts (a photo a layout already probed once is not counted again).
public final class ProbeStatistics: Sendable {
    private let probeCount = Atomic<Int>(0)
    private let cacheHitCount = Atomic<Int>(0)

    /// Probes made, by the probe cache or by reading the photo.
    public var probes: Int { probeCount.load(ordering: .relaxed) }
    /// Probes the probe cache answered.
    public var cacheHits: Int { cacheHitCount.load(ordering: .relaxed) }

    func record(fromCache: Bool) {
        probeCount.wrappingAdd(1, ordering: .relaxed)
        if fromCache { cacheHitCount.wrappingAdd(1, ordering: .relaxed) }
    }
}
