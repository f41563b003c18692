import Foundation
import LayoutPages
import Logging
import NIOCore
import Synchronization

#if canImport(Glibc)
    import Glibc
#endif

/// The bound on open connections (`--max-connections`): a connection past it is answered `503` with a problem
/// (`too-many-connections`, `Retry-After: 1`, `Connection: close`) and closed, before any of its bytes is parsed.
///
/// Each connection holds a file descriptor: past the process's limit (`ulimit -n`), `accept` fails and new clients
/// wait in the kernel's backlog with no answer at all, while the store and the photo fetches can no longer open
/// files or sockets either. So the bound sits below that limit, with room for the rest
/// (``reservedDescriptors``): at start the service raises its soft limit as far as the hard one allows, and
/// lowers the bound (with a warning) where even that is not enough.
final class ConnectionLimit: Sendable {
    /// Descriptors kept for everything but client connections: the store (SQLite's files, or PostgreSQL's
    /// connections), feed files, photo and feed fetches, fonts, the listening socket.
    static let reservedDescriptors = 512

    /// The most connections open at once.
    let maximum: Int
    private let open = Atomic<Int>(0)
    private let refused = Atomic<Int>(0)

    /// - Parameter maximum: The bound asked for; lowered to what the open-file limit allows when `fitToOpenFileLimit`.
    init(maximum: Int, fitToOpenFileLimit: Bool = true, logger: Logger) {
        guard fitToOpenFileLimit else {
            self.maximum = max(1, maximum)
            return
        }
        let limit = Self.raiseOpenFileLimit(toAtLeast: maximum + Self.reservedDescriptors)
        let fitting = Int(limit) - Self.reservedDescriptors
        if fitting < maximum {
            logger.warning(
                "--max-connections lowered to what the open-file limit allows",
                metadata: [
                    "asked": "\(maximum)", "maximum": "\(max(1, fitting))", "openFileLimit": "\(limit)",
                    "hint": "raise the hard limit (ulimit -Hn, LimitNOFILE= in a systemd unit)",
                ])
        }
        self.maximum = max(1, min(maximum, fitting))
    }

    /// Connections open now.
    var openCount: Int { open.load(ordering: .relaxed) }
    /// Connections refused since the start.
    var refusedCount: Int { refused.load(ordering: .relaxed) }

    /// Counts a new connection in, unless the bound is reached.
    func admit() -> Bool {
        let count = open.wrappingAdd(1, ordering: .relaxed).newValue
        guard count <= maximum else {
            open.wrappingSubtract(1, ordering: .relaxed)
            refused.wrappingAdd(1, ordering: .relaxed)
            return false
        }
        return true
    }

    func closed() { open.wrappingSubtract(1, ordering: .relaxed) }

    /// The handler that goes first in every connection's pipeline.
    func handler() -> ConnectionLimitHandler { ConnectionLimitHandler(limit: self) }

    /// Raises the soft limit on open files to `wanted`, or as far as the hard limit allows.
    /// - Returns: The soft limit now.
    static func raiseOpenFileLimit(toAtLeast wanted: Int) -> UInt64 {
        var limits = rlimit()
        guard getrlimit(Int32(RLIMIT_NOFILE.rawValue), &limits) == 0 else { return UInt64(Int.max) }
        if limits.rlim_cur == rlim_t.max || limits.rlim_cur >= UInt64(wanted) { return UInt64(limits.rlim_cur) }
        let raised = limits.rlim_max == rlim_t.max ? UInt64(wanted) : min(UInt64(limits.rlim_max), UInt64(wanted))
        var asked = limits
        asked.rlim_cur = rlim_t(raised)
        guard setrlimit(Int32(RLIMIT_NOFILE.rawValue), &asked) == 0 else { return UInt64(limits.rlim_cur) }
        return raised
    }

    /// The whole answer to a connection past the bound.
    static let refusal: [UInt8] = {
        var json = JSONWriter()
        json.beginObject()
        json.field("type", "urn:feedlayout:problem:too-many-connections")
        json.field("title", "Too many connections")
        json.field("status", 503)
        json.field(
            "detail",
            "the service has as many connections open as it may (--max-connections); try again in a moment")
        json.endObject()
        let body = json.takeBytes()
        let head =
            "HTTP/1.1 503 Service Unavailable\r\nContent-Type: application/problem+json\r\nCache-Control: no-store\r\n"
            + "Retry-After: 1\r\nConnection: close\r\nContent-Length: \(body.count)\r\n\r\n"
        return Array(head.utf8) + body
    }()
}

/// Admits a connection (and counts it out when it closes), or answers it ``ConnectionLimit/refusal`` and closes it.
///
/// A refused connection's output is shut first and what the client still sends is read and dropped for a moment:
/// closing a socket with unread bytes makes the kernel reset it, and a client then sees a reset instead of the
/// answer.
final class ConnectionLimitHandler: ChannelInboundHandler, RemovableChannelHandler {
    typealias InboundIn = ByteBuffer
    typealias InboundOut = ByteBuffer

    private let limit: ConnectionLimit
    private var decided = false
    private var refused = false

    init(limit: ConnectionLimit) { self.limit = limit }

    func handlerAdded(context: ChannelHandlerContext) {
        // Added to a connection already open: decided now, and the handler stays (it only passes bytes on).
        if context.channel.isActive { decide(context, leavingPipeline: false) }
    }

    func channelActive(context: ChannelHandlerContext) {
        context.fireChannelActive()
        decide(context, leavingPipeline: true)
    }

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        // The refused connection's bytes go nowhere; an admitted one's handler is gone from the pipeline.
        if !refused { context.fireChannelRead(data) }
    }

    func channelReadComplete(context: ChannelHandlerContext) {
        if !refused { context.fireChannelReadComplete() }
    }

    private func decide(_ context: ChannelHandlerContext, leavingPipeline: Bool) {
        guard !decided else { return }
        decided = true
        if limit.admit() {
            let limit = self.limit
            context.channel.closeFuture.whenComplete { _ in limit.closed() }
            // An admitted connection's bytes need not pass here.
            if leavingPipeline { context.pipeline.syncOperations.removeHandler(context: context, promise: nil) }
            return
        }
        refused = true
        let channel = context.channel
        context.writeAndFlush(NIOAny(ByteBuffer(bytes: ConnectionLimit.refusal))).whenComplete { _ in
            channel.close(mode: .output, promise: nil)
            channel.eventLoop.scheduleTask(in: .seconds(1)) { channel.close(promise: nil) }
        }
    }
}
