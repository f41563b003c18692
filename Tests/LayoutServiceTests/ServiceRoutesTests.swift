import ArgumentParser
import AsyncHTTPClient
import FeedLayout
import FeedLayoutTestSupport
import Foundation
import NIOCore
import NIOHTTP1
import Synchronization
import Testing

#if canImport(Glibc)
    import Glibc
#endif

import LayoutCommandLine

@testable import LayoutService

/// `feedlayout serve`'s routes, in this process, against a real store and a real HTTP client.
@Suite(.timeLimit(.minutes(5)))
struct ServiceRoutesTests {
    /// The pages the library makes for a feed with these options, read as `feedlayout layout` reads its arguments
    /// (the service reads a request's JSON on its own path): what the service must serve byte for byte.
    static func expectedPages(feed: String, arguments: [String], baseURL: String?) async throws -> [[UInt8]] {
        let options = try LayoutCommandOptions.parse(arguments + ["--no-cache", "--allow-private-network"]).options()
        var pages: [[UInt8]] = []
        _ = try await LayoutPipeline(options: options).run(.bytes(Array(feed.utf8), baseURL: baseURL)) { page in
            var json = JSONWriter()
            Records.write(page, into: &json)
            json.appendRaw("\n")
            pages.append(json.takeBytes())
        }
        return pages
    }

    @Test func aPostedFeedIsLaidOutOnceAndServedPageByPageAsTheLibraryMakesIt() async throws {
        try await TestHTTPServer.with { photos in
            try ServiceFeeds.servePhotos(photos)
            let service = try await ServiceHarness.start()
            defer { Task { await service.stop() } }
            let feed = ServiceFeeds.rss(items: 45, photoBase: photos.url("/photos/"))
            let options: [String: Any] = ["width": 600, "columns": 3, "pageSize": 10, "gutter": 12]
            let posted = try await service.post(["feedText": feed, "options": options])
            #expect(posted.status == 202, "\(posted.text)")
            let id = try #require(posted.json["id"] as? String)
            #expect(id.count == 32)
            #expect(posted.headers.first(name: "Location") == "/v1/layouts/\(id)")
            let done = try await service.waitUntilDone(id)
            #expect(done.json["status"] as? String == "done", "\(done.text)")
            #expect(done.json["items"] as? Int == 45)
            #expect(done.json["pages"] as? Int == 5)

            let expected = try await Self.expectedPages(
                feed: feed, arguments: ["--columns=3", "--gutter=12", "--page-size=10", "--width=600"], baseURL: nil)
            #expect(expected.count == 5)
            for (index, page) in expected.enumerated() {
                let reply = try await service.request(.GET, "/v1/layouts/\(id)/pages/\(index)")
                #expect(reply.status == 200)
                #expect(reply.body == page, "page \(index) is not the library's page byte for byte")
                #expect(reply.headers.first(name: "Cache-Control") == "public, max-age=31536000, immutable")
                #expect(reply.headers.first(name: "Content-Type") == "application/json")
                #expect(reply.headers.first(name: "Vary") == "Accept-Encoding")
            }
            // The same feed and options again: the same layout, not a second computation.
            let again = try await service.post(["feedText": feed, "options": ["pageSize": 10, "columns": 3, "width": 600, "gutter": 12]])
            #expect(again.status == 200)
            #expect(again.json["id"] as? String == id)
            // Past the end of a finished layout.
            let past = try await service.request(.GET, "/v1/layouts/\(id)/pages/5")
            #expect(past.status == 404)
            #expect(past.json["type"] as? String == "urn:feedlayout:problem:not-found")
        }
    }

    @Test func pagesAreGzippedOnceTaggedAndRevalidated() async throws {
        let service = try await ServiceHarness.start()
        defer { Task { await service.stop() } }
        let feed = ServiceFeeds.rss(items: 12, photoBase: "https://photos.invalid/")
        let id = try #require(try await service.post(["feedText": feed, "options": ["pageSize": 5]]).json["id"] as? String)
        _ = try await service.waitUntilDone(id)
        let plain = try await service.request(.GET, "/v1/layouts/\(id)/pages/1")
        let zipped = try await service.request(.GET, "/v1/layouts/\(id)/pages/1", headers: [("Accept-Encoding", "br, gzip;q=0.8")])
        #expect(zipped.headers.first(name: "Content-Encoding") == "gzip")
        #expect(zipped.raw.starts(with: [0x1F, 0x8B]))
        #expect(zipped.body == plain.body)
        #expect(zipped.raw.count < plain.raw.count)
        let refused = try await service.request(.GET, "/v1/layouts/\(id)/pages/1", headers: [("Accept-Encoding", "gzip;q=0")])
        #expect(refused.headers.first(name: "Content-Encoding") == nil)
        let plainTag = try #require(plain.headers.first(name: "ETag"))
        let zippedTag = try #require(zipped.headers.first(name: "ETag"))
        #expect(plainTag.hasPrefix("\"") && !plainTag.hasPrefix("W/"), "a strong tag")
        #expect(plainTag != zippedTag, "two representations, two tags")
        let notModified = try await service.request(
            .GET, "/v1/layouts/\(id)/pages/1", headers: [("If-None-Match", "\"other\", \(plainTag)")])
        #expect(notModified.status == 304)
        #expect(notModified.raw.isEmpty)
        #expect(notModified.headers.first(name: "ETag") == plainTag)
        let changed = try await service.request(.GET, "/v1/layouts/\(id)/pages/1", headers: [("If-None-Match", "\"other\"")])
        #expect(changed.status == 200)
    }

    @Test func cursorsLeadToTheNextPageAndNameNothingElse() async throws {
        let service = try await ServiceHarness.start()
        defer { Task { await service.stop() } }
        let feed = ServiceFeeds.rss(items: 30, photoBase: "https://photos.invalid/")
        let id = try #require(try await service.post(["feedText": feed, "options": ["pageSize": 8]]).json["id"] as? String)
        _ = try await service.waitUntilDone(id)
        var page = try await service.request(.GET, "/v1/layouts/\(id)/pages/0")
        var indices = [0]
        while let cursor = page.json["cursor"] as? String {
            let escaped = cursor.addingPercentEncoding(withAllowedCharacters: .urlQueryAllowed.subtracting(["+", "&", "="]))!
            page = try await service.request(.GET, "/v1/pages?cursor=\(escaped)")
            #expect(page.status == 200, "\(page.text)")
            let expected = try await service.request(.GET, "/v1/layouts/\(id)/pages/\(indices.count)")
            #expect(page.body == expected.body)
            indices.append(indices.count)
        }
        #expect(indices.count == 4)
        let unknown = try await service.request(.GET, "/v1/pages?cursor=fl3.AAAA")
        #expect(unknown.status == 404)
        let missing = try await service.request(.GET, "/v1/pages")
        #expect(missing.status == 400)
        #expect(missing.json["field"] as? String == "cursor")
    }

    @Test func viewportQueriesFindExactlyThePinsInTheRectangle() async throws {
        let service = try await ServiceHarness.start { $0.maximumItemsPerQuery = 100 }
        defer { Task { await service.stop() } }
        let feed = ServiceFeeds.rss(items: 120, photoBase: "https://photos.invalid/")
        let id = try #require(
            try await service.post(["feedText": feed, "options": ["width": 800, "columns": 4, "pageSize": 25]]).json["id"] as? String)
        _ = try await service.waitUntilDone(id)
        // Every pin's frame, from the pages.
        var frames: [Int: (x: Double, y: Double, width: Double, height: Double)] = [:]
        for index in 0..<5 {
            let page = try await service.request(.GET, "/v1/layouts/\(id)/pages/\(index)")
            for item in page.json["items"] as? [[String: Any]] ?? [] {
                let frame = item["frame"] as! [String: Any]
                frames[item["index"] as! Int] = (
                    (frame["x"] as! NSNumber).doubleValue, (frame["y"] as! NSNumber).doubleValue,
                    (frame["width"] as! NSNumber).doubleValue, (frame["height"] as! NSNumber).doubleValue
                )
            }
        }
        #expect(frames.count == 120)
        var generator = SplitMix64(seed: 7)
        let contentHeight = frames.values.map { $0.y + $0.height }.max()!
        for _ in 0..<25 {
            let x = Double.random(in: -50...800, using: &generator)
            let y = Double.random(in: -100...contentHeight, using: &generator)
            let width = Double.random(in: 1...400, using: &generator)
            let height = Double.random(in: 1...900, using: &generator)
            let reply = try await service.request(
                .GET, "/v1/layouts/\(id)/items?x=\(x)&y=\(y)&width=\(width)&height=\(height)")
            #expect(reply.status == 200)
            let found = (reply.json["items"] as? [[String: Any]] ?? []).map { $0["index"] as! Int }
            let expected = frames.filter { _, f in
                f.x < x + width && x < f.x + f.width && f.y < y + height && y < f.y + f.height
            }.keys.sorted()
            #expect(found == expected, "rectangle \(x),\(y) \(width)×\(height)")
        }
        // A rectangle over the whole layout holds more pins than one query answers.
        let whole = try await service.request(.GET, "/v1/layouts/\(id)/items?x=0&y=0&width=800&height=\(contentHeight)")
        #expect(whole.status == 400)
        #expect(whole.json["field"] as? String == "height")
        // Snapping: the nearest pin top in each direction.
        let tops = Set(frames.values.map(\.y)).sorted()
        for offset in [0.0, 3.5, tops[10] - 1, tops[10], tops[10] + 1, contentHeight + 500] {
            for direction in ["forward", "backward", "nearest"] {
                let reply = try await service.request(.GET, "/v1/layouts/\(id)/snap?offset=\(offset)&direction=\(direction)")
                #expect(reply.status == 200)
                let snapped = (reply.json["offset"] as! NSNumber).doubleValue
                let after = tops.first { $0 >= offset }
                let before = tops.last { $0 <= offset }
                let want: Double? =
                    switch direction {
                    case "forward": after ?? before
                    case "backward": before ?? after
                    default:
                        before.flatMap { b in after.map { a in offset - b <= a - offset ? b : a } } ?? before ?? after
                    }
                #expect(snapped == want, "\(direction) from \(offset)")
                let index = reply.json["index"] as! Int
                #expect(frames[index]?.y == snapped)
            }
        }
    }

    @Test(arguments: [
        (#"{"feedText": "<rss/>""#, 400, "invalid-json", nil),
        (#"[1, 2]"#, 400, "invalid-request", nil),
        (#"{}"#, 400, "invalid-request", "feed"),
        (#"{"feed": "file:///etc/passwd"}"#, 400, "invalid-request", "feed"),
        (#"{"feed": "/etc/passwd"}"#, 400, "invalid-request", "feed"),
        (#"{"feed": "https://a.invalid/f", "feedText": "<rss/>"}"#, 400, "invalid-request", "feedText"),
        (#"{"feedText": "<rss/>", "colour": "red"}"#, 400, "invalid-request", "colour"),
        (#"{"feedText": "<rss/>", "options": {"colour": 1}}"#, 400, "invalid-options", "options.colour"),
        (#"{"feedText": "<rss/>", "options": {"width": 1e300}}"#, 400, "invalid-options", "options.width"),
        (#"{"feedText": "<rss/>", "options": {"columns": "many"}}"#, 400, "invalid-options", "options.columns"),
        (#"{"feedText": "<rss/>", "options": {"rowGap": -4}}"#, 400, "invalid-options", "options.rowGap"),
        (#"{"feedText": "<rss/>", "options": {"imageRoot": "/"}}"#, 400, "invalid-options", "options.imageRoot"),
        (#"{"feedText": "<rss/>", "options": {"font": "/etc/passwd"}}"#, 400, "invalid-options", "options.font"),
        (#"{"feedText": "<rss/>", "options": {"placeholders": "yes"}}"#, 400, "invalid-options", "options.placeholders"),
        (#"{"feedText": "\u0000\u0001binary"}"#, 422, "not-a-feed", "feed"),
        (#"{"feedText": "<html><body>hi</body></html>"}"#, 422, "not-a-feed", "feed"),
        (#"{"feedText": ""}"#, 422, "not-a-feed", "feed"),
        (#"{"feed": "http://127.0.0.1:9/feed.xml"}"#, 422, "address-refused", "feed"),
    ] as [(String, Int, String, String?)])
    func badRequestsGetProblemDetailsNamingTheField(body: String, status: Int, kind: String, field: String?) async throws {
        // Private addresses refused: the one setting that makes the last case a refusal.
        let service = try await ServiceHarness.start { $0.allowPrivateNetwork = false }
        defer { Task { await service.stop() } }
        let reply = try await service.request(.POST, "/v1/layouts", body: Array(body.utf8))
        #expect(reply.status == status, "\(reply.text)")
        #expect(reply.headers.first(name: "Content-Type") == "application/problem+json")
        #expect(reply.json["type"] as? String == "urn:feedlayout:problem:" + kind, "\(reply.text)")
        #expect(reply.json["status"] as? Int == status)
        #expect((reply.json["detail"] as? String)?.isEmpty == false)
        #expect(reply.json["field"] as? String == field, "\(reply.text)")
    }

    @Test func unknownIdsRoutesAndMethodsAreProblemsToo() async throws {
        let service = try await ServiceHarness.start()
        defer { Task { await service.stop() } }
        let unknown = try await service.request(.GET, "/v1/layouts/0123456789abcdef0123456789abcdef")
        #expect(unknown.status == 404)
        let malformed = try await service.request(.GET, "/v1/layouts/..%2F..%2Fetc/pages/0")
        #expect(malformed.status == 404)
        let badIndex = try await service.request(.GET, "/v1/layouts/0123456789abcdef0123456789abcdef/pages/-1")
        #expect(badIndex.status == 400)
        let noRoute = try await service.request(.GET, "/v2/nothing")
        #expect(noRoute.status == 404)
        #expect(noRoute.headers.first(name: "Content-Type") == "application/problem+json")
        let wrongMethod = try await service.request(.PUT, "/v1/layouts/0123456789abcdef0123456789abcdef")
        #expect(wrongMethod.status == 405)
        #expect(wrongMethod.headers.first(name: "Allow") == "GET, DELETE")
        let health = try await service.request(.GET, "/healthz")
        #expect(health.status == 200)
        #expect(health.json["status"] as? String == "ok")
        let ready = try await service.request(.GET, "/readyz")
        #expect(ready.status == 200 && ready.json["status"] as? String == "ready")
        #expect(ready.headers.first(name: "Cache-Control") == "no-store")
    }

    @Test func aHugeBodyIsRefusedWithoutBeingRead() async throws {
        let service = try await ServiceHarness.start { $0.maximumFeedBytes = 100_000 }
        defer { Task { await service.stop() } }
        let feed = ServiceFeeds.rss(items: 2_000, photoBase: "https://photos.invalid/")
        let reply = try await service.post(["feedText": feed])
        #expect(reply.status == 413, "\(reply.text)")
        #expect(reply.json["type"] as? String == "urn:feedlayout:problem:feed-too-large")
    }

    @Test func metricsCountRequestsByRouteAndLayouts() async throws {
        let service = try await ServiceHarness.start()
        defer { Task { await service.stop() } }
        let id = try #require(
            try await service.post(["feedText": ServiceFeeds.rss(items: 5, photoBase: "https://photos.invalid/")]).json["id"] as? String)
        _ = try await service.waitUntilDone(id)
        _ = try await service.request(.GET, "/v1/layouts/\(id)/pages/0")
        let metrics = try await service.request(.GET, "/metrics")
        #expect(metrics.status == 200)
        #expect(metrics.headers.first(name: "Content-Type")?.hasPrefix("text/plain; version=0.0.4") == true)
        let text = metrics.text
        #expect(text.contains(#"feedlayout_http_requests_total{method="GET",route="/v1/layouts/{id}/pages/{index}",status="200"} 1"#), "\(text)")
        #expect(text.contains(#"feedlayout_http_requests_total{method="POST",route="/v1/layouts",status="202"} 1"#))
        #expect(text.contains("feedlayout_http_request_duration_seconds_bucket"))
        #expect(text.contains("feedlayout_items_laid_out_total 5"))
        #expect(text.contains("feedlayout_layouts_running 0"))
        #expect(text.contains("feedlayout_probe_cache_hits_total"))
    }
}

/// Pages in memory are answered before the router (PageFastPathHandler): the same bytes and headers as the router
/// gives, counted in the metrics, and only for exactly the page route.
@Suite(.timeLimit(.minutes(5)))
struct PageFastPathTests {
    @Test func aPageFromMemoryIsTheRoutersPageWithTheSameHeaders() async throws {
        let service = try await ServiceHarness.start()
        defer { Task { await service.stop() } }
        let id = try #require(
            try await service.post(["feedText": ServiceFeeds.rss(items: 30, photoBase: "https://photos.invalid/"),
                "options": ["pageSize": 10]]).json["id"] as? String)
        _ = try await service.waitUntilDone(id)
        for (encoding, path) in [(nil, "/pages/1"), ("gzip", "/pages/2?layout=0&wait=3")] as [(String?, String)] {
            let headers = encoding.map { [("Accept-Encoding", $0)] } ?? []
            let fromRouter = try await service.request(.GET, "/v1/layouts/\(id)" + path, headers: headers)
            let fromMemory = try await service.request(.GET, "/v1/layouts/\(id)" + path, headers: headers)
            #expect(fromRouter.status == 200 && fromMemory.status == 200)
            #expect(fromMemory.raw == fromRouter.raw)
            for name in ["Content-Type", "ETag", "Cache-Control", "Vary", "Content-Encoding", "Content-Length"] {
                #expect(fromMemory.headers.first(name: name) == fromRouter.headers.first(name: name), "\(name)")
            }
            #expect(fromMemory.headers.first(name: "Date") != nil)
        }
        // Not the page route exactly: the router answers (and refuses).
        #expect(try await service.request(.GET, "/v1/layouts/\(id)/pages/1?colour=red").status == 200)
        #expect(try await service.request(.GET, "/v1/layouts/\(id)/pages/1?layout=x").status == 400)
        #expect(try await service.request(.GET, "/v1/layouts/\(id)/pages/9").status == 404)
        let metrics = try await service.request(.GET, "/metrics").text
        #expect(metrics.contains(#"feedlayout_http_requests_total{method="GET",route="/v1/layouts/{id}/pages/{index}",status="200"} 5"#), "\(metrics)")
    }
}

/// The fast path reads requests from the connection's bytes, ahead of the HTTP decoder: pipelined requests, heads
/// that arrive in pieces, requests for the router between page requests, and requests with bodies all get their
/// answers, in order, from one connection.
@Suite(.timeLimit(.minutes(5)))
struct PageFastPathOnTheWireTests {
    /// A service with a 30-item layout in pages of 10, and every form of its pages 0 and 1 in memory.
    static func serviceWithPagesInMemory() async throws -> (ServiceHarness, String) {
        let service = try await ServiceHarness.start()
        let id = try #require(
            try await service.post(["feedText": ServiceFeeds.rss(items: 30, photoBase: "https://photos.invalid/"),
                "options": ["pageSize": 10]]).json["id"] as? String)
        _ = try await service.waitUntilDone(id)
        for page in 0..<2 {
            _ = try await service.request(.GET, "/v1/layouts/\(id)/pages/\(page)")
            _ = try await service.request(.GET, "/v1/layouts/\(id)/pages/\(page)", headers: [("Accept-Encoding", "gzip")])
        }
        return (service, id)
    }

    @Test func pipelinedRequestsAreAnsweredInOrder() async throws {
        let (service, id) = try await Self.serviceWithPagesInMemory()
        defer { Task { await service.stop() } }
        let page0 = try await service.request(.GET, "/v1/layouts/\(id)/pages/0")
        let page1 = try await service.request(.GET, "/v1/layouts/\(id)/pages/1", headers: [("Accept-Encoding", "gzip")])
        let tag = try #require(page0.headers.first(name: "ETag"))
        let requests =
            "GET /v1/layouts/\(id)/pages/0 HTTP/1.1\r\nHost: x\r\n\r\n"
            + "GET /healthz HTTP/1.1\r\nHost: x\r\n\r\n"
            + "GET /v1/layouts/\(id)/pages/1?layout=0 HTTP/1.1\r\nHost: x\r\naccept-encoding: gzip, br\r\n\r\n"
            + "GET /v1/layouts/\(id)/pages/2 HTTP/1.1\r\nHost: x\r\n\r\n"
            + "GET /v1/layouts/\(id)/pages/0 HTTP/1.1\r\nHost: x\r\nIf-None-Match: \(tag)\r\n\r\n"
        let answers = try await WireClient.exchange(port: service.port, chunks: [Array(requests.utf8)], answers: 5)
        #expect(answers.map(\.status) == [200, 200, 200, 200, 304])
        #expect(answers[0].body == page0.raw)
        #expect(answers[2].body == page1.raw && answers[2].headers["content-encoding"] == "gzip")
        #expect(answers[3].headers["etag"] != tag && answers[3].body.count > 0)
        #expect(answers[4].headers["etag"] == tag && answers[4].body.isEmpty)
        for answer in answers where answer.status == 200 {
            #expect(answer.headers["date"] != nil && answer.headers["server"] == "feedlayout")
        }
    }

    @Test func aHeadArrivingInPiecesIsAnsweredWhole() async throws {
        let (service, id) = try await Self.serviceWithPagesInMemory()
        defer { Task { await service.stop() } }
        let page = try await service.request(.GET, "/v1/layouts/\(id)/pages/1")
        let bytes = Array("GET /v1/layouts/\(id)/pages/1 HTTP/1.1\r\nHost: x\r\nAccept: */*\r\n\r\n".utf8)
        // Pieces of 1 to 7 bytes in turn: lines, and the empty line that ends the head, end inside pieces.
        var chunks: [[UInt8]] = []
        var start = 0
        while start < bytes.count {
            let end = min(bytes.count, start + 1 + chunks.count % 7)
            chunks.append(Array(bytes[start..<end]))
            start = end
        }
        let answers = try await WireClient.exchange(port: service.port, chunks: chunks + chunks, answers: 2)
        #expect(answers.map(\.status) == [200, 200])
        #expect(answers.allSatisfy { $0.body == page.raw })
    }

    @Test func aRequestWithABodyHandsTheConnectionToTheDecoder() async throws {
        let (service, id) = try await Self.serviceWithPagesInMemory()
        defer { Task { await service.stop() } }
        let page = try await service.request(.GET, "/v1/layouts/\(id)/pages/0")
        // A body the service refuses at once (a feed must be a URL): no layout work while the test waits.
        let body = #"{"feed": 5}"#
        let requests =
            "GET /v1/layouts/\(id)/pages/0 HTTP/1.1\r\nHost: x\r\n\r\n"
            + "POST /v1/layouts HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nContent-Length: \(body.utf8.count)\r\n\r\n\(body)"
            + "GET /v1/layouts/\(id)/pages/0 HTTP/1.1\r\nHost: x\r\n\r\n"
        let answers = try await WireClient.exchange(port: service.port, chunks: [Array(requests.utf8)], answers: 3)
        #expect(answers.count == 3)
        #expect(answers[0].body == page.raw && answers[2].body == page.raw)
        #expect(answers[1].status == 400, "\(answers[1].status)")
    }

    /// The request deadline (1 s here) runs from each answer: a connection the fast path answers every 300 ms stays
    /// open for 2.4 s, and is closed once idle. When exactly (a deadline after the last answer) is checked on an
    /// embedded event loop's clock by RequestDeadlineHandlerTests; here, that the service's pipeline keeps the
    /// connection open while it answers and closes it when idle.
    @Test func theDeadlineRunsFromTheLastAnswer() async throws {
        let service = try await ServiceHarness.start { $0.requestTimeout = .seconds(1) }
        defer { Task { await service.stop() } }
        let id = try #require(
            try await service.post(["feedText": ServiceFeeds.rss(items: 30, photoBase: "https://photos.invalid/"),
                "options": ["pageSize": 10]]).json["id"] as? String)
        _ = try await service.waitUntilDone(id)
        _ = try await service.request(.GET, "/v1/layouts/\(id)/pages/0")
        let request = Array("GET /v1/layouts/\(id)/pages/0 HTTP/1.1\r\nHost: x\r\n\r\n".utf8)
        let (answers, closedAfter) = try await WireClient.exchangeAndWatch(
            port: service.port, chunks: Array(repeating: request, count: 8), answers: 8, interval: 300_000,
            watchClose: true)
        #expect(answers.map(\.status) == Array(repeating: 200, count: 8))
        // Nothing else closes an idle connection: the service has no other idle timeout. (The client's watch ends
        // after a minute, so that a service that never closes fails the test instead of hanging it.)
        #expect(closedAfter != nil, "the idle connection was not closed")
    }

    @Test func whatIsNotAPlainHeadGoesToTheDecoder() async throws {
        let (service, id) = try await Self.serviceWithPagesInMemory()
        defer { Task { await service.stop() } }
        // Bare line feeds: the decoder answers (or refuses) it; the connection never waits for more.
        let bare = try await WireClient.exchange(
            port: service.port, chunks: [Array("GET /v1/layouts/\(id)/pages/0 HTTP/1.1\nHost: x\n\n".utf8)],
            answers: 1)
        #expect(bare.count == 1)
        // Connection: close: answered, then closed.
        let closing = try await WireClient.exchange(
            port: service.port,
            chunks: [Array("GET /v1/layouts/\(id)/pages/0 HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n".utf8)],
            answers: 2)
        #expect(closing.map(\.status) == [200])
    }
}

/// A blocking loopback client that writes bytes as given and reads HTTP/1.1 answers (Content-Length or chunked
/// bodies), for what an HTTP client library would not send: pipelined requests, heads in pieces.
enum WireClient {
    struct Answer {
        var status: Int
        /// Header names lowercased.
        var headers: [String: String]
        var body: [UInt8]
    }

    /// Sends each chunk (`interval` microseconds apart), then reads up to `answers` answers; fewer when the server
    /// closes first.
    static func exchange(
        port: Int, chunks: [[UInt8]], answers count: Int, interval: UInt32 = 10_000
    ) async throws -> [Answer] {
        try await exchangeAndWatch(port: port, chunks: chunks, answers: count, interval: interval).answers
    }

    /// As ``exchange(port:chunks:answers:interval:)``, then waits up to 60 s for the server to close the
    /// connection: how long that took after the last answer, or nil when it stayed open.
    static func exchangeAndWatch(
        port: Int, chunks: [[UInt8]], answers count: Int, interval: UInt32 = 10_000, watchClose: Bool = false
    ) async throws -> (answers: [Answer], closedAfter: Duration?) {
        try await onThreadOfItsOwn {
            try blockingExchange(port: port, chunks: chunks, answers: count, interval: interval, watchClose: watchClose)
        }
    }

    /// A blocking TCP socket connected to the service on loopback, whose reads give up after `receiveTimeout`.
    static func connectedSocket(port: Int, receiveTimeout: timeval) throws -> Int32 {
        let descriptor = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        guard descriptor >= 0 else { throw TestInputError(message: "socket failed") }
        // NIO's address: the C structure is declared by two modules here (Glibc and NIO's CNIOLinux).
        let address = try SocketAddress(ipAddress: "127.0.0.1", port: port)
        let connected = address.withSockAddr { pointer, size in connect(descriptor, pointer, socklen_t(size)) }
        guard connected == 0 else {
            close(descriptor)
            throw TestInputError(message: "connect failed")
        }
        var timeout = receiveTimeout
        setsockopt(descriptor, SOL_SOCKET, SO_RCVTIMEO, &timeout, socklen_t(MemoryLayout<timeval>.size))
        return descriptor
    }

    /// Runs blocking socket work on a thread of its own: on the cooperative pool's few threads it would starve the
    /// service under test, whose router runs there in this same process.
    static func onThreadOfItsOwn<Result: Sendable>(_ work: @escaping @Sendable () throws -> Result) async throws -> Result {
        try await withCheckedThrowingContinuation { continuation in
            Thread { continuation.resume(with: Swift.Result { try work() }) }.start()
        }
    }

    private static func blockingExchange(
        port: Int, chunks: [[UInt8]], answers count: Int, interval: UInt32, watchClose: Bool
    ) throws -> (answers: [Answer], closedAfter: Duration?) {
        let descriptor = try connectedSocket(port: port, receiveTimeout: timeval(tv_sec: 30, tv_usec: 0))
        defer { close(descriptor) }
        for (index, chunk) in chunks.enumerated() {
            if index > 0 { usleep(interval) }
            guard chunk.withUnsafeBytes({ send(descriptor, $0.baseAddress, $0.count, Int32(MSG_NOSIGNAL)) }) == chunk.count
            else { throw TestInputError(message: "send failed") }
        }
        var reader = Reader(descriptor: descriptor)
        var answers: [Answer] = []
        while answers.count < count, let answer = try reader.answer() { answers.append(answer) }
        guard watchClose else { return (answers, nil) }
        let answered = ContinuousClock.now
        var watch = timeval(tv_sec: 60, tv_usec: 0)
        setsockopt(descriptor, SOL_SOCKET, SO_RCVTIMEO, &watch, socklen_t(MemoryLayout<timeval>.size))
        var byte: UInt8 = 0
        return (answers, recv(descriptor, &byte, 1, 0) == 0 ? ContinuousClock.now - answered : nil)
    }

    private struct Reader {
        let descriptor: Int32
        var bytes: [UInt8] = []

        /// Reads until `bytes` holds `count` bytes; false when the connection ended first.
        mutating func fill(_ count: Int) throws -> Bool {
            var buffer = [UInt8](repeating: 0, count: 65536)
            while bytes.count < count {
                let received = recv(descriptor, &buffer, buffer.count, 0)
                if received == 0 { return false }
                guard received > 0 else { throw TestInputError(message: "no answer within 30 s (errno \(errno))") }
                bytes += buffer[0..<received]
            }
            return true
        }

        mutating func line() throws -> String? {
            while true {
                if let end = bytes.firstIndex(of: UInt8(ascii: "\n")) {
                    let line = String(decoding: bytes[0..<end], as: UTF8.self).trimmingCharacters(in: .whitespacesAndNewlines)
                    bytes.removeFirst(end + 1)
                    return line
                }
                guard try fill(bytes.count + 1) else { return nil }
            }
        }

        mutating func take(_ count: Int) throws -> [UInt8] {
            guard try fill(count) else { throw TestInputError(message: "the body ended early") }
            defer { bytes.removeFirst(count) }
            return Array(bytes[0..<count])
        }

        mutating func answer() throws -> Answer? {
            guard let statusLine = try line(), !statusLine.isEmpty else { return nil }
            let status = Int(statusLine.split(separator: " ")[1]) ?? 0
            var headers: [String: String] = [:]
            while let header = try line(), !header.isEmpty {
                let parts = header.split(separator: ":", maxSplits: 1)
                headers[parts[0].lowercased()] = parts.count > 1 ? parts[1].trimmingCharacters(in: .whitespaces) : ""
            }
            var body: [UInt8] = []
            if let length = headers["content-length"].flatMap(Int.init) {
                body = try take(length)
            } else if headers["transfer-encoding"]?.contains("chunked") == true {
                while let size = try line().flatMap({ Int($0, radix: 16) }), size > 0 {
                    body += try take(size)
                    _ = try line()
                }
                _ = try line()
            }
            return Answer(status: status, headers: headers, body: body)
        }
    }
}

/// What the service answers once it has begun to stop (a SIGTERM's graceful shutdown), before its listener closes.
@Suite struct StoppingServiceTests {
    @Test func healthIs503WithRetryAfterAndWritesAreRefusedOnceStopping() async throws {
        let service = try await ServiceHarness.start()
        defer { Task { await service.stop() } }
        #expect(try await service.request(.GET, "/healthz").status == 200)
        // What StoppingFlag does at the start of a graceful shutdown.
        service.server.handlers.isStopping.store(true, ordering: .relaxed)
        let health = try await service.request(.GET, "/healthz")
        #expect(health.status == 503)
        #expect(health.json["status"] as? String == "stopping")
        #expect(health.headers.first(name: "Retry-After") == "5")
        let post = try await service.post(["feedText": ServiceFeeds.rss(items: 2, photoBase: "https://photos.invalid/")])
        #expect(post.status == 503)
        #expect(post.headers.first(name: "Retry-After") == "5")
        #expect(post.json["type"] as? String == "urn:feedlayout:problem:unavailable")
    }
}
