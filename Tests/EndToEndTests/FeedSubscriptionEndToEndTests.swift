import FeedLayoutTestSupport
import Foundation
import Testing

#if canImport(Glibc)
    import Glibc
#endif

/// Feed subscriptions across `feedlayout serve` instances sharing one PostgreSQL store (a throwaway cluster of the
/// test's own): one instance at a time fetches a subscription's feed, and when that instance is killed (SIGKILL,
/// mid-fetch) the other takes the subscription over once the lease expires. The version's pages are
/// `feedlayout layout`'s, byte for byte.
@Suite(.serialized, .timeLimit(.minutes(5)))
struct FeedSubscriptionEndToEndTests {
    typealias ServeProcess = ServeEndToEndTests.ServeProcess
    static let commandOptions = ["--page-size", "20", "--width", "600", "--columns", "3"]

    static func post(_ instance: ServeProcess, _ json: [String: Any]) async throws -> [String: Any] {
        let reply = try await ServeProcess.http(
            "POST", "http://127.0.0.1:\(instance.port)/v1/feeds", body: try JSONSerialization.data(withJSONObject: json))
        #expect(reply.status == 201, "\(String(decoding: reply.body, as: UTF8.self))")
        return (try JSONSerialization.jsonObject(with: reply.body) as? [String: Any]) ?? [:]
    }

    @Test func oneInstanceRefreshesASubscriptionAndAnotherTakesOverWhenItIsKilled() async throws {
        try await PostgresTestDatabase.with { try await takeOver($0) }
    }

    private func takeOver(_ cluster: PostgresTestDatabase) async throws {
        try await TestHTTPServer.with { server in
            let feed = try ServeEndToEndTests.serveSlowFeed(server, items: 40, delay: 0)
            // The first fetch of the feed is held until the test opens the gate.
            let gate = ResponseGate(holdingAt: .beforeHead)
            let original = try #require(Self.resource(server, feed))
            var held = original
            held.gate = gate
            server.serve("/feed.xml", held)
            let arguments = ["--lease", "2", "--min-refresh", "1"]
            let a = try await ServeProcess(store: cluster.url, arguments: arguments)
            let b = try await ServeProcess(store: cluster.url, arguments: arguments)
            var alive = [a, b]
            defer { for instance in alive { _ = instance.signal(SIGTERM) } }
            let created = try await Self.post(
                a, ["feed": feed, "options": ["pageSize": 20, "width": 600, "columns": 3],
                    "refresh": ["minSeconds": 3600, "maxSeconds": 3600]])
            let id = try #require(created["id"] as? String)
            _ = await gate.waitUntilHeld()
            // Both instances look for due subscriptions every second (half the lease): for three seconds, while
            // the holder renews its lease, the other never fetches.
            try await Task.sleep(for: .seconds(3))
            #expect(server.requests(for: "/feed.xml").count == 1)
            let fetching = [a, b].filter { $0.log().contains("fetching a subscribed feed") }
            #expect(fetching.count == 1, "A: \(a.log())\nB: \(b.log())")
            let holder = try #require(fetching.first)
            let other = holder === a ? b : a
            _ = holder.signal(SIGKILL)
            alive.removeAll { $0 === holder }
            server.serve("/feed.xml", original)
            gate.open()

            // The other instance takes the subscription over once the lease has expired, and makes its version.
            let deadline = Date().addingTimeInterval(60)
            var state: [String: Any] = [:]
            while Date() < deadline {
                state = try await other.json("/v1/feeds/\(id)")
                if (state["versions"] as? [[String: Any]])?.count == 1, state["pending"] is NSNull { break }
                try await Task.sleep(for: .milliseconds(100))
            }
            let versions = state["versions"] as? [[String: Any]] ?? []
            #expect(versions.count == 1, "\(state)\n\(other.log())")
            #expect(other.log().contains("fetching a subscribed feed"), "\(other.log())")
            #expect(server.requests(for: "/feed.xml").count == 2)
            let layout = try #require(versions.first?["layout"] as? String)
            let done = try await other.waitUntilDone(layout)
            #expect(done["status"] as? String == "done", "\(done)")
            let expected = try await ServeEndToEndTests.cliPages(feed, options: Self.commandOptions)
            #expect(done["pages"] as? Int == expected.count)
            try await ServeEndToEndTests.expectServedPages(other, layout, equal: expected)
        }
    }

    /// An event stream open when the service is stopped (SIGTERM) ends cleanly: the client reads a whole chunked
    /// response (curl exits 0, not 18 for a cut transfer), and the service exits 0.
    @Test func anEventStreamEndsCleanlyWhenTheServiceStops() async throws {
        try await TestHTTPServer.with { server in
            let feed = try ServeEndToEndTests.serveSlowFeed(server, items: 5, delay: 0)
            let folder = try CommandRunner.temporaryDirectory()
            let service = try await ServeProcess(
                store: folder.appendingPathComponent("store.sqlite").path, arguments: ["--min-refresh", "1"])
            let created = try await Self.post(service, ["feed": feed])
            let id = try #require(created["id"] as? String)
            let output = folder.appendingPathComponent("events.txt")
            let curl = Process()
            curl.executableURL = URL(fileURLWithPath: "/usr/bin/curl")
            curl.arguments = ["-sN", "-o", output.path, "http://127.0.0.1:\(service.port)/v1/feeds/\(id)/events"]
            try curl.run()
            let deadline = Date().addingTimeInterval(60)
            var text = ""
            while !text.contains("event: version"), Date() < deadline {
                try await Task.sleep(for: .milliseconds(50))
                text = (try? String(contentsOf: output, encoding: .utf8)) ?? ""
            }
            #expect(text.contains("id: 1\nevent: version\n"), "\(text)\n\(service.log())")
            #expect(service.signal(SIGTERM) == 0, "\(service.log())")
            let status = curl.waitForExit(timeout: max(1, deadline.timeIntervalSinceNow))
            if status == nil { curl.terminate() }
            #expect(status == 0, "curl exited \(status.map(String.init) ?? "not at all")")
        }
    }

    /// What `server` serves at the path of `url`.
    static func resource(_ server: TestHTTPServer, _ url: String) -> TestHTTPServer.Resource? {
        server.resource(at: URL(string: url)?.path ?? "")
    }
}
