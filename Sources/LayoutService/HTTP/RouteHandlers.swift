import ByteTools
import FeedIngest
import FeedLayout
import Foundation
import HTTPTypes
import Hummingbird
import HummingbirdCore
import LayoutStore
import Logging
import NIOCore
import RemoteFetch
import Synchronization
import TextMeasure
import WaterfallLayout

/// The handlers of the service's routes: layouts are posted, computed by ``LayoutRunner`` into ``LayoutStore``, and
/// served page by page (by index or by cursor), by viewport and by scroll position.
///
/// Pages are served as stored (gzipped), or inflated to the bytes `feedlayout layout` writes, with a strong entity
/// tag, from a bounded cache of recent pages in memory.
final class RouteHandlers: Sendable {
    let settings: ServiceSettings
    let store: any LayoutStore
    let runner: LayoutRunner
    let resources: LayoutResources
    let metrics: ServiceMetrics
    /// Each client's rate of creations and bound on queued layouts.
    let quotas: CreationQuotas
    let logger: Logger
    /// Pages in memory, ready to send; `PageFastPathHandler` answers from it too.
    let pageCache = PageCache(byteLimit: 256 * 1024 * 1024)
    let indexes = LayoutIndexes()
    /// The web client's files, and the style sheets of the layouts it shows.
    let client: ClientFiles
    let styles = ClientStyles()
    /// Set when graceful shutdown begins: `/healthz` says so, and new layouts are refused.
    let isStopping = Atomic<Bool>(false)
    /// Request bodies and fetched feeds in memory at once (`--max-upload-bytes-in-flight`).
    let uploadBudget: UploadBudget
    /// Connections open at once (`--max-connections`); its handler goes first in every connection's pipeline.
    let connections: ConnectionLimit
    /// Wakes ``FeedRefresher`` (a new subscription is fetched at once).
    let refreshWakes = WakeSignal()

    init(
        settings: ServiceSettings, store: any LayoutStore, runner: LayoutRunner, resources: LayoutResources,
        metrics: ServiceMetrics, quotas: CreationQuotas, client: ClientFiles, logger: Logger
    ) {
        self.quotas = quotas
        self.client = client
        self.settings = settings
        self.store = store
        self.runner = runner
        self.resources = resources
        self.metrics = metrics
        self.logger = logger
        uploadBudget = UploadBudget(
            capacity: settings.maximumUploadBytesInFlight, waitLimit: settings.uploadWaitLimit)
        connections = ConnectionLimit(maximum: settings.maximumConnections, logger: logger)
    }

    // MARK: POST /v1/layouts

    func createLayout(_ request: Request, context: ServiceRequestContext) async throws -> Response {
        guard !isStopping.load(ordering: .relaxed) else { throw Self.stopping }
        // Before the body is read: a client over its quota costs no more than this.
        try admit(context)
        // The body, and the feed fetched for it, stay within the budget until the answer (UploadBudget).
        let reservation = UploadBudget.Reservation(budget: uploadBudget)
        defer { reservation.release() }
        // JSON escaping makes a body longer than the feed in it: the feed's own size is checked once decoded. The
        // body's buffer goes with this statement.
        let layoutRequest = try LayoutRequest(
            body: [UInt8](
                buffer: try await uploadBudget.collect(
                    request, upTo: settings.maximumFeedBytes + settings.maximumFeedBytes / 8 + 65_536,
                    into: reservation)))
        let options = try checkedOptions(layoutRequest.options)
        let (feed, name, base) = try await feedBytes(of: layoutRequest.feed, reservation: reservation)
        guard feed.count <= settings.maximumFeedBytes else { throw feedTooLarge(feed.count) }
        if let reason = FeedReader.notAFeedReason(firstBytes: feed.prefix(64 * 1024)) {
            throw ServiceProblem(
                .unprocessableContent, "not-a-feed", "Not a feed", detail: "\(name): \(reason)", field: "feed")
        }
        let (id, isNew) = try await startLayout(
            feed: feed, name: name, base: base, options: options, predecessor: nil,
            beforeQueueing: { quotas.layoutQueued($0, client: context.client) })
        if !isNew { quotas.refund(context.client) }
        var response = try await layoutResponse(id)
        response.status = isNew ? .accepted : .ok
        response.headers[.location] = "/v1/layouts/" + id
        return response
    }

    /// The id of a layout: a digest of what decides its pages (options and font files, the feed's bytes, the URL its
    /// references resolve against), so the same request gives the same id in every process and on every machine
    /// with the same fonts.
    /// - Parameter feedDigest: `SHA256.hexDigest(feed)` when the caller has it (a refresh compares it with the last
    ///   version's): a large feed is digested once.
    static func layoutID(identity: String, feed: [UInt8], feedDigest: String? = nil, base: String?) -> String {
        let text = "feedlayout.layout/1\n" + identity + "base=" + (base ?? "-") + "\nfeed=sha256:"
            + (feedDigest ?? SHA256.hexDigest(feed)) + "\n"
        return String(SHA256.hexDigest(Array(text.utf8)).prefix(32))
    }

    /// The feed's bytes, its name and its base: posted text as it is; a URL fetched now (its final URL after
    /// redirects is the base), with the HTTP client's address policy, timeouts and the size limit.
    private func feedBytes(
        of feed: LayoutRequest.Feed, reservation: UploadBudget.Reservation
    ) async throws -> ([UInt8], String, String?) {
        switch feed {
        case .text(let text, let baseURL):
            return (Array(text.utf8), baseURL ?? "feedText", baseURL)
        case .url(let url):
            do {
                let (body, resource) = try await resources.fetcher.streamBody(
                    url, maximumBytes: settings.maximumFeedBytes, boundedInTotal: false)
                // Room for the announced size at once: growing by doubling copied a large feed several times over.
                let announced = min(resource.totalSize ?? 0, settings.maximumFeedBytes)
                try await reservation.growOrRefuse(to: announced)
                let bytes = try await body.collected(capacity: announced) { try await reservation.growOrRefuse(to: $0) }
                return (bytes, url, resource.finalURL)
            } catch let error as RemoteFetchError {
                switch error.code {
                case .tooLarge: throw feedTooLarge(nil)
                case .privateAddress:
                    throw ServiceProblem(
                        .unprocessableContent, "address-refused", "Feed address refused",
                        detail: error.message + " (the service was started without --allow-private-network)",
                        field: "feed")
                case .invalidURL, .unsupportedScheme:
                    throw ServiceProblem.invalidRequest(error.message, field: "feed")
                default:
                    throw ServiceProblem(
                        .unprocessableContent, "feed-unreachable", "Feed unreachable", detail: error.message,
                        field: "feed")
                }
            }
        }
    }

    private func feedTooLarge(_ size: Int?) -> ServiceProblem {
        ServiceProblem(
            .contentTooLarge, "feed-too-large", "Feed too large",
            detail: "the feed is larger than the service's limit of \(settings.maximumFeedBytes) bytes"
                + (size.map { " (\($0) bytes)" } ?? ""), field: "feed")
    }

    static let stopping: ServiceProblem = {
        var problem = ServiceProblem(
            .serviceUnavailable, "unavailable", "Service stopping", detail: "the service is shutting down; try again")
        problem.headers[.retryAfter] = "5"
        return problem
    }()

    // MARK: GET /v1/layouts/{id}

    func layout(_ request: Request, context: some RequestContext) async throws -> Response {
        try await layoutResponse(try Self.layoutID(context))
    }

    private func layoutResponse(_ id: String) async throws -> Response {
        guard let record = try await store.layout(id) else { throw ServiceProblem.notFound("no layout \(id)") }
        pageCache.reads.mark(id)
        var json = JSONWriter()
        json.beginObject()
        json.field("id", id)
        json.field("status", record.status)
        json.field("items", record.itemCount)
        json.field("pages", record.parts.reduce(0) { $0 + $1.pageCount })
        json.key("warnings")
        json.beginObject()
        for (code, count) in record.warnings.sorted(by: { $0.key < $1.key }) {
            json.key(text: code)
            json.int(count)
        }
        json.endObject()
        if let code = record.errorCode {
            json.key("error")
            json.beginObject()
            json.field("code", code)
            json.field("message", record.errorMessage ?? "")
            json.endObject()
        }
        json.key("layouts")
        json.beginArray()
        for part in record.parts {
            json.beginObject()
            json.field("index", part.layoutIndex)
            json.field("width", part.width)
            json.field("columns", part.columns)
            json.field("pages", part.pageCount)
            json.field("contentHeight", part.contentHeight)
            json.endObject()
        }
        json.endArray()
        json.key("links")
        json.beginObject()
        json.field("self", "/v1/layouts/" + id)
        json.field("pages", "/v1/layouts/" + id + "/pages/0")
        json.endObject()
        json.endObject()
        return Self.json(json.takeBytes(), cacheControl: "no-cache")
    }

    // MARK: Pages

    func page(_ request: Request, context: some RequestContext) async throws -> Response {
        let id = try Self.layoutID(context)
        guard let index = context.parameters.get("index", as: Int.self), index >= 0 else {
            throw ServiceProblem.invalidRequest("the page index is a whole number from 0", field: "index")
        }
        let query = request.uri.queryParameters
        let layoutIndex = try Self.integer(query, "layout", default: 0, in: QueryBounds.layoutIndices)
        let wait = try Self.integer(query, "wait", default: 10, in: 0...settings.maximumWait)
        return try await servePage(
            id: id, layoutIndex: layoutIndex, pageIndex: index, wait: .seconds(wait), request: request)
    }

    func pageAfterCursor(_ request: Request, context: some RequestContext) async throws -> Response {
        let query = request.uri.queryParameters
        guard let cursor = query["cursor"].map(String.init), !cursor.isEmpty else {
            throw ServiceProblem.invalidRequest("give the cursor of a page: ?cursor=…", field: "cursor")
        }
        let layoutId = query["layout"].map(String.init)
        let wait = try Self.integer(query, "wait", default: 10, in: 0...settings.maximumWait)
        // The cursor is only looked up among stored pages: the service never lays out from a state a client sends.
        guard let found = try await store.pageWithCursor(cursor, layoutId: layoutId) else {
            throw ServiceProblem.notFound("no stored page has this cursor; it names no layout of this service")
        }
        return try await servePage(
            id: found.id, layoutIndex: found.layoutIndex, pageIndex: found.pageIndex + 1, wait: .seconds(wait),
            request: request)
    }

    /// A stored page, waiting up to `wait` for one that is still being made.
    private func servePage(
        id: String, layoutIndex: Int, pageIndex: Int, wait: Duration, request: Request
    ) async throws -> Response {
        let gzip = Self.acceptsGzip(request.headers[.acceptEncoding])
        let key = PageCache.Key(id: id, layoutIndex: layoutIndex, pageIndex: pageIndex, gzip: gzip)
        // The common case first: a page in memory, with no store and no waiting.
        if let cached = pageCache[key] {
            pageCache.reads.mark(id)
            return Self.pageResponse(cached, request: request)
        }
        let deadline = ContinuousClock.now + wait
        while true {
            let version = await runner.events.version(of: id)
            if let entry = try await storedPage(key) {
                pageCache.reads.mark(id)
                return Self.pageResponse(entry, request: request)
            }
            guard let record = try await store.layout(id) else { throw ServiceProblem.notFound("no layout \(id)") }
            guard layoutIndex < record.parts.count else {
                throw ServiceProblem.notFound(
                    "layout \(id) has \(record.parts.count) layouts; ?layout=\(layoutIndex) is past them", field: "layout")
            }
            guard record.status == "running" else {
                // The layout may have stored the page and ended between the two looks: look again.
                if pageIndex < record.parts[layoutIndex].pageCount { continue }
                throw ServiceProblem.notFound(
                    "layout \(id) is \(record.status) with \(record.parts[layoutIndex].pageCount) pages; page \(pageIndex) is past its end")
            }
            let remaining = deadline - ContinuousClock.now
            guard remaining > .zero else {
                throw ServiceProblem(
                    .notFound, "page-not-ready", "Page not made yet",
                    detail: "page \(pageIndex) of layout \(id) is not made yet; ask again (or wait longer with ?wait=)",
                    layoutStatus: "running")
            }
            await runner.events.wait(for: id, after: version, timeout: remaining)
        }
    }

    /// A stored page in the form `key` names, from memory, or read from the store and then kept in memory (the
    /// plain form is inflated from the stored gzip once, not for every request that needs it).
    private func storedPage(_ key: PageCache.Key) async throws -> PageCache.Entry? {
        if let cached = pageCache[key] { return cached }
        let removals = pageCache.removalCount
        guard let stored = try await store.page(key.id, layoutIndex: key.layoutIndex, pageIndex: key.pageIndex, gzip: key.gzip)
        else { return nil }
        var body = ByteBufferAllocator().buffer(capacity: stored.count)
        body.writeBytes(stored)
        let entry = PageCache.Entry(
            body: body,
            entityTag: PageEncoding.entityTag(
                id: key.id, layoutIndex: key.layoutIndex, pageIndex: key.pageIndex, gzip: key.gzip),
            isGzip: key.gzip)
        pageCache.insert(entry, for: key, unlessRemovedSince: removals)
        return entry
    }

    /// The JSON of these pins, exactly as their pages hold them, in the order given: sliced out of the pages (each
    /// read once per request, through the page cache; a stored page never changes).
    private func pinJSON(_ id: String, layoutIndex: Int, pins: [PinRecord]) async throws -> [[UInt8]] {
        var pages: [Int: ByteBuffer] = [:]
        var result: [[UInt8]] = []
        for pin in pins {
            if pages[pin.pageIndex] == nil {
                pages[pin.pageIndex] = try await storedPage(
                    PageCache.Key(id: id, layoutIndex: layoutIndex, pageIndex: pin.pageIndex, gzip: false))?.body
            }
            guard let page = pages[pin.pageIndex],
                let json = page.getBytes(at: page.readerIndex + pin.jsonOffset, length: pin.jsonLength)
            else { continue }
            result.append(json)
        }
        return result
    }

    static func pageResponse(_ page: PageCache.Entry, request: Request) -> Response {
        let answer = page.answer(ifNoneMatch: request.headers[.ifNoneMatch])
        return Response(
            status: answer.status, headers: answer.fields, body: answer.body.map { ResponseBody(byteBuffer: $0) } ?? .init())
    }

    /// Whether `Accept-Encoding` accepts gzip (`q=0` refuses it).
    static func acceptsGzip(_ header: String?) -> Bool {
        guard let header, header.utf8.count < 1024 else { return false }
        // The common headers ("gzip", "gzip, deflate, br") decide without splitting anything.
        if !header.contains(";") { return header.contains("gzip") || header.contains("*") }
        for part in header.split(separator: ",") {
            let fields = part.split(separator: ";").map { $0.trimmingCharacters(in: .whitespaces).lowercased() }
            guard let coding = fields.first, ["gzip", "x-gzip", "*"].contains(coding) else { continue }
            let quality = fields.dropFirst().first { $0.hasPrefix("q=") }.flatMap { Double($0.dropFirst(2)) } ?? 1
            if quality > 0 { return true }
        }
        return false
    }

    // MARK: Viewport and snapping

    func items(_ request: Request, context: some RequestContext) async throws -> Response {
        let id = try Self.layoutID(context)
        let query = request.uri.queryParameters
        let layoutIndex = try Self.integer(query, "layout", default: 0, in: QueryBounds.layoutIndices)
        let x = try Self.number(query, "x", default: nil)
        let y = try Self.number(query, "y", default: nil)
        let width = try Self.number(query, "width", default: nil)
        let height = try Self.number(query, "height", default: nil)
        guard width >= 0, height >= 0 else {
            throw ServiceProblem.invalidRequest("width and height are 0 or more", field: width < 0 ? "width" : "height")
        }
        let index = try await index(id: id, layoutIndex: layoutIndex)
        // CSS pixels to the device pixels frames are kept in, rounded outwards so no touching pin is missed.
        let scale = index.scale
        let left = (x * scale).rounded(.down)
        let top = (y * scale).rounded(.down)
        let right = ((x + width) * scale).rounded(.up)
        let bottom = ((y + height) * scale).rounded(.up)
        let limit = Double(WaterfallLimits.maximumCoordinate)
        func clamp(_ value: Double) -> Int { Int(max(-limit, min(limit, value))) }
        let rect = DeviceRect(
            x: clamp(left), y: clamp(top), width: clamp(right) - clamp(left), height: clamp(bottom) - clamp(top))
        let found = index.items(intersecting: rect).compactMap(index.pin(forItem:))
        guard found.count <= settings.maximumItemsPerQuery else {
            throw ServiceProblem.invalidRequest(
                "the rectangle holds \(found.count) pins; ask for at most \(settings.maximumItemsPerQuery) at a time "
                    + "(a smaller rectangle, a viewport or two high)", field: "height")
        }
        let pins = try await pinJSON(id, layoutIndex: layoutIndex, pins: found)
        var body: [UInt8] = Array(#"{"items":["#.utf8)
        for (position, pin) in pins.enumerated() {
            if position > 0 { body.append(UInt8(ascii: ",")) }
            body += pin
        }
        body += Array("]}\n".utf8)
        return Self.json(body, cacheControl: index.isComplete ? "public, max-age=31536000, immutable" : "no-cache")
    }

    func snap(_ request: Request, context: some RequestContext) async throws -> Response {
        let id = try Self.layoutID(context)
        let query = request.uri.queryParameters
        let layoutIndex = try Self.integer(query, "layout", default: 0, in: QueryBounds.layoutIndices)
        let offset = try Self.number(query, "offset", default: nil)
        let directionText = query["direction"].map(String.init) ?? "nearest"
        guard let direction = SnapDirection(rawValue: directionText) else {
            throw ServiceProblem.invalidRequest("direction is forward, backward or nearest", field: "direction")
        }
        let index = try await index(id: id, layoutIndex: layoutIndex)
        guard let target = index.snap(offset * index.scale, direction: direction) else {
            throw ServiceProblem.notFound("layout \(id) has no pins yet")
        }
        var json = JSONWriter()
        json.beginObject()
        json.field("offset", Double(target.offset) / index.scale)
        json.field("index", target.item)
        json.endObject()
        json.appendRaw("\n")
        return Self.json(json.takeBytes(), cacheControl: index.isComplete ? "public, max-age=31536000, immutable" : "no-cache")
    }

    /// The pin index of a layout, brought up to the pages stored so far.
    private func index(id: String, layoutIndex: Int) async throws -> PinIndex {
        guard let record = try await store.layout(id) else { throw ServiceProblem.notFound("no layout \(id)") }
        pageCache.reads.mark(id)
        guard layoutIndex < record.parts.count else {
            throw ServiceProblem.notFound(
                "layout \(id) has \(record.parts.count) layouts; ?layout=\(layoutIndex) is past them", field: "layout")
        }
        return try await indexes.index(
            id: id, layoutIndex: layoutIndex, record: record, store: store,
            settings: settings, resources: resources)
    }

    // MARK: Health and metrics

    func health(_ request: Request, context: some RequestContext) async throws -> Response {
        let stopping = isStopping.load(ordering: .relaxed)
        var response = Self.json(
            Array((stopping ? #"{"status":"stopping"}"# : #"{"status":"ok"}"#).utf8) + [0x0A], cacheControl: "no-store")
        if stopping {
            response.status = .serviceUnavailable
            // As every other route's answer while stopping says: another instance, or this one restarted, soon.
            response.headers[.retryAfter] = Self.stopping.headers[.retryAfter]
        }
        return response
    }

    func metricsText(_ request: Request, context: some RequestContext) async throws -> Response {
        metrics.syncProbeCounts(hits: resources.probeStatistics.cacheHits, probes: resources.probeStatistics.probes)
        if let usage = try? await store.usage() { metrics.setStoreUsage(usage) }
        metrics.syncBounds(uploads: uploadBudget, connections: connections)
        return Response(
            status: .ok,
            headers: [.contentType: "text/plain; version=0.0.4; charset=utf-8", .cacheControl: "no-store"],
            body: ResponseBody(byteBuffer: ByteBuffer(bytes: metrics.exposition())))
    }

    // MARK: Helpers

    static func json(_ bytes: [UInt8], cacheControl: String) -> Response {
        Response(
            status: .ok, headers: [.contentType: "application/json", .cacheControl: cacheControl],
            body: ResponseBody(byteBuffer: ByteBuffer(bytes: bytes)))
    }

    /// The `{id}` of the path: 32 lower-case hex digits (anything else names no layout).
    static func layoutID(_ context: some RequestContext) throws -> String {
        let id = context.parameters.get("id") ?? ""
        guard id.utf8.count == 32, id.utf8.allSatisfy({ (0x30...0x39).contains($0) || (0x61...0x66).contains($0) }) else {
            throw ServiceProblem.notFound("no layout \(id.prefix(64)); layout ids are 32 lower-case hex digits")
        }
        return id
    }

    static func integer(
        _ query: FlatDictionary<Substring, Substring>, _ name: String, default value: Int, in range: ClosedRange<Int>
    ) throws -> Int {
        guard let text = query[Substring(name)] else { return value }
        guard let number = Int(text), range.contains(number) else {
            throw ServiceProblem.invalidRequest(
                "\(name) is a whole number from \(range.lowerBound) to \(range.upperBound)", field: name)
        }
        return number
    }

    static func number(_ query: FlatDictionary<Substring, Substring>, _ name: String, default value: Double?) throws -> Double {
        guard let text = query[Substring(name)] else {
            guard let value else { throw ServiceProblem.invalidRequest("\(name) is required", field: name) }
            return value
        }
        guard let number = Double(text), number.isFinite, abs(number) <= QueryBounds.maximumCoordinate else {
            throw ServiceProblem.invalidRequest("\(name) is a number of CSS pixels", field: name)
        }
        return number
    }
}
