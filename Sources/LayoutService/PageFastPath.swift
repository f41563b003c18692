import HTTPTypes
import NIOCore
import NIOHTTPTypes

#if canImport(Glibc)
    import Glibc
#endif

/// Answers requests for pages the page cache holds right on the connection's event loop, before the router.
///
/// A stored page is bytes that never change: routing it through Hummingbird's responder costs a Swift task, the
/// middlewares and header building per request, which on two cores held the page route to about 80 % of what the
/// server answers for `/healthz`. Only `GET /v1/layouts/{id}/pages/{index}` with at most `layout` and `wait` in its
/// query, whose page is in memory, is answered here; everything else (a page not in memory, any other route, a
/// malformed path) goes on to the router, which also fills the cache. A request is only answered here while no
/// earlier request of the connection is still with the router, so responses never overtake each other.
final class PageFastPathHandler: ChannelDuplexHandler, RemovableChannelHandler {
    typealias InboundIn = HTTPRequestPart
    typealias InboundOut = HTTPRequestPart
    typealias OutboundIn = HTTPResponsePart
    typealias OutboundOut = HTTPResponsePart

    private let cache: PageCache
    private let metrics: ServiceMetrics
    /// Requests passed on to the router whose responses have not ended yet.
    private var withRouter = 0
    /// The response for the request being read, when this handler answers it (sent at its end).
    private var answer: HTTPResponse?
    private var answerBody: ByteBuffer?
    private var closeAfterAnswer = false
    /// The `Date` header (an origin server with a clock sends one), formatted once a second.
    private var date: (second: Int, text: String) = (0, "")

    static let route = "/v1/layouts/{id}/pages/{index}"

    init(cache: PageCache, metrics: ServiceMetrics) {
        self.cache = cache
        self.metrics = metrics
    }

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        let part = unwrapInboundIn(data)
        switch part {
        case .head(let request):
            if withRouter == 0, let (response, body) = respond(to: request) {
                answer = response
                answerBody = body
                closeAfterAnswer = request.headerFields[.connection]?.lowercased().contains("close") == true
                return
            }
            withRouter += 1
            context.fireChannelRead(data)
        case .body:
            if answer == nil { context.fireChannelRead(data) }
        case .end:
            guard let response = answer else {
                context.fireChannelRead(data)
                return
            }
            answer = nil
            context.write(wrapOutboundOut(.head(response)), promise: nil)
            if let body = answerBody {
                context.write(wrapOutboundOut(.body(body)), promise: nil)
            }
            answerBody = nil
            let done = context.writeAndFlush(wrapOutboundOut(.end(nil)))
            metrics.recordRequest(method: "GET", route: Self.route, status: response.status.code, duration: .zero)
            if closeAfterAnswer {
                let loopBound = NIOLoopBound(context, eventLoop: context.eventLoop)
                done.whenComplete { _ in loopBound.value.close(promise: nil) }
            }
        }
    }

    func write(context: ChannelHandlerContext, data: NIOAny, promise: EventLoopPromise<Void>?) {
        if case .end = unwrapOutboundIn(data), withRouter > 0 { withRouter -= 1 }
        context.write(data, promise: promise)
    }

    /// The response for a page request the cache can answer, or nil to leave the request to the router.
    private func respond(to request: HTTPRequest) -> (HTTPResponse, ByteBuffer?)? {
        guard request.method == .get, let path = request.path, let key = Self.pageKey(path, request: request),
            let entry = cache[key]
        else { return nil }
        var (status, fields, body) = entry.answer(ifNoneMatch: request.headerFields[.ifNoneMatch])
        // What Hummingbird adds to the router's answers.
        fields[.date] = httpDate()
        fields[.server] = "feedlayout"
        if let body { fields[.contentLength] = String(body.readableBytes) }
        return (HTTPResponse(status: status, headerFields: fields), body)
    }

    /// Now as an HTTP date (`Thu, 26 Nov 2026 23:43:24 GMT`).
    private func httpDate() -> String {
        var now = time(nil)
        guard Int(now) != date.second else { return date.text }
        var parts = tm()
        gmtime_r(&now, &parts)
        var buffer = [CChar](repeating: 0, count: 64)
        let count = strftime(&buffer, buffer.count, "%a, %d %b %Y %H:%M:%S GMT", &parts)
        date = (Int(now), String(decoding: buffer.prefix(count).map { UInt8(bitPattern: $0) }, as: UTF8.self))
        return date.text
    }

    /// The cache key of `/v1/layouts/{32 hex}/pages/{index}[?layout=K][&wait=S]`, or nil for any other path.
    static func pageKey(_ path: String, request: HTTPRequest) -> PageCache.Key? {
        let utf8 = Array(path.utf8)
        let prefix = Array("/v1/layouts/".utf8)
        let middle = Array("/pages/".utf8)
        guard utf8.count > prefix.count + 32 + middle.count, utf8.starts(with: prefix) else { return nil }
        let idBytes = utf8[prefix.count..<(prefix.count + 32)]
        guard idBytes.allSatisfy({ (0x30...0x39).contains($0) || (0x61...0x66).contains($0) }),
            utf8[(prefix.count + 32)...].starts(with: middle)
        else { return nil }
        let rest = utf8[(prefix.count + 32 + middle.count)...]
        let queryStart = rest.firstIndex(of: UInt8(ascii: "?")) ?? rest.endIndex
        let digits = rest[rest.startIndex..<queryStart]
        guard !digits.isEmpty, digits.count <= 9, digits.allSatisfy({ (0x30...0x39).contains($0) }),
            let index = Int(String(decoding: digits, as: UTF8.self))
        else { return nil }
        var layoutIndex = 0
        if queryStart < rest.endIndex {
            for parameter in rest[(queryStart + 1)...].split(separator: UInt8(ascii: "&")) {
                let pair = parameter.split(separator: UInt8(ascii: "="), maxSplits: 1, omittingEmptySubsequences: false)
                guard pair.count == 2, let value = Int(String(decoding: pair[1], as: UTF8.self)) else { return nil }
                switch String(decoding: pair[0], as: UTF8.self) {
                case "layout" where (0...1000).contains(value): layoutIndex = value
                case "wait" where value >= 0: break
                default: return nil
                }
            }
        }
        let gzip = LayoutService.acceptsGzip(request.headerFields[.acceptEncoding])
        return PageCache.Key(
            id: String(decoding: idBytes, as: UTF8.self), layoutIndex: layoutIndex, pageIndex: index, gzip: gzip)
    }
}
