import FeedLayout
import FeedLayoutTestSupport
import Foundation
import NIOHTTP1
import RemoteFetch
import Testing

@testable import LayoutService

/// A photo the probe cache holds is not requested again while it is fresh by its own HTTP freshness; once stale, or
/// with `no-cache`, it is revalidated with a conditional request. Requests are counted on a loopback server, and
/// time moves on the service's hand-moved clock.
@Suite(.timeLimit(.minutes(5)))
struct FreshProbeReuseTests {
    static let photoBytes: [UInt8] = {
        let url = ServiceFeeds.repositoryRoot.appendingPathComponent("sample-feed/photos/aitzgorri-autumn.jpg")
        return [UInt8]((try? Data(contentsOf: url)) ?? Data())
    }()

    /// Serves photos `names` (the same bytes under each path), each with an ETag and `headers`.
    static func serve(_ names: [Int], on server: TestHTTPServer, headers: [String: String]) {
        for name in names {
            var resource = TestHTTPServer.Resource(
                body: photoBytes, contentType: "image/jpeg", entityTag: "\"photo-\(name)\"")
            resource.extraHeaders = headers
            server.serve("/photos/\(name).jpg", resource)
        }
    }

    /// A feed whose items show photos `names` in this order.
    static func feed(_ names: [Int], photos: TestHTTPServer, title: String = "t") -> String {
        var feed = """
            <?xml version="1.0"?><rss version="2.0" xmlns:media="http://search.yahoo.com/mrss/"><channel><title>\(title)</title>

            """
        for name in names {
            feed += "<item><guid>photo-\(name)</guid><title>Photo \(name)</title>"
            feed += "<media:content url=\"\(photos.url("/photos/\(name).jpg"))\" medium=\"image\"/></item>\n"
        }
        return feed + "</channel></rss>\n"
    }

    static func layOut(_ feed: String, _ service: ServiceHarness) async throws {
        let posted = try await service.post(["feedText": feed, "options": ["width": 600, "columns": 3, "pageSize": 20]])
        let id = try #require(posted.json["id"] as? String, "\(posted.text)")
        let done = try await service.waitUntilDone(id)
        #expect(done.json["status"] as? String == "done", "\(done.text)")
        #expect((done.json["warnings"] as? [String: Int])?.isEmpty == true, "\(done.text)")
    }

    /// Photo requests since `start`: by path, and how many were conditional.
    static func photoRequests(_ server: TestHTTPServer, since start: Int) -> (paths: [String: Int], conditional: Int) {
        let requests = server.requests.dropFirst(start).filter { $0.path.hasPrefix("/photos/") }
        var paths: [String: Int] = [:]
        for request in requests { paths[request.path, default: 0] += 1 }
        return (paths, requests.filter { $0.headers["if-none-match"] != nil }.count)
    }

    @Test func freshPhotosAreNotRequestedAgainAndStaleOnesAreRevalidated() async throws {
        try await TestHTTPServer.with { photos in
            let clock = ManualClock()
            let service = try await ServiceHarness.start { $0.clock = clock }
            defer { Task { await service.stop() } }
            let known = Array(0..<40)
            let added = Array(100..<120)
            Self.serve(known + added, on: photos, headers: ["Cache-Control": "public, max-age=600"])

            var start = photos.requests.count
            try await Self.layOut(Self.feed(known, photos: photos), service)
            let first = Self.photoRequests(photos, since: start)
            #expect(Set(first.paths.keys) == Set(known.map { "/photos/\($0).jpg" }))
            // Each photo's header is in the first range: one request each.
            #expect(first.paths.values.allSatisfy { $0 == 1 }, "\(first.paths)")
            #expect(first.conditional == 0)

            // 20 new photos at the top of 40 fresh ones: only the 20 are requested.
            clock.advance(by: .seconds(300))
            start = photos.requests.count
            try await Self.layOut(Self.feed(added + known, photos: photos), service)
            let second = Self.photoRequests(photos, since: start)
            #expect(second.paths.values.reduce(0, +) == 20, "\(second.paths)")
            #expect(Set(second.paths.keys) == Set(added.map { "/photos/\($0).jpg" }))
            #expect(second.conditional == 0)

            // Past max-age (the known photos were stored at 0 s, the added ones at 300 s; now 700 s): the 40 known
            // ones are stale and revalidated with a conditional request each (304), the 20 added ones are fresh.
            clock.advance(by: .seconds(400))
            start = photos.requests.count
            try await Self.layOut(Self.feed(added + known, photos: photos, title: "again"), service)
            let third = Self.photoRequests(photos, since: start)
            #expect(Set(third.paths.keys) == Set(known.map { "/photos/\($0).jpg" }), "\(third.paths)")
            #expect(third.paths.values.allSatisfy { $0 == 1 })
            #expect(third.conditional == 40)

            // The 304s renewed the freshness: nothing is requested now.
            clock.advance(by: .seconds(60))
            start = photos.requests.count
            try await Self.layOut(Self.feed(known + added, photos: photos, title: "once more"), service)
            #expect(Self.photoRequests(photos, since: start).paths.isEmpty)
        }
    }

    @Test(arguments: [
        ["Cache-Control": "no-cache, max-age=600"], ["Cache-Control": "private, max-age=600"], [:],
        ["Cache-Control": "max-age=600", "Age": "600"],
        ["Expires": "Thu, 01 Jan 1970 00:00:00 GMT"],
    ])
    func photosWithoutFreshnessAreRevalidatedEveryTime(headers: [String: String]) async throws {
        try await TestHTTPServer.with { photos in
            let clock = ManualClock()
            let service = try await ServiceHarness.start { $0.clock = clock }
            defer { Task { await service.stop() } }
            let names = Array(0..<10)
            Self.serve(names, on: photos, headers: headers)
            try await Self.layOut(Self.feed(names, photos: photos), service)
            let start = photos.requests.count
            try await Self.layOut(Self.feed(names.reversed(), photos: photos), service)
            let second = Self.photoRequests(photos, since: start)
            #expect(second.paths.count == 10, "\(headers): \(second.paths)")
            #expect(second.conditional == 10, "\(headers)")
        }
    }

    @Test func noStoreKeepsNothing() async throws {
        try await TestHTTPServer.with { photos in
            let service = try await ServiceHarness.start { $0.clock = ManualClock() }
            defer { Task { await service.stop() } }
            let names = Array(0..<10)
            Self.serve(names, on: photos, headers: ["Cache-Control": "no-store"])
            try await Self.layOut(Self.feed(names, photos: photos), service)
            let start = photos.requests.count
            try await Self.layOut(Self.feed(names.reversed(), photos: photos), service)
            let second = Self.photoRequests(photos, since: start)
            #expect(second.paths.count == 10)
            #expect(second.conditional == 0, "a no-store photo was kept and revalidated")
        }
    }

    @Test func freshnessIsReadAsASharedCacheReadsIt() {
        let now = Date(timeIntervalSince1970: 1_800_000_000)
        func lifetime(_ headers: [(String, String)]) -> Double {
            HTTPFreshness(headers: .init(headers), received: now).lifetime
        }
        #expect(lifetime([("Cache-Control", "max-age=600")]) == 600)
        #expect(lifetime([("Cache-Control", "public, max-age=600, s-maxage=60")]) == 60)
        #expect(lifetime([("Cache-Control", "max-age=600"), ("Age", "100")]) == 500)
        #expect(lifetime([("Cache-Control", "max-age=600"), ("Age", "700")]) == 0)
        #expect(lifetime([("Cache-Control", "no-cache, max-age=600")]) == 0)
        #expect(lifetime([("Cache-Control", "private, max-age=600")]) == 0)
        #expect(lifetime([("Cache-Control", "max-age=-5")]) == 0)
        #expect(lifetime([]) == 0)
        #expect(
            lifetime([("Date", "Sun, 06 Nov 1994 08:49:37 GMT"), ("Expires", "Sun, 06 Nov 1994 09:49:37 GMT")]) == 3600)
        // max-age wins over Expires; an Expires that cannot be read is already past.
        #expect(lifetime([("Cache-Control", "max-age=5"), ("Expires", "Sun, 06 Nov 2094 09:49:37 GMT")]) == 5)
        #expect(lifetime([("Expires", "0")]) == 0)
        #expect(HTTPFreshness(headers: .init([("Cache-Control", "No-Store")]), received: now).noStore)
        #expect(!HTTPFreshness(headers: .init([("Cache-Control", "max-age=1")]), received: now).noStore)
    }
}
