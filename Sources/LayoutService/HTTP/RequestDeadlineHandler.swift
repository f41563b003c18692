import NIOCore
import NIOHTTPTypes

/// Closes a connection whose client takes longer than the deadline to send a whole request.
///
/// An idle timeout alone does not stop a slow-loris client: one byte a second is never idle, and a server that
/// waits for such requests runs out of connections. The deadline runs from the moment the connection opens, or
/// the previous response ends (or ``PageFastPathHandler`` answered the previous request), to the end of the
/// request's body; while the service itself works on a request (a layout waiting for its page, say), no deadline
/// runs.
///
/// The handler notes times rather than arming a timer per request: one check per deadline and connection is
/// enough, where a timer scheduled and cancelled for every request of a busy keep-alive connection took 3.4 % of the
/// service's CPU under load (perf, page requests from wrk).
///
/// Every time it notes or compares is the channel's event loop's (`EventLoop.now`), the clock its checks are
/// scheduled on: on an `EmbeddedEventLoop` a test moves that clock with `advanceTime(by:)` and sees the deadline
/// met to the nanosecond.
final class RequestDeadlineHandler: ChannelDuplexHandler, RemovableChannelHandler {
    typealias InboundIn = HTTPRequestPart
    typealias InboundOut = HTTPRequestPart
    typealias OutboundIn = HTTPResponsePart
    typealias OutboundOut = HTTPResponsePart

    private let deadline: TimeAmount
    /// Since when the client owes the service a whole request; nil while the service works on one.
    private var waitingSince: NIODeadline?
    private var check: Scheduled<Void>?
    /// Set once the handler has closed the connection for a deadline: the rest of the request that a read brought
    /// (the decoder still passes on what it had decoded) goes nowhere either.
    private var cutOff = false

    init(deadline: TimeAmount) { self.deadline = deadline }

    func handlerAdded(context: ChannelHandlerContext) {
        if context.channel.isActive { startWaiting(context) }
    }

    func channelActive(context: ChannelHandlerContext) {
        startWaiting(context)
        context.fireChannelActive()
    }

    func handlerRemoved(context: ChannelHandlerContext) { stop() }

    func channelInactive(context: ChannelHandlerContext) {
        stop()
        context.fireChannelInactive()
    }

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        // A request whose deadline has passed is not served, even before the check has run: an event loop held up
        // for longer than the deadline reads the bytes that piled up first, and would otherwise pass on a request
        // that a slow client dribbled in.
        if cutOff { return }
        if let since = waitingSince, context.eventLoop.now - since >= deadline {
            cutOff = true
            waitingSince = nil
            context.close(promise: nil)
            return
        }
        if case .end = unwrapInboundIn(data) { waitingSince = nil }
        context.fireChannelRead(data)
    }

    func userInboundEventTriggered(context: ChannelHandlerContext, event: Any) {
        guard event is PageFastPathHandler.RequestAnswered else {
            context.fireUserInboundEventTriggered(event)
            return
        }
        startWaiting(context)
    }

    func write(context: ChannelHandlerContext, data: NIOAny, promise: EventLoopPromise<Void>?) {
        if case .end = unwrapOutboundIn(data) { startWaiting(context) }
        context.write(data, promise: promise)
    }

    private func startWaiting(_ context: ChannelHandlerContext) {
        let now = context.eventLoop.now
        waitingSince = now
        if check == nil { scheduleCheck(context, at: now + deadline) }
    }

    /// At `time`, closes the connection if the client still owes a request begun a deadline ago; else looks again
    /// a deadline after the current wait began (or, while the service works, a deadline from now).
    private func scheduleCheck(_ context: ChannelHandlerContext, at time: NIODeadline) {
        let loopBound = NIOLoopBound((self, context), eventLoop: context.eventLoop)
        check = context.eventLoop.scheduleTask(deadline: time) {
            let (handler, context) = loopBound.value
            handler.check = nil
            let now = context.eventLoop.now
            if let since = handler.waitingSince, now - since >= handler.deadline {
                handler.cutOff = true
                context.close(promise: nil)
            } else {
                handler.scheduleCheck(context, at: (handler.waitingSince ?? now) + handler.deadline)
            }
        }
    }

    private func stop() {
        check?.cancel()
        check = nil
        waitingSince = nil
    }
}
