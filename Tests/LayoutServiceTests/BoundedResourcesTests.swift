import AsyncHTTPClient
import FeedLayoutTestSupport
import Foundation
import LayoutStore
import Logging
import NIOCore
import NIOEmbedded
import NIOHTTP1
import Testing

@testable import LayoutService

#if canImport(Glibc)
    import Glibc
#endif

/// The service's bounds, through its routes: bytes of uploads in flight, items per layout, open connections.
@Suite(.timeLimit(.minutes(5)))
struct BoundedResourcesTests {
    // MARK: --max-upload-bytes-in-flight

    @Test func aPostBeyondTheUploadBudgetWaitsThenGetsA503WithRetryAfter() async throws {
        let service = try await ServiceHarness.start { settings in
            settings.maximumUploadBytesInFlight = 100_000
            // Waits a third of this (1 s) before the 503.
            settings.requestTimeout = .seconds(3)
        }
        defer { Task { await service.stop() } }
        let budget = service.server.handlers.uploadBudget
        #expect(budget.capacity == 100_000)
        #expect(service.settings.uploadWaitLimit == .seconds(1))
        let feed = ServiceFeeds.rss(items: 120, photoBase: "http://127.0.0.1:9/photos/")
        #expect(feed.utf8.count > 20_000, "the body must not fit beside the held bytes")

        // Another upload holds 90 % of the budget.
        let held = UploadBudget.Reservation(budget: budget)
        try await held.grow(to: 90_000)
        let refused = try await service.post(["feedText": feed])
        #expect(refused.status == 503, "\(refused.text)")
        #expect(refused.json["type"] as? String == "urn:feedlayout:problem:uploads-busy")
        #expect((refused.json["detail"] as? String)?.contains("--max-upload-bytes-in-flight") == true)
        #expect(refused.headers.first(name: "Retry-After") == "2")
        #expect(refused.headers.first(name: "Content-Type") == "application/problem+json")
        #expect(budget.available == 10_000, "the refused post holds nothing")
        let metrics = try await service.request(.GET, "/metrics").text
        #expect(metrics.contains("feedlayout_uploads_refused_total 1"), "\(metrics)")
        #expect(metrics.contains("feedlayout_upload_bytes_reserved 90000"), "\(metrics)")

        // Once the bytes come back, the same post goes through, and gives its own back with its answer.
        held.release()
        let accepted = try await service.post(["feedText": feed])
        #expect(accepted.status == 202, "\(accepted.text)")
        #expect(budget.available == 100_000)

        // The 503 is the one the OpenAPI document promises.
        let file = FileManager.default.temporaryDirectory.appendingPathComponent("exchanges-\(UUID().uuidString).jsonl")
        try service.recordedExchanges.write(to: file, atomically: true, encoding: .utf8)
        defer { try? FileManager.default.removeItem(at: file) }
        let (status, text) = try await OpenAPICheckerTests.check(["responses", file.path])
        #expect(status == 0, "the OpenAPI check failed:\n\(text)")
    }

    @Test func aPostThatWaitsIsServedWhenBytesComeBackWithinTheWait() async throws {
        let service = try await ServiceHarness.start { settings in
            settings.maximumUploadBytesInFlight = 100_000
            settings.requestTimeout = .seconds(60)
        }
        defer { Task { await service.stop() } }
        let budget = service.server.handlers.uploadBudget
        let held = UploadBudget.Reservation(budget: budget)
        try await held.grow(to: 90_000)
        let feed = ServiceFeeds.rss(items: 120, photoBase: "http://127.0.0.1:9/photos/")
        let post = Task { try await service.post(["feedText": feed]) }
        // The post waits in the budget's line (its body unread) until the held bytes come back.
        for _ in 0..<2_000 where budget.waiting == 0 { try await Task.sleep(for: .milliseconds(5)) }
        #expect(budget.waiting == 1)
        held.release()
        let reply = try await post.value
        #expect(reply.status == 202, "\(reply.text)")
        #expect(budget.available == 100_000)
    }

    @Test func aChunkedBodyIsReservedAsItArrivesAndABodyOverTheLimitIsStillA413() async throws {
        let service = try await ServiceHarness.start { settings in
            settings.maximumUploadBytesInFlight = 1_000_000
            settings.maximumFeedBytes = 50_000
        }
        defer { Task { await service.stop() } }
        let feed = ServiceFeeds.rss(items: 20, photoBase: "http://127.0.0.1:9/photos/")
        let body = Array(try JSONSerialization.data(withJSONObject: ["feedText": feed]))
        // Chunked transfer coding: no Content-Length to reserve by, so the bytes are reserved chunk by chunk.
        var chunked = Array(
            "POST /v1/layouts HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nTransfer-Encoding: chunked\r\n\r\n"
                .utf8)
        for start in stride(from: 0, to: body.count, by: 1000) {
            let piece = body[start..<min(body.count, start + 1000)]
            chunked += Array(String(piece.count, radix: 16).utf8) + [13, 10] + piece + [13, 10]
        }
        chunked += Array("0\r\n\r\n".utf8)
        let answers = try await WireClient.exchange(port: service.port, chunks: [chunked], answers: 1)
        #expect(answers.first?.status == 202, "\(String(decoding: answers.first?.body ?? [], as: UTF8.self))")

        let large = Array(
            "POST /v1/layouts HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nContent-Length: 900000\r\n\r\n"
                .utf8)
        let tooLarge = try await WireClient.exchange(port: service.port, chunks: [large], answers: 1)
        #expect(tooLarge.first?.status == 413)
        #expect(service.server.handlers.uploadBudget.available == 1_000_000)
    }

    // MARK: --max-items

    @Test func aLayoutStopsAtThePageHoldingItsLastAllowedItemWithATruncatedWarning() async throws {
        try await TestHTTPServer.with { photos in
            try ServiceFeeds.servePhotos(photos)
            let service = try await ServiceHarness.start { $0.maximumItems = 15 }
            defer { Task { await service.stop() } }
            let feed = ServiceFeeds.rss(items: 45, photoBase: photos.url("/photos/"))
            let options: [String: Any] = ["width": 600, "columns": 3, "pageSize": 10, "gutter": 12]
            let posted = try await service.post(["feedText": feed, "options": options])
            #expect(posted.status == 202, "\(posted.text)")
            let id = try #require(posted.json["id"] as? String)
            let done = try await service.waitUntilDone(id)
            #expect(done.json["status"] as? String == "done", "\(done.text)")
            // Pages are never cut: item 15 is on the second page of 10, which is kept whole.
            #expect(done.json["items"] as? Int == 20)
            #expect(done.json["pages"] as? Int == 2)
            #expect((done.json["warnings"] as? [String: Int])?["truncated"] == 1, "\(done.text)")

            let expected = try await ServiceRoutesTests.expectedPages(
                feed: feed, arguments: ["--columns=3", "--gutter=12", "--page-size=10", "--width=600"], baseURL: nil)
            for index in 0..<2 {
                let page = try await service.request(.GET, "/v1/layouts/\(id)/pages/\(index)")
                #expect(page.status == 200)
                #expect(page.body == expected[index], "page \(index) is the library's page byte for byte")
            }
            let past = try await service.request(.GET, "/v1/layouts/\(id)/pages/2?wait=0")
            #expect(past.status == 404)

            // The bound is part of the layout's identity: without it, the same request is another layout.
            let unbounded = try await ServiceHarness.start()
            defer { Task { await unbounded.stop() } }
            let whole = try await unbounded.post(["feedText": feed, "options": options])
            #expect(whole.json["id"] as? String != id)
            let wholeDone = try await unbounded.waitUntilDone(try #require(whole.json["id"] as? String))
            #expect(wholeDone.json["items"] as? Int == 45)
            #expect((wholeDone.json["warnings"] as? [String: Int])?["truncated"] == nil)
        }
    }

    @Test func theItemLimitKeepsEachBreakpointsPagesUpToTheLimitAndStopsWhenAllReachedIt() {
        var limit = ItemLimit(maximum: 15, layouts: 2, resumedItems: 0)
        func page(_ layoutIndex: Int, items: Int) -> PageWriteFixture { PageWriteFixture(layoutIndex, items) }
        let kept1 = limit.admits(page(0, items: 10).write)
        #expect(kept1)
        let kept2 = limit.admits(page(1, items: 8).write)
        #expect(kept2)
        let kept3 = limit.admits(page(0, items: 10).write)
        #expect(kept3)
        #expect(!limit.isReached, "the second layout has 8")
        let kept4 = limit.admits(page(0, items: 10).write)
        #expect(!kept4, "the first layout has its 20 (≥ 15): no page after")
        let kept5 = limit.admits(page(1, items: 8).write)
        #expect(kept5)
        #expect(limit.isReached)

        var resumed = ItemLimit(maximum: 15, layouts: 1, resumedItems: 14)
        let kept6 = resumed.admits(page(0, items: 10).write)
        #expect(kept6)
        #expect(resumed.isReached)

        var unbounded = ItemLimit(maximum: nil, layouts: 1, resumedItems: 0)
        let kept7 = unbounded.admits(page(0, items: 1_000_000).write)
        #expect(kept7)
        #expect(!unbounded.isReached)
    }

    // MARK: --max-connections

    @Test func aConnectionPastTheBoundIsAnswered503AndClosedAndTheNextOneAfterACloseIsServed() async throws {
        let service = try await ServiceHarness.start { $0.maximumConnections = 2 }
        defer { Task { await service.stop() } }
        // The client's own kept-alive connections count too: the test holds raw ones only.
        try await service.client.shutdown()
        let first = try WireClient.connectedSocket(port: service.port, receiveTimeout: timeval(tv_sec: 10, tv_usec: 0))
        let second = try WireClient.connectedSocket(port: service.port, receiveTimeout: timeval(tv_sec: 10, tv_usec: 0))
        defer { close(second) }
        let health = Array("GET /healthz HTTP/1.1\r\nHost: x\r\n\r\n".utf8)
        // Both are admitted (answered) before the third comes.
        for descriptor in [first, second] {
            _ = health.withUnsafeBytes { send(descriptor, $0.baseAddress, $0.count, 0) }
            var buffer = [UInt8](repeating: 0, count: 4096)
            let count = recv(descriptor, &buffer, buffer.count, 0)
            #expect(String(decoding: buffer.prefix(max(0, count)), as: UTF8.self).hasPrefix("HTTP/1.1 200"))
        }
        let refused = try await WireClient.exchange(port: service.port, chunks: [health], answers: 1)
        let answer = try #require(refused.first)
        #expect(answer.status == 503)
        #expect(answer.headers["retry-after"] == "1")
        #expect(answer.headers["connection"] == "close")
        #expect(answer.headers["content-type"] == "application/problem+json")
        let problem = try JSONSerialization.jsonObject(with: Data(answer.body)) as? [String: Any]
        #expect(problem?["type"] as? String == "urn:feedlayout:problem:too-many-connections")

        close(first)
        // The close reaches the service's event loop in its own time: ask until a connection is admitted again.
        var served: Int?
        for _ in 0..<200 {
            let answers = try await WireClient.exchange(port: service.port, chunks: [health], answers: 1)
            if answers.first?.status == 200 {
                served = 200
                break
            }
            try await Task.sleep(for: .milliseconds(10))
        }
        #expect(served == 200)
        // The connection that was served closes in its own time too: asked until admitted.
        var text = ""
        for _ in 0..<200 {
            let metrics = try await WireClient.exchange(
                port: service.port, chunks: [Array("GET /metrics HTTP/1.1\r\nHost: x\r\n\r\n".utf8)], answers: 1)
            if metrics.first?.status == 200 {
                text = String(decoding: metrics.first?.body ?? [], as: UTF8.self)
                break
            }
            try await Task.sleep(for: .milliseconds(10))
        }
        // At least the one refused above (more when a retry came before the close reached the service).
        let refusedTotal = text.split(separator: "\n").first { $0.hasPrefix("feedlayout_connections_refused_total ") }
            .flatMap { Int($0.split(separator: " ").last ?? "") }
        #expect((refusedTotal ?? 0) >= 1, "\(text)")
    }

    @Test func theConnectionHandlerCountsConnectionsInAndOutAndAnswersTheOneTooMany() async throws {
        let limit = ConnectionLimit(maximum: 1, fitToOpenFileLimit: false, logger: Logger(label: "test"))
        let admitted = EmbeddedChannel(handler: limit.handler())
        try await admitted.connect(to: SocketAddress(ipAddress: "127.0.0.1", port: 1)).get()
        #expect(limit.openCount == 1)
        #expect(try admitted.readOutbound(as: ByteBuffer.self) == nil)

        let refused = EmbeddedChannel(handler: limit.handler())
        try await refused.connect(to: SocketAddress(ipAddress: "127.0.0.1", port: 1)).get()
        let answer = try #require(try refused.readOutbound(as: ByteBuffer.self))
        #expect(Array(answer.readableBytesView) == ConnectionLimit.refusal)
        #expect(
            String(decoding: ConnectionLimit.refusal, as: UTF8.self).hasPrefix("HTTP/1.1 503 Service Unavailable\r\n"))
        #expect(limit.openCount == 1)
        #expect(limit.refusedCount == 1)
        // What the refused client sends goes nowhere.
        try refused.writeInbound(ByteBuffer(string: "GET / HTTP/1.1\r\n\r\n"))
        #expect(try refused.readInbound(as: ByteBuffer.self) == nil)

        try await admitted.close().get()
        admitted.embeddedEventLoop.run()
        #expect(limit.openCount == 0)
        _ = try? refused.finish()
    }

    @Test func theOpenFileLimitIsRaisedToFitTheBound() {
        var before = rlimit()
        getrlimit(Int32(RLIMIT_NOFILE.rawValue), &before)
        let wanted = Int(min(before.rlim_max, 4096))
        let now = ConnectionLimit.raiseOpenFileLimit(toAtLeast: wanted)
        #expect(now >= UInt64(wanted))
        var after = rlimit()
        getrlimit(Int32(RLIMIT_NOFILE.rawValue), &after)
        #expect(after.rlim_cur >= rlim_t(wanted))
    }
}

/// A page write with `items` pins, for the item limit's arithmetic.
struct PageWriteFixture {
    let write: PageWrite

    init(_ layoutIndex: Int, _ items: Int) {
        let pin = PinRecord(
            itemIndex: 0, column: 0, columnSpan: 1, x: 0, y: 0, width: 1, height: 1, pageIndex: 0, jsonOffset: 0,
            jsonLength: 1)
        write = PageWrite(
            layoutIndex: layoutIndex, pageIndex: 0, json: [], gzip: [], cursor: nil, contentHeight: 0,
            pins: Array(repeating: pin, count: items), itemCount: layoutIndex == 0 ? items : 0, warnings: [:])
    }
}
