import FeedLayoutTestSupport
import Foundation
import NIOHTTP1
import Testing

@testable import LayoutService

/// Every route, answered and refused, checked against the service's OpenAPI document
/// (`schemas/feedlayout-service.openapi.yaml`) by `scripts/check-openapi` (openapi-schema-validator).
@Suite(.timeLimit(.minutes(5)))
struct ServiceContractTests {
    @Test func everyResponseMatchesTheOpenAPIDocument() async throws {
        let service = try await ServiceHarness.start {
            $0.maximumFeedBytes = 200_000
            $0.imageRoot = ServiceFeeds.repositoryRoot.appendingPathComponent("sample-feed").path
        }
        defer { Task { await service.stop() } }
        let feed = ServiceFeeds.rss(items: 50, photoBase: "https://photos.invalid/")
        let posted = try await service.post([
            "feedText": feed, "baseURL": "https://example.org/feed.xml",
            "options": ["breakpoints": "375:2,768:3", "pageSize": 20, "placeholders": true, "lineHeight": "1.4x"],
        ])
        #expect(posted.status == 202, "\(posted.text)")
        let id = try #require(posted.json["id"] as? String)
        _ = try await service.post(["feedText": feed, "baseURL": "https://example.org/feed.xml",
            "options": ["breakpoints": "375:2,768:3", "pageSize": 20, "placeholders": true, "lineHeight": "1.4x"]])
        let done = try await service.waitUntilDone(id)
        #expect((done.json["layouts"] as? [[String: Any]])?.count == 2)
        _ = try await service.request(.GET, "/v1/layouts/\(id)")
        let first = try await service.request(.GET, "/v1/layouts/\(id)/pages/0?wait=5")
        _ = try await service.request(.GET, "/v1/layouts/\(id)/pages/1?layout=1", headers: [("Accept-Encoding", "gzip")])
        let tag = first.headers.first(name: "ETag") ?? ""
        _ = try await service.request(.GET, "/v1/layouts/\(id)/pages/0", headers: [("If-None-Match", tag)])
        if let cursor = first.json["cursor"] as? String {
            _ = try await service.request(.GET, "/v1/pages?cursor=\(cursor)&layout=\(id)")
        }
        _ = try await service.request(.GET, "/v1/layouts/\(id)/items?x=0&y=0&width=375&height=800")
        _ = try await service.request(.GET, "/v1/layouts/\(id)/items?x=0&y=0&width=768&height=800&layout=1")
        _ = try await service.request(.GET, "/v1/layouts/\(id)/snap?offset=333&direction=forward")
        _ = try await service.request(.GET, "/healthz")
        _ = try await service.request(.GET, "/readyz")
        _ = try await service.request(.GET, "/metrics")
        // The web client and what it loads.
        _ = try await service.request(.GET, "/")
        _ = try await service.request(.GET, "/view/\(id)")
        _ = try await service.request(.GET, "/view/feed/\(id)")
        let script = try await service.request(.GET, "/client/feed.js")
        _ = try await service.request(
            .GET, "/client/feed.js", headers: [("If-None-Match", script.headers.first(name: "ETag") ?? "")])
        let sheet = try await service.request(.GET, "/v1/layouts/\(id)/style.css")
        if let font = sheet.text.firstMatch(of: /url\("([^"]+)"\)/)?.1 { _ = try await service.request(.GET, String(font)) }
        _ = try await service.request(.GET, "/files/photos/espresso.jpg")
        // Refusals.
        _ = try await service.request(.POST, "/v1/layouts", body: Array("{".utf8))
        _ = try await service.post(["feedText": feed, "options": ["width": -1]])
        _ = try await service.post(["feedText": String(repeating: "x", count: 300_000)])
        _ = try await service.post(["feedText": "just text, no feed"])
        _ = try await service.post(["feed": "http://10.0.0.1/never.xml", "options": ["columns": 0]])
        _ = try await service.request(.GET, "/v1/layouts/\(id)/pages/99?wait=0")
        _ = try await service.request(.GET, "/v1/layouts/\(id)/pages/x")
        _ = try await service.request(.GET, "/v1/layouts/ffffffffffffffffffffffffffffffff")
        _ = try await service.request(.GET, "/v1/layouts/\(id)/items?x=0&y=zero&width=1&height=1")
        _ = try await service.request(.GET, "/v1/layouts/\(id)/snap?offset=1&direction=sideways")
        _ = try await service.request(.GET, "/v1/pages?cursor=nothing")
        _ = try await service.request(.PUT, "/v1/layouts/\(id)")
        _ = try await service.request(.GET, "/client/nothing.js")
        _ = try await service.request(.GET, "/files/photos/missing.jpg")
        _ = try await service.request(.GET, "/v1/layouts/\(id)/fonts/nothing.ttf")
        // Listing and removing layouts.
        _ = try await service.request(.GET, "/v1/layouts?limit=1")
        _ = try await service.request(.GET, "/v1/layouts?after=nothing")
        _ = try await service.request(.DELETE, "/v1/layouts/ffffffffffffffffffffffffffffffff")
        let removed = try await service.post(["feedText": ServiceFeeds.rss(items: 3, photoBase: "https://photos.invalid/", seed: 9)])
        _ = try await service.request(.DELETE, "/v1/layouts/\(removed.json["id"] as? String ?? "")")

        // Feed subscriptions (their first fetch fails: nothing answers at port 9).
        let subscribe = Array(#"{"feed": "http://127.0.0.1:9/feed.xml", "options": {"columns": 2}, "refresh": {"minSeconds": 120}}"#.utf8)
        let subscribed = try await service.request(.POST, "/v1/feeds", body: subscribe)
        let feedID = subscribed.json["id"] as? String ?? ""
        _ = try await service.request(.POST, "/v1/feeds", body: subscribe)
        _ = try await service.request(.POST, "/v1/feeds", body: Array(#"{"feed": "ftp://example.org/f"}"#.utf8))
        _ = try await service.request(.GET, "/v1/feeds/\(feedID)")
        _ = try await service.request(.GET, "/v1/feeds?limit=1")
        _ = try await service.request(.GET, "/v1/feeds?after=nothing")
        _ = try await service.request(.GET, "/v1/feeds/ffffffffffffffffffffffffffffffff/events")
        _ = try await service.request(.GET, "/v1/feeds/\(feedID)/events", headers: [("Last-Event-ID", "x")])
        _ = try await service.request(.DELETE, "/v1/feeds/\(feedID)")
        _ = try await service.request(.DELETE, "/v1/feeds/\(feedID)")
        let file = FileManager.default.temporaryDirectory.appendingPathComponent("exchanges-\(UUID().uuidString).jsonl")
        try service.recordedExchanges.write(to: file, atomically: true, encoding: .utf8)
        let (status, text) = try await OpenAPICheckerTests.check(["responses", file.path])
        #expect(status == 0, "the OpenAPI check failed:\n\(text)")
        #expect(text.contains("0 failed"), "\(text)")
    }
}

/// The checker itself: it passes exchanges that follow the document and fails every one of a set that each break
/// it in one way (a missing header, a wrong status, a body off its schema, …), so a green contract test means
/// something.
@Suite struct OpenAPICheckerTests {
    static func check(_ arguments: [String]) async throws -> (status: Int32, output: String) {
        try await onOwnThread {
            let process = Process()
            process.executableURL = URL(fileURLWithPath: "/usr/bin/env")
            process.arguments =
                ["python3", ServiceFeeds.repositoryRoot.appendingPathComponent("scripts/check-openapi").path]
                + arguments
            let pipe = Pipe()
            process.standardOutput = pipe
            process.standardError = pipe
            try process.run()
            let output = String(decoding: pipe.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
            return (process.waitForExit() ?? -1, output)
        }
    }

    static let fixtures = ServiceFeeds.repositoryRoot.appendingPathComponent("Tests/LayoutServiceTests/Fixtures/openapi")

    @Test func theDocumentIsValidOpenAPI() async throws {
        let (status, output) = try await Self.check(["spec"])
        #expect(status == 0, "\(output)")
    }

    @Test func goodExchangesPassAndEveryBrokenOneFails() async throws {
        let good = try await Self.check(["responses", Self.fixtures.appendingPathComponent("sample-exchanges.jsonl").path])
        #expect(good.status == 0, "\(good.output)")
        #expect(good.output.contains("34 passed, 0 failed"), "\(good.output)")
        let broken = try await Self.check(["responses", Self.fixtures.appendingPathComponent("broken-exchanges.jsonl").path])
        #expect(broken.status == 1)
        #expect(broken.output.contains("0 passed, 42 failed"), "\(broken.output)")
    }
}
