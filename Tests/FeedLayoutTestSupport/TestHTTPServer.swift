// A real HTTP/1.1 server on 127.0.0.1 for tests: serves byte resources with or without Range
// support, redirects, errors, slow and huge responses, and logs every request.
import Foundation
import NIOCore
import NIOHTTP1
import NIOPosix

/// A real HTTP/1.1 server on an ephemeral port of 127.0.0.1, for tests of everything that fetches.
///
/// It serves byte resources with or without Range support, redirects, error statuses, slow and huge
/// responses, and logs every request it sees. A ``ResponseGate`` stops a response at a chosen point
/// until the test lets it go on, so tests of timeouts, caps and streaming wait for events rather than
/// for time.
///
/// ```swift
/// try await TestHTTPServer.with { server in
///     server.serve("/a.bin", bytes: [1, 2, 3])
///     // fetch server.url("/a.bin") …
///     #expect(server.requests(for: "/a.bin").count == 1)
/// }
/// ```
public final class TestHTTPServer: @unchecked Sendable {
    /// What one path serves.
    public struct Resource: Sendable {
        /// The whole body.
        public var body: [UInt8]
        /// The `Content-Type` header.
        public var contentType: String
        /// Whether `Range: bytes=a-b` gets a 206; when false the whole body comes back with 200.
        public var honoursRange: Bool
        /// The `ETag` header; a matching `If-None-Match` gets a 304.
        public var entityTag: String?
        /// The `Last-Modified` header; without an entity tag, a matching `If-Modified-Since` gets a 304.
        public var lastModified: String?
        /// Answer with a 302 to this location instead.
        public var redirect: String?
        /// Answer with this status (and a short text body) instead.
        public var status: Int?
        /// Wait this long before sending the response head.
        public var headDelay: TimeAmount?
        /// Wait this long between body chunks.
        public var chunkDelay: TimeAmount?
        /// The bytes written and flushed at a time.
        public var chunkSize: Int
        /// Whether the response says its length; when false an HTTP/1.1 response is sent with chunked
        /// transfer encoding, so the client learns the size only by reading.
        public var sendsContentLength: Bool
        /// Where the response stops until the test opens the gate.
        public var gate: ResponseGate?
        /// More response headers, sent with every answer of this path (`Cache-Control`, `Retry-After`, …).
        public var extraHeaders: [String: String] = [:]

        /// Describes a resource; every part has the default of a plain, quick 200 response.
        public init(
            body: [UInt8] = [], contentType: String = "application/octet-stream", honoursRange: Bool = true,
            entityTag: String? = nil, lastModified: String? = nil, redirect: String? = nil, status: Int? = nil,
            headDelay: TimeAmount? = nil, chunkDelay: TimeAmount? = nil, chunkSize: Int = 16 * 1024,
            sendsContentLength: Bool = true, gate: ResponseGate? = nil
        ) {
            self.body = body
            self.contentType = contentType
            self.honoursRange = honoursRange
            self.entityTag = entityTag
            self.lastModified = lastModified
            self.redirect = redirect
            self.status = status
            self.headDelay = headDelay
            self.chunkDelay = chunkDelay
            self.chunkSize = chunkSize
            self.sendsContentLength = sendsContentLength
            self.gate = gate
        }
    }

    /// One request as the server saw it.
    public struct LoggedRequest: Sendable {
        /// The path, without the query.
        public var path: String
        /// The `Range` header, if any.
        public var range: String?
        /// Every header, names lowercased.
        public var headers: [String: String]
    }

    private let lock = NSLock()
    private var resources: [String: Resource] = [:]
    private var requestLog: [LoggedRequest] = []
    private var bytesSent = 0
    private var connectionsClosed = 0
    /// Who waits for a close (``waitForAClosedConnection()``), by a number of their own.
    private var closeWaiters: [Int: CheckedContinuation<Void, Never>] = [:]
    private var nextCloseWaiter = 0
    private let group: MultiThreadedEventLoopGroup
    private var channel: (any Channel)?
    /// The port the server listens on.
    public private(set) var port = 0

    private init() {
        group = MultiThreadedEventLoopGroup(numberOfThreads: 1)
    }

    /// Starts a server on an ephemeral port of 127.0.0.1 (or on another address and port of the loopback network:
    /// a second server on 127.0.0.2 with the first one's port answers the same URL at another address).
    ///
    /// - Returns: The running server; call ``shutdown()`` when done, or use ``with(_:)``.
    /// - Throws: When the port cannot be bound.
    public static func start(host: String = "127.0.0.1", port: Int = 0) async throws -> TestHTTPServer {
        let server = TestHTTPServer()
        let bootstrap = ServerBootstrap(group: server.group)
            .serverChannelOption(ChannelOptions.socketOption(.so_reuseaddr), value: 1)
            .childChannelInitializer { channel in
                channel.pipeline.configureHTTPServerPipeline().flatMapThrowing {
                    try channel.pipeline.syncOperations.addHandler(RequestHandler(server: server))
                }
            }
        let channel = try await bootstrap.bind(host: host, port: port).get()
        server.channel = channel
        server.port = channel.localAddress?.port ?? 0
        return server
    }

    /// Runs `body` with a started server and always shuts it down.
    ///
    /// - Parameter body: The test, given the server.
    /// - Returns: What `body` returns.
    /// - Throws: What `body` throws, or a failure to start or stop the server.
    public static func with<Result>(_ body: (TestHTTPServer) async throws -> Result) async throws -> Result {
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

    /// Closes the listening socket and stops the server's thread.
    public func shutdown() async throws {
        try await channel?.close()
        try await group.shutdownGracefully()
    }

    /// The `http://127.0.0.1:PORT` URL of a path.
    public func url(_ path: String) -> String { "http://127.0.0.1:\(port)\(path)" }

    /// What `path` serves now.
    public func resource(at path: String) -> Resource? { lock.withLock { resources[path] } }

    /// Serves `resource` at `path` from now on, replacing what was there.
    public func serve(_ path: String, _ resource: Resource) {
        lock.withLock { resources[path] = resource }
    }

    /// Serves plain bytes at `path`.
    public func serve(_ path: String, bytes: [UInt8], honoursRange: Bool = true) {
        serve(path, Resource(body: bytes, honoursRange: honoursRange))
    }

    /// Every request so far, in arrival order.
    public var requests: [LoggedRequest] { lock.withLock { requestLog } }
    /// The body bytes written to all connections so far.
    public var totalBytesSent: Int { lock.withLock { bytesSent } }

    /// The requests for one path, in arrival order.
    public func requests(for path: String) -> [LoggedRequest] { requests.filter { $0.path == path } }

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

    /// Connections that have closed (by either side): a client that cuts a response off shows here.
    public var closedConnections: Int { lock.withLock { connectionsClosed } }

    fileprivate func countClosed() {
        let waiters = lock.withLock {
            connectionsClosed += 1
            defer { closeWaiters = [:] }
            return closeWaiters.values
        }
        for waiter in waiters { waiter.resume() }
    }

    /// Returns once a connection has closed (at once when one has), or when the waiting task is cancelled (the
    /// suite's time limit cancels it: a close that never comes fails the test there instead of hanging the run).
    public func waitForAClosedConnection() async {
        let id = lock.withLock {
            defer { nextCloseWaiter += 1 }
            return nextCloseWaiter
        }
        await withTaskCancellationHandler {
            await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
                let resumeNow = lock.withLock {
                    if connectionsClosed > 0 || Task.isCancelled { return true }
                    closeWaiters[id] = continuation
                    return false
                }
                if resumeNow { continuation.resume() }
            }
        } onCancel: {
            lock.withLock { closeWaiters.removeValue(forKey: id) }?.resume()
        }
    }
}

/// Stops a response at a chosen point until the test opens it.
///
/// A test of a timeout, a byte cap or streaming then depends on events instead of on wall-clock
/// bounds: the server holds a response (before its head, or once some body bytes are out) for as long
/// as the test wants, the test learns when that point is reached, and a busy machine only makes both
/// sides slower. Every response for a gated resource stops at the point until ``open()``.
///
/// ```swift
/// let gate = ResponseGate(holdingAt: .beforeHead)
/// server.serve("/slow", .init(body: bytes, gate: gate))
/// // … the fetch must give up by itself: the server answers nothing until the gate opens.
/// gate.open()
/// ```
public final class ResponseGate: @unchecked Sendable {
    /// Where a response stops.
    public enum Point: Sendable, Equatable {
        /// Once the request has arrived, before anything of the response is sent.
        case beforeHead
        /// Once at least this many body bytes (whole chunks) are written and flushed.
        case afterBodyBytes(Int)
    }

    private struct State {
        var isOpen = false
        /// The body bytes sent when a response first stopped at the gate.
        var heldAt: Int?
        var held: [@Sendable () -> Void] = []
        var waiters: [Int: CheckedContinuation<Int?, Never>] = [:]
        var nextWaiter = 0
    }

    /// Where responses stop.
    public let point: Point
    private let lock = NSLock()
    private var state = State()

    /// Makes a closed gate.
    ///
    /// - Parameter point: Where responses stop until ``open()``.
    public init(holdingAt point: Point) {
        self.point = point
    }

    /// Waits until a response stops at the gate.
    ///
    /// - Returns: The body bytes the server had sent when it stopped (0 before the head), or nil when
    ///   the waiting task was cancelled first.
    public func waitUntilHeld() async -> Int? {
        let id = withState { state in
            defer { state.nextWaiter += 1 }
            return state.nextWaiter
        }
        return await withTaskCancellationHandler {
            await withCheckedContinuation { (continuation: CheckedContinuation<Int?, Never>) in
                let resumeNow: Int?? = withState { state in
                    if let heldAt = state.heldAt { return .some(heldAt) }
                    if Task.isCancelled { return .some(nil) }
                    state.waiters[id] = continuation
                    return .none
                }
                if let value = resumeNow { continuation.resume(returning: value) }
            }
        } onCancel: {
            withState { $0.waiters.removeValue(forKey: id) }?.resume(returning: nil)
        }
    }

    /// Lets every held response go on, and every later one pass the point without stopping.
    public func open() {
        let held = withState { state in
            state.isOpen = true
            defer { state.held = [] }
            return state.held
        }
        for resume in held { resume() }
    }

    private func withState<Result>(_ body: (inout State) -> Result) -> Result {
        lock.withLock { body(&state) }
    }

    /// Called by the server at the gate's point: runs `resume` now if the gate is open, else when it opens.
    fileprivate func arrive(bytesSent: Int, then resume: @escaping @Sendable () -> Void) {
        let (runNow, waiters) = withState { state -> (Bool, [CheckedContinuation<Int?, Never>]) in
            if state.isOpen { return (true, []) }
            state.held.append(resume)
            guard state.heldAt == nil else { return (false, []) }
            state.heldAt = bytesSent
            defer { state.waiters = [:] }
            return (false, Array(state.waiters.values))
        }
        for waiter in waiters { waiter.resume(returning: bytesSent) }
        if runNow { resume() }
    }
}

private final class RequestHandler: ChannelInboundHandler, @unchecked Sendable {
    typealias InboundIn = HTTPServerRequestPart
    typealias OutboundOut = HTTPServerResponsePart

    let server: TestHTTPServer
    var head: HTTPRequestHead?

    init(server: TestHTTPServer) { self.server = server }

    func channelInactive(context: ChannelHandlerContext) {
        server.countClosed()
        context.fireChannelInactive()
    }

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
                status: .notFound, headers: [:], body: Array("not found".utf8)[...], resource: resource404,
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
        for (name, value) in resource.extraHeaders.sorted(by: { $0.key < $1.key }) {
            responseHeaders.add(name: name, value: value)
        }
        if resource.sendsContentLength { responseHeaders.add(name: "Content-Length", value: "\(body.count)") }
        if !keepAlive { responseHeaders.add(name: "Connection", value: "close") }
        let finalHeaders = responseHeaders
        let bound = NIOLoopBound(context, eventLoop: context.eventLoop)
        let eventLoop = context.eventLoop
        let server = self.server
        let chunkSize = max(1, resource.chunkSize)
        let chunkDelay = resource.chunkDelay
        let gate = resource.gate
        // The gate may open on any thread; the response goes on on its own event loop.
        @Sendable func atGate(bytesSent: Int, _ next: @escaping @Sendable () -> Void) {
            guard let gate else { return next() }
            gate.arrive(bytesSent: bytesSent) { eventLoop.execute { next() } }
        }
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
                let goOn: @Sendable () -> Void = {
                    if let chunkDelay {
                        bound.value.eventLoop.scheduleTask(in: chunkDelay) { writeBody(from: end) }
                    } else {
                        writeBody(from: end)
                    }
                }
                if case .afterBodyBytes(let threshold) = gate?.point, offset < threshold, end >= threshold {
                    atGate(bytesSent: end, goOn)
                } else {
                    goOn()
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
        @Sendable func startResponse() {
            if let delay = resource.headDelay {
                bound.value.eventLoop.scheduleTask(in: delay) { writeHead() }
            } else {
                writeHead()
            }
        }
        if gate?.point == .beforeHead {
            atGate(bytesSent: 0, startResponse)
        } else {
            startResponse()
        }
    }
}

private let resource404 = TestHTTPServer.Resource()
