// A real HTTP/1.1 server on 127.0.0.1 for tests: serves byte resources with or without Range
// support, redirects, errors, slow and huge responses, and logs every request.
// The same file is linked into every test target that needs a server.
import Foundation
import NIOCore
import NIOHTTP1
import NIOPosix

final class TestHTTPServer: @unchecked Sendable {
    /// What one path serves.
    struct Resource: Sendable {
        var body: [UInt8] = []
        var contentType = "application/octet-stream"
        /// Whether `Range: bytes=a-b` gets a 206; when false the whole body comes back with 200.
        var honoursRange = true
        var entityTag: String?
        var lastModified: String?
        /// Answer with a 302 to this location instead.
        var redirect: String?
        /// Answer with this status (and a short text body) instead.
        var status: Int?
        /// Wait this long before sending the response head.
        var headDelay: TimeAmount?
        /// Wait this long between body chunks.
        var chunkDelay: TimeAmount?
        var chunkSize = 16 * 1024
    }

    /// One request as the server saw it.
    struct LoggedRequest: Sendable {
        var path: String
        var range: String?
        var headers: [String: String]
    }

    private let lock = NSLock()
    private var resources: [String: Resource] = [:]
    private var requestLog: [LoggedRequest] = []
    private var bytesSent = 0
    private let group: MultiThreadedEventLoopGroup
    private var channel: (any Channel)?
    private(set) var port = 0

    private init() {
        group = MultiThreadedEventLoopGroup(numberOfThreads: 1)
    }

    /// Starts a server on an ephemeral port of 127.0.0.1.
    static func start() async throws -> TestHTTPServer {
        let server = TestHTTPServer()
        let bootstrap = ServerBootstrap(group: server.group)
            .serverChannelOption(ChannelOptions.socketOption(.so_reuseaddr), value: 1)
            .childChannelInitializer { channel in
                channel.pipeline.configureHTTPServerPipeline().flatMapThrowing {
                    try channel.pipeline.syncOperations.addHandler(RequestHandler(server: server))
                }
            }
        let channel = try await bootstrap.bind(host: "127.0.0.1", port: 0).get()
        server.channel = channel
        server.port = channel.localAddress?.port ?? 0
        return server
    }

    /// Runs `body` with a started server and always shuts it down.
    static func with<Result>(_ body: (TestHTTPServer) async throws -> Result) async throws -> Result {
        let server = try await start()
        do {
            let result = try await body(server)
            try await server.shutdown()
            return result
        } catch {
            try? await server.shutdown()
            throw error
        }
    }

    func shutdown() async throws {
        try await channel?.close()
        try await group.shutdownGracefully()
    }

    func url(_ path: String) -> String { "http://127.0.0.1:\(port)\(path)" }

    func serve(_ path: String, _ resource: Resource) {
        lock.withLock { resources[path] = resource }
    }

    func serve(_ path: String, bytes: [UInt8], honoursRange: Bool = true) {
        serve(path, Resource(body: bytes, honoursRange: honoursRange))
    }

    var requests: [LoggedRequest] { lock.withLock { requestLog } }
    var totalBytesSent: Int { lock.withLock { bytesSent } }

    func requests(for path: String) -> [LoggedRequest] { requests.filter { $0.path == path } }

    fileprivate func record(_ head: HTTPRequestHead) -> Resource? {
        var headers: [String: String] = [:]
        for (name, value) in head.headers { headers[name.lowercased()] = value }
        let path = String(head.uri.split(separator: "?", maxSplits: 1).first ?? "")
        return lock.withLock {
            requestLog.append(LoggedRequest(path: path, range: headers["range"], headers: headers))
            return resources[path]
        }
    }

    fileprivate func countSent(_ count: Int) { lock.withLock { bytesSent += count } }
}

private final class RequestHandler: ChannelInboundHandler, @unchecked Sendable {
    typealias InboundIn = HTTPServerRequestPart
    typealias OutboundOut = HTTPServerResponsePart

    let server: TestHTTPServer
    var head: HTTPRequestHead?

    init(server: TestHTTPServer) { self.server = server }

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        switch unwrapInboundIn(data) {
        case .head(let head): self.head = head
        case .body: break
        case .end:
            guard let head else { return }
            self.head = nil
            respond(to: head, context: context)
        }
    }

    private func respond(to head: HTTPRequestHead, context: ChannelHandlerContext) {
        let keepAlive = head.isKeepAlive
        guard let resource = server.record(head) else {
            return send(
                status: .notFound, headers: [:], body: Array("not found".utf8)[...], resource: Resource404,
                keepAlive: keepAlive, context: context)
        }
        if let location = resource.redirect {
            return send(
                status: .found, headers: ["Location": location], body: [][...], resource: resource,
                keepAlive: keepAlive, context: context)
        }
        if let status = resource.status {
            return send(
                status: HTTPResponseStatus(statusCode: status), headers: [:], body: Array("status \(status)".utf8)[...],
                resource: resource, keepAlive: keepAlive, context: context)
        }
        var headers: [String: String] = ["Content-Type": resource.contentType]
        if let tag = resource.entityTag { headers["ETag"] = tag }
        if let date = resource.lastModified { headers["Last-Modified"] = date }
        if let tag = resource.entityTag, head.headers.first(name: "If-None-Match") == tag {
            return send(
                status: .notModified, headers: headers, body: [][...], resource: resource, keepAlive: keepAlive,
                context: context)
        }
        if resource.entityTag == nil, let date = resource.lastModified,
            head.headers.first(name: "If-Modified-Since") == date
        {
            return send(
                status: .notModified, headers: headers, body: [][...], resource: resource, keepAlive: keepAlive,
                context: context)
        }
        let body = resource.body
        if resource.honoursRange, let range = head.headers.first(name: "Range"), range.hasPrefix("bytes=") {
            headers["Accept-Ranges"] = "bytes"
            let bounds = range.dropFirst(6).split(separator: "-", omittingEmptySubsequences: false)
            let start = Int(bounds.first ?? "") ?? 0
            let end = min(body.count - 1, bounds.count > 1 ? Int(bounds[1]) ?? (body.count - 1) : body.count - 1)
            guard start < body.count, start <= end else {
                headers["Content-Range"] = "bytes */\(body.count)"
                return send(
                    status: .rangeNotSatisfiable, headers: headers, body: [][...], resource: resource,
                    keepAlive: keepAlive, context: context)
            }
            headers["Content-Range"] = "bytes \(start)-\(end)/\(body.count)"
            return send(
                status: .partialContent, headers: headers, body: body[start...end], resource: resource,
                keepAlive: keepAlive, context: context)
        }
        send(status: .ok, headers: headers, body: body[...], resource: resource, keepAlive: keepAlive, context: context)
    }

    private func send(
        status: HTTPResponseStatus, headers: [String: String], body: ArraySlice<UInt8>,
        resource: TestHTTPServer.Resource,
        keepAlive: Bool, context: ChannelHandlerContext
    ) {
        var responseHeaders = HTTPHeaders(headers.map { ($0.key, $0.value) })
        responseHeaders.add(name: "Content-Length", value: "\(body.count)")
        if !keepAlive { responseHeaders.add(name: "Connection", value: "close") }
        let finalHeaders = responseHeaders
        let bound = NIOLoopBound(context, eventLoop: context.eventLoop)
        let server = self.server
        let chunkSize = max(1, resource.chunkSize)
        let chunkDelay = resource.chunkDelay
        @Sendable func writeBody(from offset: Int) {
            let context = bound.value
            guard offset < body.count else {
                let promise = context.eventLoop.makePromise(of: Void.self)
                context.writeAndFlush(Self.wrapOutboundOut(.end(nil)), promise: promise)
                if !keepAlive { promise.futureResult.whenComplete { _ in bound.value.close(promise: nil) } }
                return
            }
            let end = min(body.count, offset + chunkSize)
            let slice = body[(body.startIndex + offset)..<(body.startIndex + end)]
            var buffer = context.channel.allocator.buffer(capacity: slice.count)
            buffer.writeBytes(slice)
            server.countSent(slice.count)
            context.writeAndFlush(Self.wrapOutboundOut(.body(.byteBuffer(buffer)))).whenComplete { result in
                guard case .success = result else { return }
                if let chunkDelay {
                    bound.value.eventLoop.scheduleTask(in: chunkDelay) { writeBody(from: end) }
                } else {
                    writeBody(from: end)
                }
            }
        }
        @Sendable func writeHead() {
            let context = bound.value
            guard context.channel.isActive else { return }
            context.write(
                Self.wrapOutboundOut(.head(HTTPResponseHead(version: .http1_1, status: status, headers: finalHeaders))),
                promise: nil)
            writeBody(from: 0)
        }
        if let delay = resource.headDelay {
            context.eventLoop.scheduleTask(in: delay) { writeHead() }
        } else {
            writeHead()
        }
    }
}

private let Resource404 = TestHTTPServer.Resource()
