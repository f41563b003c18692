import FeedLayoutTestSupport
import Foundation
import NIOHTTP1
import Testing

@testable import LayoutService

/// The answers the OpenAPI document promises where schemathesis (`scripts/check-contract`) found the service and the
/// document apart: a breakpoint index past a layout's widths names nothing on every route, the items route needs
/// all four sides of its rectangle, a cached page is held to the same `wait` bound as the router's, and a problem
/// never names an empty field.
@Suite(.timeLimit(.minutes(5)))
struct QueryBoundsTests {
    @Test func aBreakpointIndexPastTheLayoutsWidthsIsNotFoundOnEveryRoute() async throws {
        let service = try await ServiceHarness.start()
        defer { Task { await service.stop() } }
        let posted = try await service.post([
            "feedText": ServiceFeeds.rss(items: 12, photoBase: "https://photos.invalid/"),
            "options": ["breakpoints": "375:2,768:3"],
        ])
        let id = try #require(posted.json["id"] as? String, "\(posted.text)")
        #expect(try await service.waitUntilDone(id).json["status"] as? String == "done")
        for path in ["pages/0?wait=0&", "items?x=0&y=0&width=100&height=100&", "snap?offset=0&"] {
            let within = try await service.request(.GET, "/v1/layouts/\(id)/\(path)layout=1")
            #expect(within.status == 200, "\(path): \(within.text)")
            // 2 is within the bounds of any layout (0 to 31) but past this one's two widths.
            let past = try await service.request(.GET, "/v1/layouts/\(id)/\(path)layout=2")
            #expect(past.status == 404, "\(path): \(past.text)")
            #expect(past.json["type"] as? String == "urn:feedlayout:problem:not-found", "\(path): \(past.text)")
            #expect(past.json["field"] as? String == "layout", "\(path): \(past.text)")
            // Past the most breakpoints any layout has: a malformed request.
            let outside = try await service.request(.GET, "/v1/layouts/\(id)/\(path)layout=32")
            #expect(outside.status == 400, "\(path): \(outside.text)")
            #expect(outside.json["field"] as? String == "layout", "\(path): \(outside.text)")
        }
    }

    @Test func theItemsRouteNeedsEverySideOfItsRectangle() async throws {
        let service = try await ServiceHarness.start()
        defer { Task { await service.stop() } }
        let posted = try await service.post(["feedText": ServiceFeeds.rss(items: 4, photoBase: "https://photos.invalid/")])
        let id = try #require(posted.json["id"] as? String, "\(posted.text)")
        _ = try await service.waitUntilDone(id)
        let sides = ["x": "0", "y": "0", "width": "100", "height": "100"]
        for missing in sides.keys.sorted() {
            let query = sides.filter { $0.key != missing }.map { "\($0.key)=\($0.value)" }.sorted().joined(separator: "&")
            let reply = try await service.request(.GET, "/v1/layouts/\(id)/items?\(query)")
            #expect(reply.status == 400, "without \(missing): \(reply.text)")
            #expect(reply.json["field"] as? String == missing, "without \(missing): \(reply.text)")
        }
        let beyond = try await service.request(.GET, "/v1/layouts/\(id)/items?x=0&y=-1000000000001&width=1&height=1")
        #expect(beyond.status == 400, "\(beyond.text)")
        #expect(beyond.json["field"] as? String == "y", "\(beyond.text)")
    }

    @Test func aCachedPageIsHeldToTheRoutersWaitBound() async throws {
        let service = try await ServiceHarness.start()
        defer { Task { await service.stop() } }
        let posted = try await service.post(["feedText": ServiceFeeds.rss(items: 4, photoBase: "https://photos.invalid/")])
        let id = try #require(posted.json["id"] as? String, "\(posted.text)")
        _ = try await service.waitUntilDone(id)
        // The first answer puts the page in memory, where the fast path answers the next ones.
        #expect(try await service.request(.GET, "/v1/layouts/\(id)/pages/0").status == 200)
        #expect(try await service.request(.GET, "/v1/layouts/\(id)/pages/0?wait=60").status == 200)
        let tooLong = try await service.request(.GET, "/v1/layouts/\(id)/pages/0?wait=61")
        #expect(tooLong.status == 400, "\(tooLong.text)")
        #expect(tooLong.json["field"] as? String == "wait", "\(tooLong.text)")
        let past = try await service.request(.GET, "/v1/layouts/\(id)/pages/0?layout=32")
        #expect(past.status == 400, "\(past.text)")
    }

    @Test func aProblemNeverNamesAnEmptyField() async throws {
        let service = try await ServiceHarness.start()
        defer { Task { await service.stop() } }
        let reply = try await service.request(.POST, "/v1/layouts", body: Array(#"{"": null}"#.utf8))
        #expect(reply.status == 400, "\(reply.text)")
        #expect(reply.json["type"] as? String == "urn:feedlayout:problem:invalid-request", "\(reply.text)")
        #expect(reply.json["field"] == nil, "\(reply.text)")
        #expect(reply.text.contains(#"unknown field \"\""#), "\(reply.text)")
    }
}
