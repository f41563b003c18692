import FeedLayout
import Foundation
import HTTPTypes
import Hummingbird
import HummingbirdCore
import LayoutStore
import Logging
import NIOCore
import ProbeCache
import RemoteFetch
import ServiceLifecycle
import UnixSignals
import Synchronization

/// `feedlayout serve`: the layout service, assembled and run.
///
/// Services, in the order they start (and the reverse of the order they stop): the shared layout resources (HTTP
/// client, probe cache, fonts, layout threads), the runner that computes layouts, the HTTP server, and a flag that
/// turns `/healthz` to `stopping` the moment shutdown begins. On SIGTERM or SIGINT the server stops accepting and
/// finishes the requests in flight, the runner cancels running layouts (their stored pages are their checkpoint),
/// and the process exits 0.
public struct LayoutServer: Sendable {
    let settings: ServiceSettings
    let logger: Logger
    let handlers: RouteHandlers
    /// The probe cache the layouts use, writing to the store's in batches; flushed when the service stops.
    private let probeCache: WriteBehindProbeCache
    /// What every request is held to, on the router and on the page fast path alike.
    let rules: RequestRules
    private let accessLog: AccessLog?

    /// Opens the store and makes the resources; nothing listens yet.
    /// - Throws: An error whose description names the store and says what to do (another process holds it, it is
    ///   not a store, it cannot be created).
    public init(settings: ServiceSettings, logger: Logger) async throws {
        self.settings = settings
        self.logger = logger
        let (store, storedProbes) = try await LayoutStores.open(
            settings.storePath, leaseDuration: settings.leaseDuration, password: settings.storePassword, logger: logger)
        probeCache = WriteBehindProbeCache(base: storedProbes, logger: logger)
        let resources = LayoutResources(
            fetch: RemoteFetchConfiguration(
                readTimeout: settings.feedReadTimeout, totalTimeout: settings.feedTotalTimeout,
                maximumBytes: settings.maximumFeedBytes, allowPrivateNetwork: settings.allowPrivateNetwork),
            probeCache: probeCache, threadCount: settings.layoutThreads, logger: logger,
            now: { [clock = settings.clock] in clock.now })
        let metrics = ServiceMetrics(
            routes: ServiceRoute.all.map { ($0.method.rawValue, $0.routerPath) },
            keyNames: settings.apiKeys?.keys.map(\.name) ?? [])
        let quotas = CreationQuotas(
            limits: .init(
                perMinute: settings.creationsPerMinute, burst: settings.creationBurst,
                queuedLayouts: settings.maximumQueuedLayouts))
        let runner = LayoutRunner(
            store: store, resources: resources, settings: settings, metrics: metrics, logger: logger,
            ended: { quotas.layoutEnded($0) })
        accessLog = try settings.accessLog.map { try AccessLog(destination: $0, format: settings.logFormat) }
        rules = RequestRules(
            routes: ServiceRoute.all, keys: settings.apiKeys, privateReads: settings.privateReads,
            corsOrigins: settings.corsOrigins, accessLog: accessLog, metrics: metrics)
        handlers = RouteHandlers(
            settings: settings, store: store, runner: runner, resources: resources, metrics: metrics, quotas: quotas,
            client: try ClientFiles(), logger: logger)
    }

    /// Serves until SIGTERM or SIGINT (or the task is cancelled).
    /// - Parameter onListening: Called with the port once the server listens (useful with port 0).
    public func run(onListening: @escaping @Sendable (Int) async -> Void = { _ in }) async throws {
        let router = Router(context: ServiceRequestContext.self)
        router.add(middleware: AccessMiddleware(rules: rules))
        router.add(middleware: ProblemMiddleware(routes: rules.table))
        ServiceRoute.addAll(to: router, handlers: handlers)

        let timeout = TimeAmount(settings.requestTimeout)
        let logger = self.logger
        let rules = self.rules
        let app = Application(
            router: router,
            server: HTTPServerBuilder { responder in
                PageServingHTTP1Channel(
                    http1: HTTP1Channel(
                        responder: responder,
                        // RequestDeadlineHandler is also the idle timeout (a kept-alive connection must send its
                        // next request within it): Hummingbird's own would not see the requests the fast path
                        // answers.
                        configuration: HTTP1Channel.Configuration(
                            additionalChannelHandlers: [
                                RequestDeadlineHandler(deadline: timeout), RouterResponseTracker(),
                            ], idleTimeout: nil)),
                    cache: handlers.pageCache, rules: rules, connections: handlers.connections)
            },
            configuration: ApplicationConfiguration(
                address: .hostname(settings.host, port: settings.port), serverName: "feedlayout"),
            onServerRunning: { channel in
                let port = channel.localAddress?.port ?? 0
                logger.info("feedlayout serve is listening", metadata: ["address": "http://\(settings.host):\(port)"])
                await onListening(port)
            },
            logger: logger)
        let group = ServiceGroup(
            configuration: ServiceGroupConfiguration(
                // Stopped in reverse order: the layouts end before the probes they learnt are written, and the
                // access log is written last.
                services: (accessLog.map { [.init(service: $0)] } ?? []) + [
                    .init(service: handlers.resources), .init(service: probeCache), .init(service: handlers.runner),
                    .init(service: storeEvictor),
                    .init(service: feedRefresher),
                    .init(service: app),
                    .init(service: StoppingFlag(handlers: handlers)),
                ],
                gracefulShutdownSignals: [.sigterm, .sigint], logger: logger))
        defer { handlers.store.close() }
        try await group.run()
    }
}

/// Turns `/healthz` to `stopping` and refuses new layouts as soon as shutdown begins (it is the last service, so
/// it hears of the shutdown first).
private struct StoppingFlag: Service {
    let handlers: RouteHandlers

    func run() async throws {
        try? await gracefulShutdown()
        handlers.isStopping.store(true, ordering: .relaxed)
        // Event streams (GET /v1/feeds/{id}/events) see the flag and end.
        await handlers.runner.events.changed(nil)
    }
}

/// Hummingbird's HTTP/1.1 channel with ``PageFastPathHandler`` in front of its decoder (its own configuration adds
/// handlers after the codec only).
struct PageServingHTTP1Channel: ServerChildChannel {
    typealias Value = HTTP1Channel.Value

    let http1: HTTP1Channel
    let cache: PageCache
    let rules: RequestRules
    /// `--max-connections`: its handler goes first, so a refused connection reaches nothing else.
    let connections: ConnectionLimit

    func setup(channel: any Channel, logger: Logger) -> EventLoopFuture<Value> {
        channel.eventLoop.makeCompletedFuture {
            try channel.pipeline.syncOperations.addHandler(connections.handler())
            try channel.pipeline.syncOperations.addHandler(PageFastPathHandler(cache: cache, rules: rules))
        }.flatMap { http1.setup(channel: channel, logger: logger) }
    }

    func handle(value: Value, logger: Logger) async {
        await http1.handle(value: value, logger: logger)
    }
}
