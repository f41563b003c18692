import AsyncHTTPClient
import FeedLayoutTestSupport
import Foundation
import NIOCore
import NIOHTTP1
import NIOPosix
import Testing

#if canImport(Glibc)
    import Glibc
#endif

@testable import LayoutService

/// What a client can do wrong, on purpose or not, and what the service does then: each case bounded in count and
/// time, all on loopback.
@Suite(.timeLimit(.minutes(5)))
struct ServiceRobustnessTests {
    @Test func aClientThatDribblesARequestIsCutOff() async throws {
        let service = try await ServiceHarness.start { $0.requestTimeout = .seconds(1) }
        defer { Task { await service.stop() } }
        // A plain socket: one byte every 300 ms, never idle, and a header that never ends (so however late the
        // service's event loop runs, it cannot read a whole request and answer it). Without a deadline the
        // connection would stay open as long as the bytes come; the test gives up after 200 of them (60 s).
        let request =
            Array("GET /healthz HTTP/1.1\r\nHost: x\r\nX-Slow: ".utf8) + Array(repeating: UInt8(ascii: "a"), count: 200)
        let outcome = try await WireClient.onThreadOfItsOwn { try Self.dribble(request, toPort: service.port) }
        // When exactly it is cut off is RequestDeadlineHandlerTests' business, on a clock of its own.
        guard case .closed(let sent) = outcome else {
            Issue.record("a request dribbled in for 60 s was neither cut off nor refused (\(outcome))")
            return
        }
        #expect(sent < request.count)
        // The service still answers others.
        #expect(try await service.request(.GET, "/healthz").status == 200)
    }

    enum DribbleOutcome { case closed(sent: Int), answered, stillOpen }

    /// Sends `bytes` one at a time, 300 ms apart, watching for the server closing the connection (or answering).
    static func dribble(_ bytes: [UInt8], toPort port: Int) throws -> DribbleOutcome {
        let descriptor = try WireClient.connectedSocket(port: port, receiveTimeout: timeval(tv_sec: 0, tv_usec: 300_000))
        defer { close(descriptor) }
        var buffer = [UInt8](repeating: 0, count: 256)
        for (index, byte) in bytes.enumerated() {
            var one = byte
            if send(descriptor, &one, 1, Int32(MSG_NOSIGNAL)) < 0 { return .closed(sent: index) }
            let received = recv(descriptor, &buffer, buffer.count, 0)
            if received == 0 { return .closed(sent: index + 1) }
            if received > 0 { return .answered }
        }
        return .stillOpen
    }

    @Test func tenThousandRequestsForUnknownLayoutsAreAnsweredAndCostNothing() async throws {
        let service = try await ServiceHarness.start()
        defer { Task { await service.stop() } }
        try await withThrowingTaskGroup(of: Int.self) { group in
            for worker in 0..<8 {
                group.addTask {
                    var notFound = 0
                    for index in stride(from: worker, to: 10_000, by: 8) {
                        let id = String(format: "%032x", index)
                        let reply = try await service.request(.GET, "/v1/layouts/\(id)/pages/0", record: false)
                        if reply.status == 404 { notFound += 1 }
                    }
                    return notFound
                }
            }
            var total = 0
            for try await count in group { total += count }
            #expect(total == 10_000)
        }
        #expect(try await service.request(.GET, "/healthz").status == 200)
    }

    @Test func aFeedURLThatNeverAnswersEndsInA422() async throws {
        try await TestHTTPServer.with { server in
            // The head never comes: the gate is never opened.
            let gate = ResponseGate(holdingAt: .beforeHead)
            server.serve("/silent.xml", .init(body: Array("<rss/>".utf8), gate: gate))
            // The total timeout is an hour: only the wait for the head (the connect and read timeouts, 5 s + 1 s)
            // can end the fetch before the harness's client gives up (120 s). Which timer ended it is read from the
            // problem's detail, not timed: a loaded machine delays any timer, and a bound wide enough for that
            // could not tell the read timeout from the total one.
            let service = try await ServiceHarness.start {
                $0.feedReadTimeout = .seconds(1)
                $0.feedTotalTimeout = .seconds(3600)
            }
            defer { Task { await service.stop() } }
            let reply = try await service.post(["feed": server.url("/silent.xml")])
            #expect(reply.status == 422, "\(reply.text)")
            #expect(reply.json["type"] as? String == "urn:feedlayout:problem:feed-unreachable")
            let detail = reply.json["detail"] as? String ?? ""
            #expect(detail.contains("did not answer within 6.0 seconds (the connect and read timeouts)"), "\(detail)")
            gate.open()
        }
    }

    @Test func aFeedThatArrivesSlowlyButSteadilyIsReadWhole() async throws {
        try await TestHTTPServer.with { server in
            let feed = ServiceFeeds.rss(items: 40, photoBase: "https://photos.invalid/")
            // 40 chunks, 100 ms apart: 4 s in all, twice the total timeout of 2 s, each gap well within the read
            // timeout between bytes (long: a loaded machine may delay a chunk by seconds).
            server.serve(
                "/slow.xml",
                .init(body: Array(feed.utf8), contentType: "application/rss+xml", chunkDelay: .milliseconds(100),
                      chunkSize: feed.utf8.count / 40 + 1))
            let service = try await ServiceHarness.start {
                $0.feedReadTimeout = .seconds(20)
                $0.feedTotalTimeout = .seconds(2)
            }
            defer { Task { await service.stop() } }
            let reply = try await service.post(["feed": server.url("/slow.xml")])
            #expect(reply.status == 202, "\(reply.text)")
            let id = try #require(reply.json["id"] as? String)
            let done = try await service.waitUntilDone(id)
            #expect(done.json["items"] as? Int == 40)
        }
    }

    @Test func concurrentPostsOfOneFeedComputeItOnce() async throws {
        let service = try await ServiceHarness.start()
        defer { Task { await service.stop() } }
        let feed = ServiceFeeds.rss(items: 200, photoBase: "https://photos.invalid/")
        let statuses = try await withThrowingTaskGroup(of: (Int, String?).self) { group in
            for _ in 0..<8 {
                group.addTask {
                    let reply = try await service.post(["feedText": feed, "options": ["pageSize": 20]])
                    return (reply.status, reply.json["id"] as? String)
                }
            }
            var all: [(Int, String?)] = []
            for try await reply in group { all.append(reply) }
            return all
        }
        #expect(Set(statuses.compactMap(\.1)).count == 1)
        #expect(statuses.filter { $0.0 == 202 }.count == 1, "\(statuses)")
        #expect(statuses.filter { $0.0 == 200 }.count == 7)
        let id = statuses[0].1!
        let done = try await service.waitUntilDone(id)
        #expect(done.json["pages"] as? Int == 10)
        let metrics = try await service.request(.GET, "/metrics").text
        #expect(metrics.contains("feedlayout_items_laid_out_total 200"), "laid out more than once:\n\(metrics)")
    }

    @Test func aPageNotMadeYetIsWaitedForThenServed() async throws {
        try await TestHTTPServer.with { server in
            // Every photo answers after 150 ms: the layout takes a second or more, page by page.
            let photo = try Data(
                contentsOf: ServiceFeeds.repositoryRoot.appendingPathComponent("sample-feed/photos/chelsea-the-cat.jpg"))
            var feed = #"<?xml version="1.0"?><rss version="2.0" xmlns:media="http://search.yahoo.com/mrss/"><channel><title>t</title>"#
            for index in 0..<60 {
                server.serve(
                    "/photos/\(index).jpg",
                    .init(body: [UInt8](photo), contentType: "image/jpeg", headDelay: .milliseconds(150)))
                feed += "<item><guid>\(index)</guid><title>Pin \(index)</title>"
                feed += "<media:content url=\"\(server.url("/photos/\(index).jpg"))\" medium=\"image\"/></item>"
            }
            feed += "</channel></rss>"
            let service = try await ServiceHarness.start()
            defer { Task { await service.stop() } }
            let reply = try await service.post(["feedText": feed, "options": ["pageSize": 10]])
            let id = try #require(reply.json["id"] as? String)
            let notYet = try await service.request(.GET, "/v1/layouts/\(id)/pages/5?wait=0")
            #expect(notYet.status == 404, "\(notYet.text)")
            #expect(notYet.json["type"] as? String == "urn:feedlayout:problem:page-not-ready")
            #expect(notYet.json["layoutStatus"] as? String == "running")
            let last = try await service.request(.GET, "/v1/layouts/\(id)/pages/5?wait=30")
            #expect(last.status == 200, "\(last.text)")
            #expect((last.json["page"] as? [String: Any])?["index"] as? Int == 5)
        }
    }
}
