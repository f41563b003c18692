import HTTPTypes
import NIOCore
import NIOEmbedded
import NIOHTTPTypes
import Testing

@testable import LayoutService

/// The request deadline (``RequestDeadlineHandler``) on an embedded channel, whose event loop's clock moves only when
/// the test moves it (`advanceTime`): each case is looked at a nanosecond before its deadline and at it, exactly,
/// with no sleeps and no bounds for a busy machine.
@Suite struct RequestDeadlineHandlerTests {
    static let deadline = TimeAmount.seconds(1)
    static let request = HTTPRequestPart.head(
        HTTPRequest(method: .get, scheme: "http", authority: "x", path: "/v1/layouts/0/pages/0"))
    static let post = HTTPRequestPart.head(
        HTTPRequest(method: .post, scheme: "http", authority: "x", path: "/v1/layouts"))

    /// A channel with the handler, connected at time 0 of its event loop.
    static func connection() throws -> EmbeddedChannel {
        let channel = EmbeddedChannel()
        try channel.pipeline.syncOperations.addHandler(RequestDeadlineHandler(deadline: deadline))
        try channel.connect(to: SocketAddress(ipAddress: "127.0.0.1", port: 9)).wait()
        return channel
    }

    /// Runs the channel's event loop to `time` after the connection opened.
    static func advance(_ channel: EmbeddedChannel, to time: TimeAmount) {
        channel.embeddedEventLoop.advanceTime(to: .uptimeNanoseconds(0) + time)
    }

    static func passedOn(_ channel: EmbeddedChannel) throws -> [HTTPRequestPart] {
        var parts: [HTTPRequestPart] = []
        while let part = try channel.readInbound(as: HTTPRequestPart.self) { parts.append(part) }
        return parts
    }

    @Test func aConnectionThatSendsNothingIsClosedAtTheDeadline() throws {
        let channel = try Self.connection()
        defer { _ = try? channel.finish() }
        Self.advance(channel, to: Self.deadline - .nanoseconds(1))
        #expect(channel.isActive)
        Self.advance(channel, to: Self.deadline)
        #expect(!channel.isActive)
    }

    /// A client that keeps sending, never idle, but never finishes its request (a slow loris) is cut off when its
    /// deadline comes, with what it sent passed on so far.
    @Test func aRequestNotWholeAtItsDeadlineIsCutOff() throws {
        let channel = try Self.connection()
        defer { _ = try? channel.finish() }
        Self.advance(channel, to: .milliseconds(300))
        try channel.writeInbound(Self.post)
        for milliseconds in stride(from: 400, through: 900, by: 100) {
            Self.advance(channel, to: .milliseconds(Int64(milliseconds)))
            try channel.writeInbound(HTTPRequestPart.body(ByteBuffer(string: "{")))
        }
        Self.advance(channel, to: Self.deadline - .nanoseconds(1))
        #expect(channel.isActive)
        #expect(try Self.passedOn(channel).count == 7)
        Self.advance(channel, to: Self.deadline)
        #expect(!channel.isActive)
        // What arrives of the request after the cut goes nowhere.
        _ = try? channel.writeInbound(HTTPRequestPart.end(nil))
        #expect(try Self.passedOn(channel) == [])
    }

    /// A request whose end arrives a nanosecond before the deadline is served; while the service works on it, no
    /// deadline runs, however long it takes.
    @Test func aRequestWholeJustInTimeIsServedHoweverLongTheServiceTakes() throws {
        let channel = try Self.connection()
        defer { _ = try? channel.finish() }
        Self.advance(channel, to: Self.deadline - .nanoseconds(1))
        try channel.writeInbound(Self.request)
        try channel.writeInbound(HTTPRequestPart.end(nil))
        #expect(try Self.passedOn(channel) == [Self.request, .end(nil)])
        Self.advance(channel, to: .seconds(60))
        #expect(channel.isActive)
    }

    /// The next request's deadline (and a kept-alive connection's idle time) runs from the end of the previous
    /// answer.
    @Test func theDeadlineRunsFromTheEndOfTheLastAnswer() throws {
        let channel = try Self.connection()
        defer { _ = try? channel.finish() }
        Self.advance(channel, to: .milliseconds(200))
        try channel.writeInbound(Self.request)
        try channel.writeInbound(HTTPRequestPart.end(nil))
        // The service answers 5 s later: its head first, then, 100 ms on, the end of its body.
        Self.advance(channel, to: .milliseconds(5_200))
        try channel.writeOutbound(HTTPResponsePart.head(HTTPResponse(status: .ok)))
        Self.advance(channel, to: .milliseconds(5_300))
        try channel.writeOutbound(HTTPResponsePart.end(nil))
        Self.advance(channel, to: .milliseconds(6_300) - .nanoseconds(1))
        #expect(channel.isActive)
        Self.advance(channel, to: .milliseconds(6_300))
        #expect(!channel.isActive)
    }

    /// An answer the page fast path gave (it answers before the HTTP decoder, so this handler never sees the
    /// request) starts the next deadline as the router's answers do.
    @Test func anAnswerOfThePageFastPathStartsTheNextDeadline() throws {
        let channel = try Self.connection()
        defer { _ = try? channel.finish() }
        Self.advance(channel, to: .milliseconds(900))
        channel.pipeline.fireUserInboundEventTriggered(PageFastPathHandler.RequestAnswered())
        Self.advance(channel, to: .milliseconds(1_900) - .nanoseconds(1))
        #expect(channel.isActive)
        Self.advance(channel, to: .milliseconds(1_900))
        #expect(!channel.isActive)
    }

    /// An event loop that runs late reads the bytes that piled up before it runs its timers: a request that a slow
    /// client finished after its deadline is then read before the check that would have closed the connection. No
    /// part of it is passed on (the decoder hands over the parts it decoded from one read after the close, too).
    @Test func aRequestPastItsDeadlineIsNotPassedOnEvenBeforeTheCheckRuns() throws {
        let channel = EmbeddedChannel()
        defer { _ = try? channel.finish() }
        // Scheduled before the handler schedules its check for the same instant, so it runs first, as the late
        // loop's reads do (an embedded loop runs the tasks due at one time in the order they were scheduled).
        channel.embeddedEventLoop.scheduleTask(deadline: .uptimeNanoseconds(0) + Self.deadline) {
            _ = try? channel.writeInbound(Self.request)
            _ = try? channel.writeInbound(HTTPRequestPart.end(nil))
        }
        try channel.pipeline.syncOperations.addHandler(RequestDeadlineHandler(deadline: Self.deadline))
        try channel.connect(to: SocketAddress(ipAddress: "127.0.0.1", port: 9)).wait()
        Self.advance(channel, to: Self.deadline)
        #expect(try Self.passedOn(channel) == [])
        #expect(!channel.isActive)
    }
}
