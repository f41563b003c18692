import AsyncHTTPClient
import FeedLayoutTestSupport
import Foundation
import LayoutStore
import Logging
import NIOCore
import NIOHTTP1
import Testing

@testable import LayoutService

/// Removing layouts (`DELETE /v1/layouts/{id}`, and the evictor of `--max-store-bytes` and `--keep-days`) and
/// listing them (`GET /v1/layouts`), on an SQLite store and on a database of the suite's shared PostgreSQL cluster.
@Suite(.serialized, .timeLimit(.minutes(5)))
struct LayoutLifecycleTests {
    enum StoreKind: String, CaseIterable, Sendable { case sqlite, postgres }

    /// Runs `body` with a store location of the kind: nil (the harness's own SQLite file) or a cluster's URL.
    static func withStore(_ kind: StoreKind, _ body: (String?) async throws -> Void) async throws {
        guard kind == .postgres else { return try await body(nil) }
        try await PostgresTestDatabase.with { try await body($0.url) }
    }

    /// Posts a feed of `items` pins (photos at a loopback port nothing listens on: refused at once, with the same
    /// warning in every run, where a name that does not resolve got a different resolver message now and then) and
    /// waits until it is done.
    static func postDone(_ service: ServiceHarness, items: Int = 30, seed: Int = 0) async throws -> String {
        let posted = try await service.post([
            "feedText": ServiceFeeds.rss(items: items, photoBase: "https://127.0.0.1:1/", seed: seed),
            "options": ["pageSize": 10],
        ])
        let id = try #require(posted.json["id"] as? String, "\(posted.text)")
        let done = try await service.waitUntilDone(id)
        #expect(done.json["status"] as? String == "done", "\(done.text)")
        return id
    }

    /// The ids `GET /v1/layouts` lists (a listing reads no layout).
    static func listedIDs(_ service: ServiceHarness) async throws -> [String] {
        let reply = try await service.request(.GET, "/v1/layouts")
        return (reply.json["layouts"] as? [[String: Any]] ?? []).compactMap { $0["id"] as? String }
    }

    static func problemType(_ reply: ServiceHarness.Reply) -> String? { reply.json["type"] as? String }

    @Test(arguments: StoreKind.allCases)
    func aDeletedLayoutIsGoneFromTheStoreAndFromMemory(kind: StoreKind) async throws {
        try await Self.withStore(kind) { location in
            let service = try await ServiceHarness.start(storePath: location)
            defer { Task { await service.stop() } }
            let id = try await Self.postDone(service)
            let kept = try await Self.postDone(service, seed: 7)
            // Every form of pages 0 and 1 in memory, with the pin index and the style sheet.
            var pages: [[UInt8]] = []
            for page in 0..<2 {
                pages.append(try await service.request(.GET, "/v1/layouts/\(id)/pages/\(page)").raw)
                _ = try await service.request(
                    .GET, "/v1/layouts/\(id)/pages/\(page)", headers: [("Accept-Encoding", "gzip")])
            }
            #expect(try await service.request(.GET, "/v1/layouts/\(id)/items?x=0&y=0&height=500&width=1000").status == 200)
            #expect(try await service.request(.GET, "/v1/layouts/\(id)/snap?offset=10").status == 200)
            #expect(try await service.request(.GET, "/v1/layouts/\(id)/style.css").status == 200)
            let fastRequest = Array("GET /v1/layouts/\(id)/pages/0 HTTP/1.1\r\nHost: x\r\n\r\n".utf8)
            let fromMemory = try await WireClient.exchange(port: service.port, chunks: [fastRequest], answers: 1)
            #expect(fromMemory.map(\.status) == [200])

            let listed = try await service.request(.GET, "/v1/layouts")
            let entries = try #require(listed.json["layouts"] as? [[String: Any]], "\(listed.text)")
            let entry = try #require(entries.first { $0["id"] as? String == id })
            #expect(entry["status"] as? String == "done" && entry["items"] as? Int == 30)
            #expect((entry["bytes"] as? Int ?? 0) > 30 * LayoutListing.pinRecordBytes)
            #expect(entry["lastRead"] is String, "reads are written before a listing: \(entry)")

            let deleted = try await service.request(.DELETE, "/v1/layouts/\(id)")
            #expect(deleted.status == 204 && deleted.raw.isEmpty, "\(deleted.text)")
            for path in [
                "", "/pages/0", "/pages/1", "/pages/2?wait=0", "/items?x=0&y=0&height=500&width=1000", "/snap?offset=10",
                "/style.css",
            ] {
                let reply = try await service.request(.GET, "/v1/layouts/\(id)" + path)
                #expect(reply.status == 404, "\(path): \(reply.text)")
                #expect(Self.problemType(reply) == "urn:feedlayout:problem:not-found", "\(path)")
            }
            let gzipped = try await service.request(
                .GET, "/v1/layouts/\(id)/pages/1", headers: [("Accept-Encoding", "gzip")])
            #expect(gzipped.status == 404)
            // The page fast path no longer finds it in memory.
            let afterwards = try await WireClient.exchange(port: service.port, chunks: [fastRequest], answers: 1)
            #expect(afterwards.map(\.status) == [404])
            let again = try await service.request(.DELETE, "/v1/layouts/\(id)")
            #expect(again.status == 404 && Self.problemType(again) == "urn:feedlayout:problem:not-found")
            if kind == .sqlite {
                #expect(!FileManager.default.fileExists(atPath: service.storePath + ".feeds/" + id))
                #expect(FileManager.default.fileExists(atPath: service.storePath + ".feeds/" + kept))
            }
            let listedAfter = try await service.request(.GET, "/v1/layouts")
            let ids = (listedAfter.json["layouts"] as? [[String: Any]] ?? []).compactMap { $0["id"] as? String }
            #expect(ids == [kept])
            #expect(try await service.request(.GET, "/v1/layouts/\(kept)/pages/2").status == 200)

            // Posted again, it is laid out anew, with the same pages.
            let reposted = try await Self.postDone(service)
            #expect(reposted == id)
            for page in 0..<2 {
                let again = try await service.request(.GET, "/v1/layouts/\(id)/pages/\(page)").text
                #expect(again == String(decoding: pages[page], as: UTF8.self), "page \(page)")
            }
        }
    }

    /// With a shared store, a layout one instance removes leaves the other's memory too: its pages, kept there (and
    /// answered by its fast path), answer `404` once the removal's notification has arrived.
    @Test func aLayoutRemovedByAnotherInstanceLeavesThisOnesMemory() async throws {
        try await Self.withStore(.postgres) { location in
            let one = try await ServiceHarness.start(storePath: location)
            defer { Task { await one.stop() } }
            let other = try await ServiceHarness.start(storePath: location)
            defer { Task { await other.stop() } }
            let id = try await Self.postDone(one)
            let request = Array("GET /v1/layouts/\(id)/pages/0 HTTP/1.1\r\nHost: x\r\n\r\n".utf8)
            #expect(try await other.request(.GET, "/v1/layouts/\(id)/pages/0").status == 200)
            #expect(
                try await WireClient.exchange(port: other.port, chunks: [request], answers: 1).map(\.status) == [200])
            #expect(try await one.request(.DELETE, "/v1/layouts/\(id)").status == 204)
            // The notification comes a moment after the removal's commit.
            let deadline = ContinuousClock.now + .seconds(30)
            var status = 200
            while status == 200, ContinuousClock.now < deadline {
                status =
                    try await WireClient.exchange(port: other.port, chunks: [request], answers: 1).first?.status ?? 0
                if status == 200 { try await Task.sleep(for: .milliseconds(20)) }
            }
            #expect(status == 404)
        }
    }

    @Test func unknownLayoutsAreProblems() async throws {
        let service = try await ServiceHarness.start()
        defer { Task { await service.stop() } }
        for id in [String(repeating: "ab", count: 16), "not-an-id"] {
            let reply = try await service.request(.DELETE, "/v1/layouts/\(id)")
            #expect(
                reply.status == 404 && Self.problemType(reply) == "urn:feedlayout:problem:not-found", "\(reply.text)")
        }
        let wrongMethod = try await service.request(.PUT, "/v1/layouts")
        #expect(wrongMethod.status == 405)
        #expect(wrongMethod.headers.first(name: "Allow") == "POST, GET")
        // Each method of a path is counted apart, under the route as the document names it.
        let metrics = try await service.request(.GET, "/metrics").text
        for line in [
            #"feedlayout_http_requests_total{method="DELETE",route="/v1/layouts/{id}",status="404"} 2"#,
            #"feedlayout_http_requests_total{method="GET",route="/v1/layouts/{id}",status="200"} 0"#,
            #"feedlayout_http_requests_total{method="POST",route="/v1/layouts",status="202"} 0"#,
            #"feedlayout_http_requests_total{method="GET",route="/v1/layouts",status="200"} 0"#,
        ] {
            #expect(metrics.contains(line), "\(line)")
        }
    }

    /// A layout still being computed (running, or waiting in the queue) is stopped, then removed.
    @Test func aLayoutBeingComputedIsStoppedThenRemoved() async throws {
        try await TestHTTPServer.with { photos in
            let gate = ResponseGate(holdingAt: .beforeHead)
            let cat = try [UInt8](
                Data(
                    contentsOf: ServiceFeeds.repositoryRoot.appendingPathComponent(
                        "sample-feed/photos/chelsea-the-cat.jpg")))
            photos.serve("/photos/held.jpg", .init(body: cat, contentType: "image/jpeg", gate: gate))
            let service = try await ServiceHarness.start { $0.maximumConcurrentLayouts = 1 }
            defer {
                gate.open()
                Task { await service.stop() }
            }
            let heldFeed = ServiceFeeds.rss(items: 1, photoBase: photos.url("/photos/held.jpg?"))
            let running = try #require(
                try await service.post(["feedText": heldFeed, "options": ["pageSize": 10]]).json["id"] as? String)
            _ = await gate.waitUntilHeld()
            let queued = try #require(
                try await service.post([
                    "feedText": ServiceFeeds.rss(items: 5, photoBase: "https://127.0.0.1:1/"),
                    "options": ["pageSize": 10],
                ]).json["id"] as? String)
            #expect(try await service.request(.GET, "/v1/layouts/\(running)").json["status"] as? String == "running")
            #expect(try await service.request(.GET, "/v1/layouts/\(queued)").json["status"] as? String == "running")

            #expect(try await service.request(.DELETE, "/v1/layouts/\(queued)").status == 204)
            #expect(try await service.request(.DELETE, "/v1/layouts/\(running)").status == 204)
            #expect(try await service.request(.GET, "/v1/layouts/\(running)").status == 404)
            #expect(try await service.request(.GET, "/v1/layouts/\(queued)").status == 404)
            let metrics = try await service.request(.GET, "/metrics").text
            #expect(metrics.contains("feedlayout_layouts_running 0"), "\(metrics)")
            #expect(metrics.contains("feedlayout_layouts_queued 0"), "\(metrics)")
            #expect(metrics.contains(#"feedlayout_store_layouts{status="running"} 0"#), "\(metrics)")
        }
    }

    @Test(arguments: StoreKind.allCases)
    func theListingIsPaginatedInTheOrderOfCreation(kind: StoreKind) async throws {
        try await Self.withStore(kind) { location in
            let service = try await ServiceHarness.start(storePath: location)
            defer { Task { await service.stop() } }
            var posted: [String] = []
            for seed in 0..<5 { posted.append(try await Self.postDone(service, items: 3, seed: seed)) }
            var listed: [String] = []
            var after: String?
            var pageSizes: [Int] = []
            repeat {
                let reply = try await service.request(
                    .GET, "/v1/layouts?limit=2" + (after.map { "&after=" + $0 } ?? ""))
                #expect(reply.status == 200, "\(reply.text)")
                let layouts = reply.json["layouts"] as? [[String: Any]] ?? []
                pageSizes.append(layouts.count)
                listed += layouts.compactMap { $0["id"] as? String }
                for layout in layouts {
                    #expect(layout["lastRead"] is String, "read while its status was polled: \(layout)")
                    #expect((layout["created"] as? String)?.hasSuffix("Z") == true)
                }
                after = reply.json["next"] as? String
            } while after != nil && pageSizes.count < 10
            #expect(listed == posted)
            #expect(pageSizes == [2, 2, 1])
            for query in [
                "limit=0", "limit=1001", "limit=x", "after=12-nothex",
                "after=" + String(repeating: "1", count: 20) + "-" + posted[0],
            ] {
                let reply = try await service.request(.GET, "/v1/layouts?" + query)
                #expect(reply.status == 400, "\(query)")
                #expect(reply.json["field"] as? String == (query.hasPrefix("limit") ? "limit" : "after"), "\(query)")
            }
        }
    }

    /// `--keep-days`: the evictor runs every interval of the service's clock, which the test moves by hand.
    @Test func layoutsNotReadForTheKeepDurationAreRemoved() async throws {
        let clock = ManualClock()
        let service = try await ServiceHarness.start {
            $0.clock = clock
            $0.keepDuration = .seconds(2 * 86_400)
            $0.storeCheckInterval = .seconds(60)
        }
        defer { Task { await service.stop() } }
        let read = try await Self.postDone(service, seed: 1)
        let unread = try await Self.postDone(service, seed: 2)
        // Polling their status read both: a listing writes those reads now (it reads nothing itself).
        #expect(try await Self.listedIDs(service) == [read, unread])
        await clock.waitForSleeps(1)
        // A day and a half later, one is read; a pass writes that read.
        clock.advance(by: .seconds(36 * 3600))
        await clock.waitForSleeps(2)
        #expect(try await service.request(.GET, "/v1/layouts/\(read)/pages/0").status == 200)
        clock.advance(by: .seconds(60))
        await clock.waitForSleeps(3)
        #expect(try await Self.listedIDs(service) == [read, unread], "not two days yet")
        // Two and a half days after both were made: the one never read goes, the one read a day ago stays.
        clock.advance(by: .seconds(24 * 3600))
        await clock.waitForSleeps(4)
        #expect(try await service.request(.GET, "/v1/layouts/\(unread)").status == 404)
        #expect(try await service.request(.GET, "/v1/layouts/\(unread)/pages/0").status == 404)
        #expect(try await service.request(.GET, "/v1/layouts/\(read)").status == 200)
        let metrics = try await service.request(.GET, "/metrics").text
        #expect(metrics.contains(#"feedlayout_layouts_evicted_total{reason="age"} 1"#), "\(metrics)")
        #expect(metrics.contains(#"feedlayout_layouts_evicted_total{reason="size"} 0"#), "\(metrics)")
        #expect(metrics.contains(#"feedlayout_store_layouts{status="done"} 1"#), "\(metrics)")
        let listed = try await service.request(.GET, "/v1/layouts")
        let bytes = try #require((listed.json["layouts"] as? [[String: Any]])?.first?["bytes"] as? Int)
        #expect(metrics.contains("feedlayout_store_bytes \(bytes)"), "\(metrics)")
    }

    /// `--max-store-bytes`: a pass removes the least recently read layouts (never read: by creation) until the
    /// store is within the bound, never one being computed and never one the guard keeps.
    @Test(arguments: StoreKind.allCases)
    func pastTheByteBoundTheLeastRecentlyReadGo(kind: StoreKind) async throws {
        try await Self.withStore(kind) { location in
            let folder = FileManager.default.temporaryDirectory.appendingPathComponent("evictor-\(UUID().uuidString)")
            defer { try? FileManager.default.removeItem(at: folder) }
            let logger = Logger(label: "test.evictor")
            let store = try await LayoutStores.open(
                location ?? folder.appendingPathComponent("store.sqlite").path, leaseDuration: .seconds(30),
                logger: logger
            ).layouts
            defer { store.close() }
            // Four layouts of one page each; the last keeps running.
            var ids: [String] = []
            for number in 0..<4 {
                let id = String(repeating: String(number), count: 32)
                ids.append(id)
                #expect(
                    try await store.insertLayout(
                        id: id, options: "{}", feedName: "f", baseURL: nil, feed: Array(repeating: 0x20, count: 1000),
                        parts: [(width: 320, columns: 2)]))
                #expect(try await store.claim(id))
                let json = Array("{\"page\":\(number)}\n".utf8)
                try await store.storePage(
                    PageWrite(
                        layoutIndex: 0, pageIndex: 0, json: json, gzip: Array(repeating: 7, count: 500 * (number + 1)),
                        cursor: "c\(number)", contentHeight: 10, pins: [], itemCount: 1, warnings: [:]),
                    layoutId: id)
                if number < 3 { try await store.finishLayout(id, feedWarnings: [:]) }
            }
            let clock = ManualClock(now: Date().addingTimeInterval(86_400))
            // 1 read three hours ago, 2 an hour ago; 0, never read, counts from its creation (a day before).
            try await store.recordReads([ids[1]], at: clock.now.addingTimeInterval(-3 * 3600))
            try await store.recordReads([ids[2]], at: clock.now.addingTimeInterval(-3600))
            let sizes = Dictionary(
                uniqueKeysWithValues: try await store.listLayouts(after: nil, limit: 10).map { ($0.id, $0.bytes) })
            #expect(sizes[ids[0]] == 1000 + 500 + 2)
            #expect(sizes[ids[3]] == 1000 + 2000 + 2)
            let total = try await store.usage().bytes
            #expect(total == sizes.values.reduce(0, +))

            func evictor(maximumBytes: Int, protecting: String? = nil) -> StoreEvictor {
                StoreEvictor(
                    store: store, reads: LayoutReads(), metrics: ServiceMetrics(), maximumBytes: maximumBytes,
                    keepDuration: nil, interval: .seconds(60), clock: clock, logger: logger,
                    isProtected: { $0 == protecting }, remove: { try await store.removeLayout($0) },
                    forgetRemoved: { _ in })
            }
            // Within the bound: nothing goes.
            #expect(await evictor(maximumBytes: total).pass().removedForSize.isEmpty)
            // Room for all but the first two in the order of reading; the guard keeps 1, so 2 goes instead.
            let bound = total - sizes[ids[0]]! - sizes[ids[1]]!
            let guarded = await evictor(maximumBytes: bound, protecting: ids[1]).pass()
            #expect(guarded.removedForSize == [ids[0], ids[2]])
            #expect(guarded.usage?.bytes == total - sizes[ids[0]]! - sizes[ids[2]]!)
            // A bound below the running layout alone: every other one goes, the running one stays.
            let tight = await evictor(maximumBytes: 1).pass()
            #expect(tight.removedForSize == [ids[1]])
            #expect(try await store.listLayouts(after: nil, limit: 10).map(\.id) == [ids[3]])
            #expect(tight.usage == StoreUsage(bytes: sizes[ids[3]]!, layoutsByStatus: ["running": 1]))
        }
    }
}
