import HTTPTypes
import LayoutStore
import NIOCore
import NIOHTTPTypes

#if canImport(Glibc)
    import Glibc
#endif

/// Answers requests for pages the page cache holds straight from the connection's bytes, ahead of the HTTP/1.1
/// decoder.
///
/// A stored page is bytes that never change. Through the decoder, the HTTP types conversion, the response encoder
/// and the handlers between them, each such request cost more user time than the kernel's own work for it; on two
/// cores, beside the load generator, that kept the tail latency above 5 ms. Here a page request costs a scan of its
/// head, a cache lookup and one write of a small header buffer and the shared body.
///
/// Only a `GET /v1/layouts/{id}/pages/{index}` in HTTP/1.1 or 1.0, with at most `layout` and `wait` in its query,
/// no body and at most `close` or `keep-alive` in its `Connection` header, whose page is in memory and which
/// ``RequestRules`` lets in, is answered here; with the same fields the router would add (request id, CORS), and
/// the same access log line and metrics. A request the rules refuse goes to the router, which answers the
/// problem. After a request that asks to close (HTTP/1.0 without `keep-alive`, as nginx's `proxy_pass` sends by
/// default, or `Connection: close`), the connection is closed once its answer is written. Every other request goes to the decoder
/// whole, and the router answers it (filling the cache on a page miss); requests after it wait here until its
/// response has ended (``RouterResponseTracker`` says so), so responses never overtake each other. A request with
/// a body, or bytes that are not a plain HTTP/1.1 head, hand the rest of the connection to the decoder.
final class PageFastPathHandler: ChannelDuplexHandler {
    typealias InboundIn = ByteBuffer
    typealias InboundOut = ByteBuffer
    typealias OutboundIn = IOData
    typealias OutboundOut = IOData

    /// Sent toward the front by ``RouterResponseTracker`` when a response from the router has ended.
    struct RouterResponseEnded {}
    /// Sent toward the router's side when a request was answered here: the deadline for the next one starts.
    struct RequestAnswered {}

    /// The route it answers, as metrics name it.
    static let route = ServiceRoute.pagePath
    /// A longer head is not a page request: it goes to the decoder (which applies its own limits).
    static let maximumHead = 8 * 1024
    /// Bytes kept here while the router answers an earlier request; past this, the decoder gets them all.
    static let maximumHeld = 64 * 1024

    private let cache: PageCache
    private let rules: RequestRules
    /// An answer asked to close the connection: nothing more is read.
    private var closing = false
    /// Bytes read and not yet answered or passed on.
    private var held: ByteBuffer?
    /// Requests passed to the decoder whose responses have not ended yet.
    private var withRouter = 0
    /// Once set, every byte goes to the decoder: it alone knows where the requests in them end.
    private var decoderOnly = false
    /// Requests were answered here since ``RequestDeadlineHandler`` was last told.
    private var answeredSinceDeadline = false
    /// The last `Accept-Encoding` value seen and what it decided: a client sends the same one every time.
    private var lastAcceptEncoding: (value: [UInt8], gzip: Bool) = ([], false)
    /// The last `Authorization` value seen and the key it named.
    private var lastAuthorization: (value: [UInt8], key: APIKey?)?
    /// The `Date` header line (an origin server with a clock sends one), made once a second.
    private var date: (second: Int, line: [UInt8]) = (0, [])

    init(cache: PageCache, rules: RequestRules) {
        self.cache = cache
        self.rules = rules
    }

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        if closing { return }
        if decoderOnly {
            context.fireChannelRead(data)
            return
        }
        var bytes = unwrapInboundIn(data)
        if held != nil {
            held!.writeBuffer(&bytes)
        } else {
            held = bytes
        }
        process(context: context)
    }

    func channelReadComplete(context: ChannelHandlerContext) {
        context.flush()
        context.fireChannelReadComplete()
    }

    func triggerUserOutboundEvent(context: ChannelHandlerContext, event: Any, promise: EventLoopPromise<Void>?) {
        guard event is RouterResponseEnded else {
            context.triggerUserOutboundEvent(event, promise: promise)
            return
        }
        promise?.succeed()
        // Once the decoder has the connection, its answers are no longer counted here.
        guard withRouter > 0 else { return }
        withRouter -= 1
        // Requests that came while the router worked are taken up now, outside the write that ended its response.
        guard withRouter == 0, !decoderOnly, held?.readableBytes ?? 0 > 0 else { return }
        let loopBound = NIOLoopBound((self, context), eventLoop: context.eventLoop)
        context.eventLoop.execute {
            let (handler, context) = loopBound.value
            guard handler.withRouter == 0, !handler.decoderOnly else { return }
            handler.process(context: context)
            context.flush()
            context.fireChannelReadComplete()
        }
    }

    /// Answers or passes on each whole request head in `held`, in order, until one has to wait for the router.
    private func process(context: ChannelHandlerContext) {
        defer { startNextDeadline(context) }
        while withRouter == 0, !closing, var bytes = held, bytes.readableBytes > 0 {
            switch Self.scanHead(bytes) {
            case .incomplete:
                if bytes.readableBytes > Self.maximumHead { return passRest(context) }
                return
            case .notPlain:
                return passRest(context)
            case .head(let length, let request):
                if request.hasBody { return passRest(context) }
                let head = bytes.readSlice(length: length)!
                held = bytes.readableBytes > 0 ? bytes : nil
                if let page = request.page, answer(page, context: context) {
                    answeredSinceDeadline = true
                    if !page.keepAlive {
                        closing = true
                        held = nil
                        // Closed once the answer is written: writes end in order, so the empty one ends last.
                        let loopBound = NIOLoopBound(context, eventLoop: context.eventLoop)
                        context.writeAndFlush(wrapOutboundOut(.byteBuffer(ByteBuffer()))).whenComplete { _ in
                            loopBound.value.close(promise: nil)
                        }
                        return
                    }
                } else {
                    withRouter += 1
                    toDecoder(head, context: context)
                }
            }
        }
        if let held, held.readableBytes > Self.maximumHeld { passRest(context) }
    }

    /// Hands every byte from here on to the decoder.
    private func passRest(_ context: ChannelHandlerContext) {
        decoderOnly = true
        if let held, held.readableBytes > 0 { toDecoder(held, context: context) }
        held = nil
    }

    private func toDecoder(_ bytes: ByteBuffer, context: ChannelHandlerContext) {
        // The next request's deadline starts after the answers given here, before the decoder's request ends it.
        startNextDeadline(context)
        context.fireChannelRead(wrapInboundOut(bytes))
    }

    /// Tells ``RequestDeadlineHandler`` that requests were answered here (once for all answered in one read).
    private func startNextDeadline(_ context: ChannelHandlerContext) {
        guard answeredSinceDeadline else { return }
        answeredSinceDeadline = false
        context.fireUserInboundEventTriggered(RequestAnswered())
    }

    /// Writes the page when the cache holds it; false leaves the request to the router.
    private func answer(_ page: PageRequest, context: ChannelHandlerContext) -> Bool {
        let started = NIODeadline.now()
        let gzip: Bool
        if page.acceptEncoding == lastAcceptEncoding.value {
            gzip = lastAcceptEncoding.gzip
        } else {
            gzip = RouteHandlers.acceptsGzip(page.acceptEncoding.map { String(decoding: $0, as: UTF8.self) })
            lastAcceptEncoding = (page.acceptEncoding ?? [], gzip)
        }
        let key = PageCache.Key(id: page.id, layoutIndex: page.layoutIndex, pageIndex: page.pageIndex, gzip: gzip)
        guard let entry = cache[key] else { return false }
        var facts = RequestRules.Facts(
            method: .get, route: Self.route, path: Substring(page.path),
            authorization: page.authorization.map { Substring(decoding: $0, as: UTF8.self) },
            origin: page.origin.map { Substring(decoding: $0, as: UTF8.self) },
            requestID: page.requestID.map { Substring(decoding: $0, as: UTF8.self) })
        if let authorization = page.authorization, let last = lastAuthorization, last.value == authorization {
            facts.resolvedKey = .some(last.key)
        }
        let decision = rules.decide(facts)
        if let authorization = page.authorization, facts.resolvedKey == nil {
            lastAuthorization = (authorization, decision.key)
        }
        guard decision.answer == nil else { return false }
        cache.reads.mark(page.id)
        var header = context.channel.allocator.buffer(capacity: 384)
        var status = HTTPResponse.Status.ok
        var body: ByteBuffer? = entry.body
        if let ifNoneMatch = page.ifNoneMatch {
            // The same status, fields and body the router answers with.
            let answer = entry.answer(ifNoneMatch: String(decoding: ifNoneMatch, as: UTF8.self))
            (status, body) = (answer.status, answer.body)
            header.writeBytes(PageCache.Entry.wireHead(status: answer.status, fields: answer.fields))
        } else {
            header.writeBytes(entry.okHead)
        }
        for (name, value) in rules.responseFields(for: decision) {
            header.writeString(name.rawName)
            header.writeString(": ")
            header.writeString(value)
            header.writeString("\r\n")
        }
        header.writeBytes(dateLine())
        header.writeString("Server: feedlayout\r\n")
        if let body { header.writeString("Content-Length: \(body.readableBytes)\r\n") }
        if let connection = page.connectionAnswer { header.writeString(connection) }
        header.writeString("\r\n")
        context.write(wrapOutboundOut(.byteBuffer(header)), promise: nil)
        if let body { context.write(wrapOutboundOut(.byteBuffer(body)), promise: nil) }
        let elapsed = NIODeadline.now() - started
        rules.metrics.recordFastPathPage()
        rules.finish(
            decision, status: status.code, bytes: body?.readableBytes ?? 0,
            duration: .nanoseconds(elapsed.nanoseconds))
        return true
    }

    /// `Date: Thu, 26 Nov 2026 23:43:24 GMT\r\n`.
    private func dateLine() -> [UInt8] {
        var now = time(nil)
        guard Int(now) != date.second else { return date.line }
        var parts = tm()
        gmtime_r(&now, &parts)
        var buffer = [CChar](repeating: 0, count: 64)
        let count = strftime(&buffer, buffer.count, "Date: %a, %d %b %Y %H:%M:%S GMT\r\n", &parts)
        date = (Int(now), buffer.prefix(count).map { UInt8(bitPattern: $0) })
        return date.line
    }
}

/// After the HTTP codec: tells ``PageFastPathHandler`` when a response from the router has ended.
final class RouterResponseTracker: ChannelOutboundHandler, RemovableChannelHandler {
    typealias OutboundIn = HTTPResponsePart
    typealias OutboundOut = HTTPResponsePart

    func write(context: ChannelHandlerContext, data: NIOAny, promise: EventLoopPromise<Void>?) {
        let isEnd = if case .end = unwrapOutboundIn(data) { true } else { false }
        context.write(data, promise: promise)
        if isEnd { context.triggerUserOutboundEvent(PageFastPathHandler.RouterResponseEnded(), promise: nil) }
    }
}

// MARK: Reading a request head

/// What the fast path needs of a request head.
struct RequestHead {
    /// A `Content-Length` or `Transfer-Encoding` header: the request has a body.
    var hasBody = false
    /// The page asked for, when this is a plain HTTP/1.1 or 1.0 `GET` of the page route.
    var page: PageRequest?
}

struct PageRequest {
    var id: String
    var layoutIndex: Int
    var pageIndex: Int
    /// The request target's path (the query left out), for the access log.
    var path: String
    var acceptEncoding: [UInt8]?
    var ifNoneMatch: [UInt8]?
    var authorization: [UInt8]?
    var origin: [UInt8]?
    var requestID: [UInt8]?
    /// Whether the connection stays open after the answer.
    var keepAlive: Bool
    /// The `Connection` field the answer carries, when it must say one: `close` to a request that asked for it,
    /// `keep-alive` to an HTTP/1.0 one that asked to keep it.
    var connectionAnswer: String?
}

enum HeadScan {
    case incomplete
    /// Not a head in the plain form read here (a bare line feed, a folded or nameless header line): the decoder
    /// decides what it is.
    case notPlain
    case head(length: Int, RequestHead)
}

extension PageFastPathHandler {
    /// Reads the request head at the start of `buffer`'s readable bytes: its length up to and including the empty
    /// line, and what it asks for.
    static func scanHead(_ buffer: ByteBuffer) -> HeadScan {
        // Over raw bytes: through `ByteBufferView`, each byte read retained and released the buffer's storage, and
        // the scan was an eighth of the service's CPU behind a proxy that sends a few headers per request.
        buffer.withUnsafeReadableBytes { scanHead($0) }
    }

    static func scanHead(_ bytes: UnsafeRawBufferPointer) -> HeadScan {
        guard let start = bytes.baseAddress else { return .incomplete }
        var lineStart = 0
        var requestLine: Range<Int>?
        var head = RequestHead()
        var acceptEncoding: [UInt8]?
        var ifNoneMatch: [UInt8]?
        var authorization: [UInt8]?
        var origin: [UInt8]?
        var requestID: [UInt8]?
        var connection = ConnectionTokens()
        while lineStart < bytes.count,
            let found = memchr(start + lineStart, Int32(UInt8(ascii: "\n")), bytes.count - lineStart)
        {
            let index = start.distance(to: UnsafeRawPointer(found))
            guard index > lineStart, bytes[index - 1] == UInt8(ascii: "\r") else { return .notPlain }
            let line = lineStart..<(index - 1)
            lineStart = index + 1
            if requestLine == nil {
                requestLine = line
                continue
            }
            if line.isEmpty {
                if !connection.other, let page = pageRequest(bytes, requestLine!) {
                    // HTTP/1.1 keeps the connection unless asked to close; HTTP/1.0 closes unless asked to keep it.
                    let keepAlive = page.http10 ? connection.keepAlive && !connection.close : !connection.close
                    head.page = PageRequest(
                        id: page.id, layoutIndex: page.layoutIndex, pageIndex: page.pageIndex, path: page.path,
                        acceptEncoding: acceptEncoding, ifNoneMatch: ifNoneMatch, authorization: authorization,
                        origin: origin, requestID: requestID, keepAlive: keepAlive,
                        connectionAnswer: !keepAlive
                            ? "Connection: close\r\n" : page.http10 ? "Connection: keep-alive\r\n" : nil)
                }
                return .head(length: lineStart, head)
            }
            guard let colon = bytes[line].firstIndex(of: UInt8(ascii: ":")), colon > line.lowerBound,
                bytes[line.lowerBound] != UInt8(ascii: " "), bytes[line.lowerBound] != UInt8(ascii: "\t")
            else { return .notPlain }
            let name = bytes[line.lowerBound..<colon]
            var valueStart = colon + 1
            while valueStart < line.upperBound, bytes[valueStart] == UInt8(ascii: " ") || bytes[valueStart] == 9 {
                valueStart += 1
            }
            var valueEnd = line.upperBound
            while valueEnd > valueStart, bytes[valueEnd - 1] == UInt8(ascii: " ") || bytes[valueEnd - 1] == 9 {
                valueEnd -= 1
            }
            let value = bytes[valueStart..<valueEnd]
            if equalsLowercased(name, "content-length") || equalsLowercased(name, "transfer-encoding") {
                head.hasBody = true
            } else if equalsLowercased(name, "connection") {
                connection.read(value)
            } else if equalsLowercased(name, "authorization") {
                // Two lines would be two credentials: the router decides what that is.
                if authorization != nil { connection.other = true }
                authorization = Array(value)
            } else if equalsLowercased(name, "origin") {
                if origin != nil { connection.other = true }
                origin = Array(value)
            } else if equalsLowercased(name, "x-request-id") {
                requestID = Array(value)
            } else if equalsLowercased(name, "accept-encoding") {
                // Several lines make one list.
                acceptEncoding = (acceptEncoding.map { $0 + Array(", ".utf8) } ?? []) + value
            } else if equalsLowercased(name, "if-none-match") {
                ifNoneMatch = (ifNoneMatch.map { $0 + Array(", ".utf8) } ?? []) + value
            }
        }
        return .incomplete
    }

    /// Whether `name` is `lowercase` in any case (ASCII).
    private static func equalsLowercased(_ name: Slice<UnsafeRawBufferPointer>, _ lowercase: StaticString) -> Bool {
        guard name.count == lowercase.utf8CodeUnitCount else { return false }
        var expected = lowercase.utf8Start
        for byte in name {
            let lower = (byte >= 0x41 && byte <= 0x5A) ? byte | 0x20 : byte
            guard lower == expected.pointee else { return false }
            expected += 1
        }
        return true
    }

    private static let requestLineStart = Array("GET /v1/layouts/".utf8)
    private static let pagesSegment = Array("/pages/".utf8)
    private static let versionSuffix = Array(" HTTP/1.1".utf8)
    private static let version10Suffix = Array(" HTTP/1.0".utf8)

    /// The page of `GET /v1/layouts/{32 hex}/pages/{index}[?layout=K][&wait=S] HTTP/1.1` (or `HTTP/1.0`), or nil for
    /// any other request line.
    static func pageRequest(_ bytes: UnsafeRawBufferPointer, _ line: Range<Int>)
        -> (id: String, layoutIndex: Int, pageIndex: Int, path: String, http10: Bool)?
    {
        let (get, middle, version) = (requestLineStart, pagesSegment, versionSuffix)
        let text = bytes[line]
        guard text.count > get.count + 32 + middle.count + version.count, text.starts(with: get) else { return nil }
        let http10 = text.suffix(version.count).elementsEqual(version10Suffix)
        guard http10 || text.suffix(version.count).elementsEqual(version) else { return nil }
        let idStart = line.lowerBound + get.count
        let idBytes = bytes[idStart..<(idStart + 32)]
        guard idBytes.allSatisfy({ (0x30...0x39).contains($0) || (0x61...0x66).contains($0) }),
            bytes[(idStart + 32)..<line.upperBound].starts(with: middle)
        else { return nil }
        let rest = bytes[(idStart + 32 + middle.count)..<(line.upperBound - version.count)]
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
                case "layout" where QueryBounds.layoutIndices.contains(value): layoutIndex = value
                // A wait past the default bound goes to the router, which checks it against the settings'.
                case "wait" where (0...QueryBounds.defaultMaximumWait).contains(value): break
                default: return nil
                }
            }
        }
        let path = String(decoding: bytes[(line.lowerBound + 4)..<(rest.startIndex + digits.count)], as: UTF8.self)
        return (String(decoding: idBytes, as: UTF8.self), layoutIndex, index, path, http10)
    }
}

/// The tokens of a request's `Connection` fields: `close` and `keep-alive` are understood here; any other (an
/// upgrade, hop-by-hop headers) leaves the request to the decoder.
struct ConnectionTokens {
    var close = false
    var keepAlive = false
    var other = false

    mutating func read(_ value: Slice<UnsafeRawBufferPointer>) {
        for token in value.split(separator: UInt8(ascii: ",")) {
            let trimmed = token.drop(while: { $0 == 0x20 || $0 == 9 }).reversed().drop(while: { $0 == 0x20 || $0 == 9 })
            let lowered = String(decoding: trimmed.reversed().map { ($0 >= 0x41 && $0 <= 0x5A) ? $0 | 0x20 : $0 }, as: UTF8.self)
            switch lowered {
            case "close": close = true
            case "keep-alive": keepAlive = true
            case "": break
            default: other = true
            }
        }
    }
}
