import AsyncHTTPClient
import FeedLayoutTestSupport
import Foundation
import LayoutStore
import NIOCore
import NIOHTTP1
import Testing

@testable import LayoutService

/// Feed subscriptions (`/v1/feeds`) against a real feed server on loopback whose feed changes on command, with the
/// refresher on a clock the test moves: every fetch's time, conditional headers and outcome is checked exactly.
@Suite(.timeLimit(.minutes(10)))
struct FeedSubscriptionTests {
    static let start = Date(timeIntervalSince1970: 1_800_000_000)
    static var options: [String: Any] { ["width": 600, "columns": 3, "pageSize": 5, "gutter": 12] }
    static let arguments = ["--width", "600", "--columns", "3", "--page-size", "5", "--gutter", "12"]

    /// The interval the documented schedule gives for `seconds` (clamped already), with the jitter fixed by `id`:
    /// computed here from the id's first eight hex digits, not by the service's code.
    static func jittered(_ seconds: Int, id: String, upper: Int) -> Int {
        let fraction = Double(UInt32(id.prefix(8), radix: 16)!) / 4_294_967_296
        return min(upper, seconds + Int((Double(seconds) * 0.1 * fraction).rounded(.down)))
    }

    static func rss(_ items: Int, photos: TestHTTPServer, head: String = "") -> [UInt8] {
        var text = ServiceFeeds.rss(items: items, photoBase: photos.url("/photos/"))
        if !head.isEmpty { text = text.replacingOccurrences(of: "<title>t</title>", with: "<title>t</title>" + head) }
        return Array(text.utf8)
    }

    static func state(_ service: ServiceHarness, _ id: String) async throws -> [String: Any] {
        let reply = try await service.request(.GET, "/v1/feeds/\(id)")
        #expect(reply.status == 200, "\(reply.text)")
        return reply.json
    }

    /// Polls a subscription's state until `done` holds of it.
    static func waitForState(
        _ service: ServiceHarness, _ id: String, _ what: String, _ done: ([String: Any]) -> Bool
    ) async throws -> [String: Any] {
        let end = ContinuousClock.now + .seconds(120)
        while true {
            let state = try await service.request(.GET, "/v1/feeds/\(id)", record: false).json
            if done(state) { return state }
            guard ContinuousClock.now < end else {
                throw TestInputError(message: "subscription \(id) never got to: \(what); last state \(state)")
            }
            try await Task.sleep(for: .milliseconds(10))
        }
    }

    static func lastFetch(_ state: [String: Any]) -> [String: Any] { state["lastFetch"] as? [String: Any] ?? [:] }
    static func versions(_ state: [String: Any]) -> [[String: Any]] { state["versions"] as? [[String: Any]] ?? [] }

    static func timestamp(_ seconds: Int) -> String { RouteHandlers.timestamp(start.addingTimeInterval(Double(seconds))) }

    /// Every page of layout `id` (its first layout) as served.
    static func pages(_ service: ServiceHarness, _ id: String) async throws -> [[UInt8]] {
        let done = try await service.waitUntilDone(id)
        #expect(done.json["status"] as? String == "done", "\(done.text)")
        var pages: [[UInt8]] = []
        for index in 0..<(done.json["pages"] as? Int ?? 0) {
            pages.append(try await service.request(.GET, "/v1/layouts/\(id)/pages/\(index)").body)
        }
        return pages
    }

    @Test func aSubscriptionIsFetchedOnScheduleConditionallyAndMakesAVersionOnlyWhenTheFeedChanges() async throws {
        try await TestHTTPServer.with { server in
            try ServiceFeeds.servePhotos(server)
            let clock = ManualClock(now: Self.start)
            let feedURL = server.url("/feed.xml")
            let v1 = Self.rss(12, photos: server)
            server.serve("/feed.xml", .init(body: v1, contentType: "application/rss+xml", entityTag: "\"v1\""))
            let service = try await ServiceHarness.start {
                $0.refreshClock = clock
                $0.minimumRefreshSeconds = 1
            }
            defer { Task { await service.stop() } }
            let body: [String: Any] = [
                "feed": feedURL, "options": Self.options, "refresh": ["minSeconds": 100, "maxSeconds": 1000],
            ]
            let bodyBytes = [UInt8](try JSONSerialization.data(withJSONObject: body))
            let created = try await service.request(.POST, "/v1/feeds", body: bodyBytes)
            #expect(created.status == 201, "\(created.text)")
            let id = try #require(created.json["id"] as? String)
            #expect(created.headers.first(name: "Location") == "/v1/feeds/\(id)")
            let again = try await service.request(.POST, "/v1/feeds", body: bodyBytes)
            #expect(again.status == 200 && again.json["id"] as? String == id, "\(again.text)")
            func interval(_ seconds: Int) -> Int { Self.jittered(seconds, id: id, upper: 1000) }
            var now = 0

            // The first fetch at once: a version.
            var state = try await Self.waitForState(service, id, "a first version") {
                Self.versions($0).count == 1 && $0["pending"] is NSNull
            }
            let first = try #require(Self.versions(state).first?["layout"] as? String)
            #expect(Self.lastFetch(state)["status"] as? Int == 200)
            #expect(Self.lastFetch(state)["bytes"] as? Int == v1.count)
            #expect(Self.lastFetch(state)["time"] as? String == Self.timestamp(0))
            #expect((state["validators"] as? [String: Any])?["etag"] as? String == "\"v1\"")
            #expect(Self.versions(state).first?["items"] as? Int == 12)
            #expect(state["nextFetch"] as? String == Self.timestamp(interval(100)))
            #expect(server.requests(for: "/feed.xml").count == 1)
            #expect(server.requests(for: "/feed.xml")[0].headers["if-none-match"] == nil)
            #expect(try await Self.pages(service, first) == (try await ServiceRoutesTests.expectedPages(
                feed: String(decoding: v1, as: UTF8.self), arguments: Self.arguments, baseURL: feedURL)))
            state = try await Self.waitForState(service, id, "latest is the first version") {
                $0["latest"] as? String == first
            }

            // Unchanged: a 304 to the conditional request, no version.
            try await clock.waitForSleeper(until: Self.start.addingTimeInterval(Double(interval(100))))
            now += interval(100)
            clock.advance(by: .seconds(interval(100)))
            state = try await Self.waitForState(service, id, "a 304") {
                Self.lastFetch($0)["time"] as? String == Self.timestamp(now)
            }
            #expect(Self.lastFetch(state)["status"] as? Int == 304)
            #expect(Self.versions(state).count == 1)
            #expect(server.requests(for: "/feed.xml").count == 2)
            #expect(server.requests(for: "/feed.xml")[1].headers["if-none-match"] == "\"v1\"")
            #expect(state["nextFetch"] as? String == Self.timestamp(now + interval(100)))

            // Two items appended, fresh for 300 s: a version counting them.
            let v2 = Self.rss(14, photos: server)
            var changed = TestHTTPServer.Resource(body: v2, contentType: "application/rss+xml", entityTag: "\"v2\"")
            changed.extraHeaders = ["Cache-Control": "max-age=300"]
            server.serve("/feed.xml", changed)
            try await clock.waitForSleeper(until: Self.start.addingTimeInterval(Double(now + interval(100))))
            now += interval(100)
            clock.advance(by: .seconds(interval(100)))
            state = try await Self.waitForState(service, id, "a second version") {
                Self.versions($0).count == 2 && $0["pending"] is NSNull
            }
            let second = try #require(Self.versions(state).first?["layout"] as? String)
            #expect(second != first)
            #expect(Self.versions(state).first?["items"] as? Int == 14)
            let changes = Self.versions(state).first?["changes"] as? [String: Int]
            #expect(changes == ["added": 2, "removed": 0, "changed": 0])
            #expect(state["nextFetch"] as? String == Self.timestamp(now + interval(300)))
            #expect(try await Self.pages(service, second) == (try await ServiceRoutesTests.expectedPages(
                feed: String(decoding: v2, as: UTF8.self), arguments: Self.arguments, baseURL: feedURL)))

            // 429 with Retry-After: 500 s (more than the backoff); the last good version stays.
            var refused = TestHTTPServer.Resource(status: 429)
            refused.extraHeaders = ["Retry-After": "500"]
            server.serve("/feed.xml", refused)
            try await clock.waitForSleeper(until: Self.start.addingTimeInterval(Double(now + interval(300))))
            now += interval(300)
            clock.advance(by: .seconds(interval(300)))
            state = try await Self.waitForState(service, id, "a 429") {
                Self.lastFetch($0)["time"] as? String == Self.timestamp(now)
            }
            #expect(Self.lastFetch(state)["status"] as? Int == 429)
            let error = Self.lastFetch(state)["error"] as? [String: Any]
            #expect(error?["type"] as? String == "urn:feedlayout:problem:feed-unreachable")
            #expect(state["failures"] as? Int == 1)
            #expect(state["nextFetch"] as? String == Self.timestamp(now + interval(500)))
            #expect(server.requests(for: "/feed.xml").last?.headers["if-none-match"] == "\"v2\"")

            // Failures back off exponentially from the least interval: 200 s after the second, 400 s after the third.
            server.serve("/feed.xml", .init(status: 500))
            var wait = interval(500)
            for (failures, backoff) in [(2, 200), (3, 400)] {
                try await clock.waitForSleeper(until: Self.start.addingTimeInterval(Double(now + wait)))
                now += wait
                clock.advance(by: .seconds(wait))
                state = try await Self.waitForState(service, id, "failure \(failures)") {
                    Self.lastFetch($0)["time"] as? String == Self.timestamp(now)
                }
                #expect(Self.lastFetch(state)["status"] as? Int == 500)
                #expect(state["failures"] as? Int == failures)
                wait = interval(backoff)
                #expect(state["nextFetch"] as? String == Self.timestamp(now + wait))
                #expect(state["latest"] as? String == second)
            }

            // Back, with a <ttl> of 10 minutes and only Last-Modified: a third version, next in 600 s.
            let v3 = Self.rss(14, photos: server, head: "<ttl>10</ttl>")
            let modified = "Sat, 28 Nov 2026 20:00:00 GMT"
            server.serve("/feed.xml", .init(body: v3, contentType: "application/rss+xml", lastModified: modified))
            try await clock.waitForSleeper(until: Self.start.addingTimeInterval(Double(now + wait)))
            now += wait
            clock.advance(by: .seconds(wait))
            state = try await Self.waitForState(service, id, "a third version") {
                Self.versions($0).count == 3 && $0["pending"] is NSNull
            }
            #expect(state["failures"] as? Int == 0)
            #expect(Self.versions(state).first?["changes"] as? [String: Int] == ["added": 0, "removed": 0, "changed": 0])
            #expect(state["nextFetch"] as? String == Self.timestamp(now + interval(600)))
            #expect((state["validators"] as? [String: Any])?["lastModified"] as? String == modified)
            #expect((state["validators"] as? [String: Any])?["etag"] is NSNull)

            // If-Modified-Since alone: a 304.
            try await clock.waitForSleeper(until: Self.start.addingTimeInterval(Double(now + interval(600))))
            now += interval(600)
            clock.advance(by: .seconds(interval(600)))
            state = try await Self.waitForState(service, id, "a 304 by date") {
                Self.lastFetch($0)["time"] as? String == Self.timestamp(now)
            }
            #expect(Self.lastFetch(state)["status"] as? Int == 304)
            let dated = try #require(server.requests(for: "/feed.xml").last)
            #expect(dated.headers["if-modified-since"] == modified && dated.headers["if-none-match"] == nil)
            // The feed's <ttl> still holds after a 304.
            #expect(state["nextFetch"] as? String == Self.timestamp(now + interval(600)))

            // The same bytes under a new validator: a 200 and no version.
            server.serve("/feed.xml", .init(body: v3, contentType: "application/rss+xml", entityTag: "\"v3-again\""))
            try await clock.waitForSleeper(until: Self.start.addingTimeInterval(Double(now + interval(600))))
            now += interval(600)
            clock.advance(by: .seconds(interval(600)))
            state = try await Self.waitForState(service, id, "the same bytes") {
                Self.lastFetch($0)["time"] as? String == Self.timestamp(now)
            }
            #expect(Self.lastFetch(state)["status"] as? Int == 200)
            #expect(Self.versions(state).count == 3 && state["pending"] is NSNull)
            #expect(server.requests(for: "/feed.xml").count == 9)
            // What came of the nine fetches, as /metrics counts them.
            let metrics = try await service.request(.GET, "/metrics").text
            for (result, count) in [("new-version", 3), ("not-modified", 2), ("failed", 3), ("unchanged", 1)] {
                #expect(
                    metrics.contains(#"feedlayout_feed_fetches_total{result="\#(result)"} \#(count)"#), "\(result)")
            }

            // Every event, replayed after Last-Event-ID 1, then a live one.
            let stream = try await EventStream.open(service, id: id, lastEventID: 1)
            var seen: [(Int, String)] = []
            for _ in 0..<5 {
                let event = try #require(try await stream.next())
                seen.append((event.id, event.kind))
            }
            #expect(seen.map(\.0) == [2, 3, 4, 5, 6])
            #expect(seen.map(\.1) == ["version", "failed", "failed", "failed", "version"])
            let v4 = Self.rss(15, photos: server)
            server.serve("/feed.xml", .init(body: v4, contentType: "application/rss+xml", entityTag: "\"v4\""))
            try await clock.waitForSleeper(until: Self.start.addingTimeInterval(Double(now + interval(600))))
            now += interval(600)
            clock.advance(by: .seconds(interval(600)))
            let live = try #require(try await stream.next())
            #expect(live.id == 7 && live.kind == "version")
            let data = try #require(try JSONSerialization.jsonObject(with: Data(live.data.utf8)) as? [String: Any])
            #expect(data["items"] as? Int == 15)
            #expect(data["changes"] as? [String: Int] == ["added": 1, "removed": 0, "changed": 0])
            let fourth = try #require(data["layout"] as? String)
            // The page is stored when the event comes.
            #expect(try await service.request(.GET, "/v1/layouts/\(fourth)/pages/0?wait=0").status == 200)

            // Removing the subscription ends its stream; its versions stay as layouts.
            let removed = try await service.request(.DELETE, "/v1/feeds/\(id)")
            #expect(removed.status == 204)
            #expect(try await stream.next() == nil)
            #expect(try await service.request(.GET, "/v1/feeds/\(id)").status == 404)
            #expect(try await service.request(.GET, "/v1/layouts/\(first)").status == 200)
            #expect(try await service.request(.DELETE, "/v1/feeds/\(id)").status == 404)
        }
    }

    /// Versions that append items chain: each is tested against the version before by the shape and digest the
    /// refresher holds, counts what changed from the appended items alone, takes its predecessor's pages and reads
    /// its feed from the cursor on. Counts and pages are what both feeds read whole and a layout from scratch give,
    /// also when an appended item repeats an older one's guid (then both feeds are read whole).
    @Test func appendedVersionsChainAndCountAsBothFeedsReadWholeWould() async throws {
        try await TestHTTPServer.with { server in
            try ServiceFeeds.servePhotos(server)
            let clock = ManualClock(now: Self.start)
            let feedURL = server.url("/feed.xml")
            let service = try await ServiceHarness.start {
                $0.refreshClock = clock
                $0.minimumRefreshSeconds = 1
            }
            defer { Task { await service.stop() } }
            let v1 = Self.rss(12, photos: server)
            let v2 = Self.rss(14, photos: server)
            // Two more: one new, one repeating item 0's guid (a repeated key counts once, as its first occurrence).
            let repeated = "<item><guid>s0-item-0</guid><title>again</title></item>\n"
            let fresh = "<item><guid>fresh</guid><title>Fresh</title><media:content url=\"\(server.url("/photos/"))"
                + "chelsea-the-cat.jpg\" medium=\"image\"/></item>\n"
            let v3 = Array(
                String(decoding: v2, as: UTF8.self).replacingOccurrences(
                    of: "</channel>", with: fresh + repeated + "</channel>"
                ).utf8)
            server.serve("/feed.xml", .init(body: v1, contentType: "application/rss+xml"))
            let body: [String: Any] = [
                "feed": feedURL, "options": Self.options, "refresh": ["minSeconds": 100, "maxSeconds": 1000],
            ]
            let created = try await service.request(
                .POST, "/v1/feeds", body: [UInt8](try JSONSerialization.data(withJSONObject: body)))
            let id = try #require(created.json["id"] as? String)
            let interval = Self.jittered(100, id: id, upper: 1000)
            var state = try await Self.waitForState(service, id, "a first version") { ($0["latest"] as? String) != nil }
            var layouts = [try #require(state["latest"] as? String)]
            _ = try await Self.pages(service, layouts[0])
            for (number, (old, new)) in [(v1, v2), (v2, v3)].enumerated() {
                server.serve("/feed.xml", .init(body: new, contentType: "application/rss+xml"))
                let now = interval * (number + 1)
                try await clock.waitForSleeper(until: Self.start.addingTimeInterval(Double(now)))
                clock.advance(by: .seconds(interval))
                state = try await Self.waitForState(service, id, "version \(number + 2)") {
                    Self.versions($0).count == number + 2 && $0["pending"] is NSNull
                }
                let version = try #require(Self.versions(state).first)
                let layout = try #require(version["layout"] as? String)
                layouts.append(layout)
                let expected = FeedItemChanges(
                    old: try #require(await FeedItemChanges.items(of: old, name: feedURL, base: feedURL)),
                    new: try #require(await FeedItemChanges.items(of: new, name: feedURL, base: feedURL)))
                #expect(
                    version["changes"] as? [String: Int]
                        == ["added": expected.added, "removed": expected.removed, "changed": expected.changed],
                    "version \(number + 2)")
                #expect(version["items"] as? Int == (number == 0 ? 14 : 16))
                #expect(
                    try await Self.pages(service, layout) == (try await ServiceRoutesTests.expectedPages(
                        feed: String(decoding: new, as: UTF8.self), arguments: Self.arguments, baseURL: feedURL)),
                    "version \(number + 2)")
            }
            #expect(
                Self.versions(state).compactMap { $0["changes"] as? [String: Int] }.first == [
                    "added": 1, "removed": 0, "changed": 0,
                ])
            let metrics = try await service.request(.GET, "/metrics").text
            #expect(metrics.contains(#"feedlayout_version_resumes_total{read="from-cursor"} 2"#), "\(metrics)")
            #expect(metrics.contains(#"feedlayout_version_resumes_total{read="whole-feed"} 0"#))
            // 12 items on 3 pages (the first two taken), then 14 on 3 (the first two taken).
            #expect(metrics.contains("feedlayout_version_pages_taken_total 4"), "\(metrics)")
        }
    }

    /// Subscribes to `feed` on `server` and waits for its first version to be done; its id and that layout.
    static func subscribe(_ service: ServiceHarness, _ feedURL: String) async throws -> (id: String, layout: String) {
        let body: [String: Any] = ["feed": feedURL, "options": Self.options, "refresh": ["minSeconds": 100]]
        let created = try await service.request(
            .POST, "/v1/feeds", body: [UInt8](try JSONSerialization.data(withJSONObject: body)))
        #expect(created.status == 201, "\(created.text)")
        let id = try #require(created.json["id"] as? String)
        let state = try await Self.waitForState(service, id, "a first version done") {
            ($0["latest"] as? String) != nil
        }
        return (id, try #require(state["latest"] as? String))
    }

    @Test func theStoreBoundsNeverRemoveALiveSubscriptionsNewestVersion() async throws {
        try await TestHTTPServer.with { server in
            try ServiceFeeds.servePhotos(server)
            server.serve("/feed.xml", .init(body: Self.rss(6, photos: server), contentType: "application/rss+xml"))
            let service = try await ServiceHarness.start {
                $0.refreshClock = ManualClock(now: Self.start)
                $0.minimumRefreshSeconds = 1
                $0.maximumStoreBytes = 1
                $0.storeCheckInterval = .seconds(86_400)
            }
            defer { Task { await service.stop() } }
            let (id, version) = try await Self.subscribe(service, server.url("/feed.xml"))
            let posted = try await service.post(["feedText": ServiceFeeds.rss(items: 3, photoBase: server.url("/photos/"))])
            let other = try #require(posted.json["id"] as? String)
            _ = try await service.waitUntilDone(other)
            // Over the bound: the other layout goes, the subscription's version stays.
            let pass = await service.server.storeEvictor.pass()
            #expect(pass.removedForSize == [other])
            #expect(try await service.request(.GET, "/v1/layouts/\(version)").status == 200)
            // Unsubscribed, it is an ordinary layout.
            #expect(try await service.request(.DELETE, "/v1/feeds/\(id)").status == 204)
            #expect(await service.server.storeEvictor.pass().removedForSize == [version])
        }
    }

    @Test func aSubscriptionAndItsEventsOutliveARestartAndAnIdleStreamIsKeptAlive() async throws {
        try await TestHTTPServer.with { server in
            try ServiceFeeds.servePhotos(server)
            server.serve("/feed.xml", .init(body: Self.rss(6, photos: server), contentType: "application/rss+xml"))
            let folder = FileManager.default.temporaryDirectory.appendingPathComponent("feeds-\(UUID().uuidString)")
            try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
            defer { try? FileManager.default.removeItem(at: folder) }
            let store = folder.appendingPathComponent("store.sqlite").path
            var first: ServiceHarness? = try await ServiceHarness.start(storePath: store) {
                $0.refreshClock = ManualClock(now: Self.start)
                $0.minimumRefreshSeconds = 1
            }
            let (id, version) = try await Self.subscribe(first!, server.url("/feed.xml"))
            let before = try await Self.state(first!, id)
            // Stopped and let go of (its store's lock goes with it).
            await first!.stop()
            first = nil

            let second = try await ServiceHarness.start(storePath: store) {
                $0.refreshClock = ManualClock(now: Self.start.addingTimeInterval(1))
                $0.minimumRefreshSeconds = 1
                $0.eventKeepAlive = .milliseconds(50)
            }
            defer { Task { await second.stop() } }
            let after = try await Self.state(second, id)
            #expect(NSDictionary(dictionary: after) == NSDictionary(dictionary: before))
            // Not due yet on the second service's clock: not fetched again.
            #expect(server.requests(for: "/feed.xml").count == 1)
            var request = HTTPClientRequest(url: second.url("/v1/feeds/\(id)/events"))
            request.headers.add(name: "Last-Event-ID", value: "0")
            let response = try await second.client.execute(request, timeout: .seconds(60))
            var text = ""
            var body = response.body.makeAsyncIterator()
            while !text.contains(": keep-alive\n\n"), let chunk = try await body.next() {
                text += String(buffer: chunk)
            }
            #expect(text.contains("id: 1\nevent: version\ndata: {\"subscription\":\"\(id)\",\"layout\":\"\(version)\""), "\(text)")
            #expect(text.contains(": keep-alive\n\n"))
        }
    }

    @Test func subscriptionsAreListedByCreationAPageAtATime() async throws {
        let clock = ManualClock(now: Self.start)
        let service = try await ServiceHarness.start {
            $0.refreshClock = clock
            $0.minimumRefreshSeconds = 1
        }
        defer { Task { await service.stop() } }
        var ids: [String] = []
        for number in 0..<3 {
            // Nothing answers at port 9: each first fetch fails, which is fine for a listing.
            clock.advance(by: .seconds(1))
            let body = [UInt8](try JSONSerialization.data(withJSONObject: ["feed": "http://127.0.0.1:9/feed-\(number).xml"]))
            let created = try await service.request(.POST, "/v1/feeds", body: body)
            #expect(created.status == 201, "\(created.text)")
            ids.append(try #require(created.json["id"] as? String))
        }
        let first = try await service.request(.GET, "/v1/feeds?limit=2")
        #expect(first.status == 200)
        let listed = (first.json["feeds"] as? [[String: Any]] ?? []).compactMap { $0["id"] as? String }
        #expect(listed == Array(ids.prefix(2)))
        let next = try #require(first.json["next"] as? String)
        let rest = try await service.request(.GET, "/v1/feeds?limit=2&after=\(next)")
        #expect((rest.json["feeds"] as? [[String: Any]] ?? []).compactMap { $0["id"] as? String } == [ids[2]])
        #expect(rest.json["next"] is NSNull)
        let bad = try await service.request(.GET, "/v1/feeds?after=nope")
        #expect(bad.status == 400)
    }

    @Test func aBadSubscriptionIsRefusedNamingTheField() async throws {
        let service = try await ServiceHarness.start()
        defer { Task { await service.stop() } }
        let cases: [([String: Any], String)] = [
            ([:], "feed"),
            (["feed": "file:///etc/passwd"], "feed"),
            (["feed": "https://example.org/a feed"], "feed"),
            (["feed": "https://example.org/f", "colour": 1], "colour"),
            (["feed": "https://example.org/f", "refresh": ["minSeconds": 600, "maxSeconds": 60]], "refresh.minSeconds"),
            (["feed": "https://example.org/f", "refresh": ["minSeconds": 0]], "refresh.minSeconds"),
            (["feed": "https://example.org/f", "refresh": ["maxSeconds": true]], "refresh.maxSeconds"),
            (["feed": "https://example.org/f", "refresh": ["maxSeconds": NSNull()]], "refresh.maxSeconds"),
            (["feed": "https://example.org/f", "refresh": NSNull()], "refresh"),
            (["feed": "https://example.org/f", "options": NSNull()], "options"),
            (["feed": "https://example.org/f", "options": ["columns": "many"]], "options.columns"),
            (["feed": "https://example.org/f", "options": ["resume": "x"]], "options.resume"),
        ]
        for (body, field) in cases {
            let reply = try await service.request(
                .POST, "/v1/feeds", body: [UInt8](try JSONSerialization.data(withJSONObject: body)))
            #expect(reply.status == 400, "\(body): \(reply.text)")
            #expect(reply.json["field"] as? String == field, "\(body): \(reply.text)")
        }
        #expect(try await service.request(.GET, "/v1/feeds/0123456789abcdef0123456789abcdef/events").status == 404)
        #expect(try await service.request(.GET, "/v1/feeds/nope").status == 404)
    }
}

/// A Server-Sent Events client over a real connection.
final class EventStream: @unchecked Sendable {
    struct Event: Equatable {
        var id: Int
        var kind: String
        var data: String
    }

    private var iterator: HTTPClientResponse.Body.AsyncIterator
    private var buffer = ""
    let headers: HTTPHeaders

    private init(iterator: HTTPClientResponse.Body.AsyncIterator, headers: HTTPHeaders) {
        self.iterator = iterator
        self.headers = headers
    }

    static func open(_ service: ServiceHarness, id: String, lastEventID: Int?) async throws -> EventStream {
        var request = HTTPClientRequest(url: service.url("/v1/feeds/\(id)/events"))
        if let lastEventID { request.headers.add(name: "Last-Event-ID", value: String(lastEventID)) }
        let response = try await service.client.execute(request, timeout: .seconds(600))
        #expect(response.status == .ok)
        #expect(response.headers.first(name: "Content-Type")?.hasPrefix("text/event-stream") == true)
        return EventStream(iterator: response.body.makeAsyncIterator(), headers: response.headers)
    }

    /// The next event (comments skipped); `nil` when the stream ends.
    func next() async throws -> Event? {
        while true {
            while let end = buffer.range(of: "\n\n") {
                let block = String(buffer[..<end.lowerBound])
                buffer = String(buffer[end.upperBound...])
                var event = Event(id: 0, kind: "message", data: "")
                var isEvent = false
                for line in block.split(separator: "\n") where !line.hasPrefix(":") {
                    isEvent = true
                    if line.hasPrefix("id: ") { event.id = Int(line.dropFirst(4)) ?? -1 }
                    if line.hasPrefix("event: ") { event.kind = String(line.dropFirst(7)) }
                    if line.hasPrefix("data: ") { event.data = String(line.dropFirst(6)) }
                }
                if isEvent { return event }
            }
            guard let chunk = try await iterator.next() else { return nil }
            buffer += String(buffer: chunk)
        }
    }
}

