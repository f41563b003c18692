import AsyncHTTPClient
import Logging
import NIOCore
import NIOHTTP1

/// A response whose whole body a delegate collects on the connection's own event loop, for a feed fetched whole
/// (``RemoteFetcher/fetchConditionally(_:validator:maximumBytes:chunks:)``).
///
/// A streamed body (`HTTPClientResponse.Body`) asks the connection for more only once the reading task has taken
/// the one chunk it buffers: every 64 KiB chunk is a round trip between the event loop and the task. The 224 MB feed
/// of the refresh benchmark took 0.21–0.23 s that way, where `curl` takes 0.07 s. Here the delegate and the channel
/// share one event loop: each chunk is appended where it is read, and the next read follows at once.
///
/// Timeouts are the streamed body's: the head by the deadline `send` gives each hop, the body by the read timeout
/// for every silence of the server's (the delegate keeps the time of the last bytes; it never makes the connection
/// wait, so silence is the server's).
final class CollectedResponse: RemoteFetcher.HopAnswer, Sendable {
    let status: HTTPResponseStatus
    let headers: HTTPHeaders
    private let task: HTTPClient.Task<Void>
    private let collector: BodyCollector

    private init(head: HTTPResponseHead, task: HTTPClient.Task<Void>, collector: BodyCollector) {
        status = head.status
        headers = head.headers
        self.task = task
        self.collector = collector
    }

    func abandon() { task.cancel() }

    /// The whole body of a `200` (any other status keeps none).
    /// - Throws: ``RemoteFetchError`` (the byte cap, the server's silence, the connection).
    func body(url: String, configuration: RemoteFetchConfiguration) async throws -> [UInt8] {
        do {
            try await withTaskCancellationHandler {
                try await task.futureResult.get()
            } onCancel: {
                task.cancel()
            }
            // Taken from the delegate on its event loop; nothing else holds the bytes (a future's value would,
            // as long as the future: then a body's memory could not be kept for the next one).
            let collector = self.collector
            return try await task.eventLoop.submit { collector.takeBody() }.get()
        } catch {
            throw RemoteFetcher.mapError(error, url: url, configuration: configuration)
        }
    }

    /// Sends `request` on `client` and returns once the head is there (or fails by `headDeadline`).
    /// - Parameters:
    ///   - url: The URL errors name (the one asked for, before redirects).
    ///   - maximumBytes: The byte cap of a `200`'s body.
    ///   - chunks: Given each chunk of a `200`'s body once kept, on the event loop; it must not block.
    ///   - memory: Where a `200`'s body is read into, when the caller keeps one.
    static func start(
        _ request: HTTPClientRequest, on client: HTTPClient, headDeadline: NIODeadline, url: String, maximumBytes: Int,
        configuration: RemoteFetchConfiguration, chunks: (@Sendable (ByteBuffer) -> Void)?, memory: BodyMemory?,
        logger: Logger
    ) async throws -> CollectedResponse {
        let eventLoop = client.eventLoopGroup.next()
        let collector = BodyCollector(
            eventLoop: eventLoop, url: url, maximumBytes: maximumBytes, configuration: configuration, chunks: chunks,
            memory: memory)
        let task = client.execute(
            request: try HTTPClient.Request(url: request.url, method: request.method, headers: request.headers),
            delegate: collector, eventLoop: .delegateAndChannel(on: eventLoop), deadline: nil, logger: logger)
        eventLoop.execute { collector.armHeadDeadline(headDeadline, task) }
        task.futureResult.whenFailure { collector.failed($0) }
        let head = try await withTaskCancellationHandler {
            try await collector.head.futureResult.get()
        } onCancel: {
            task.cancel()
        }
        return CollectedResponse(head: head, task: task, collector: collector)
    }
}

/// The delegate of a ``CollectedResponse``. Its state is touched on its event loop only (the delegate's and the
/// channel's), hence unchecked.
private final class BodyCollector: HTTPClientResponseDelegate, @unchecked Sendable {
    typealias Response = Void

    let head: EventLoopPromise<HTTPResponseHead>
    private let eventLoop: any EventLoop
    private let url: String
    private let maximumBytes: Int
    private let configuration: RemoteFetchConfiguration
    private let chunks: (@Sendable (ByteBuffer) -> Void)?
    private let memory: BodyMemory?
    private var received: HTTPResponseHead?
    private var headSettled = false
    private var bytes: [UInt8] = []
    private var lastBytes = NIODeadline.now()
    private var headTimer: Scheduled<Void>?
    private var silenceCheck: Scheduled<Void>?

    init(
        eventLoop: any EventLoop, url: String, maximumBytes: Int, configuration: RemoteFetchConfiguration,
        chunks: (@Sendable (ByteBuffer) -> Void)?, memory: BodyMemory?
    ) {
        self.eventLoop = eventLoop
        self.memory = memory
        head = eventLoop.makePromise()
        self.url = url
        self.maximumBytes = maximumBytes
        self.configuration = configuration
        self.chunks = chunks
    }

    func didReceiveHead(task: HTTPClient.Task<Void>, _ head: HTTPResponseHead) -> EventLoopFuture<Void> {
        received = head
        headTimer?.cancel()
        lastBytes = .now()
        if head.status == .ok {
            let announced = head.headers.first(name: "Content-Length").flatMap { Int($0) } ?? 0
            let capacity = min(announced, maximumBytes)
            bytes = memory?.take(capacity: capacity) ?? .reserved(capacity)
        }
        scheduleSilenceCheck(task)
        settleHead(.success(head))
        return eventLoop.makeSucceededVoidFuture()
    }

    func didReceiveBodyPart(task: HTTPClient.Task<Void>, _ buffer: ByteBuffer) -> EventLoopFuture<Void> {
        lastBytes = .now()
        // A redirect's or an error's body is not kept.
        guard received?.status == .ok else { return eventLoop.makeSucceededVoidFuture() }
        do {
            try RemoteBody.check(
                received: bytes.count + buffer.readableBytes, url: url, maximumBytes: maximumBytes, deadline: nil,
                configuration: configuration)
        } catch {
            return eventLoop.makeFailedFuture(error)
        }
        buffer.withUnsafeReadableBytes { bytes.append(contentsOf: $0) }
        chunks?(buffer)
        return eventLoop.makeSucceededVoidFuture()
    }

    func didReceiveError(task: HTTPClient.Task<Void>, _ error: any Error) { failed(error) }

    func didFinishRequest(task: HTTPClient.Task<Void>) throws {
        silenceCheck?.cancel()
    }

    /// The body, once the request is done; the delegate keeps nothing of it.
    func takeBody() -> [UInt8] {
        let body = bytes
        bytes = []
        return body
    }

    /// The request failed, before or after its head.
    func failed(_ error: any Error) {
        headTimer?.cancel()
        silenceCheck?.cancel()
        bytes = []
        settleHead(.failure(error))
    }

    /// Fails the request when its head has not come by `deadline` (``RemoteFetcher/send`` turns the
    /// `deadlineExceeded` into its message).
    func armHeadDeadline(_ deadline: NIODeadline, _ task: HTTPClient.Task<Void>) {
        guard received == nil, !headSettled else { return }
        headTimer = eventLoop.scheduleTask(deadline: deadline) { [self] in
            guard received == nil else { return }
            task.fail(reason: HTTPClientError.deadlineExceeded)
        }
    }

    private func settleHead(_ result: Result<HTTPResponseHead, any Error>) {
        guard !headSettled else { return }
        headSettled = true
        head.completeWith(result)
    }

    /// Fails the request once the server has been silent for the read timeout, checked when it could first be.
    private func scheduleSilenceCheck(_ task: HTTPClient.Task<Void>) {
        let timeout = TimeAmount(configuration.readTimeout)
        silenceCheck = eventLoop.scheduleTask(deadline: lastBytes + timeout) { [self] in
            if NIODeadline.now() - lastBytes >= timeout {
                task.fail(reason: RemoteFetcher.silentServer(url, configuration: configuration))
            } else {
                scheduleSilenceCheck(task)
            }
        }
    }
}
