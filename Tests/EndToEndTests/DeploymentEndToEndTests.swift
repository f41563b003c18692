import FeedLayoutTestSupport
import Foundation
import Testing

#if canImport(Glibc)
    import Glibc
#endif

/// What deploying `feedlayout serve` relies on: the binary runs alone (the web client is compiled in), and
/// `/readyz` follows the store while `/healthz` follows the process.
@Suite(.serialized, .timeLimit(.minutes(5)))
struct DeploymentEndToEndTests {
    typealias ServeProcess = ServeEndToEndTests.ServeProcess
    static let examples = CommandRunner.repositoryRoot.appendingPathComponent("examples/deploy")
    static let client = CommandRunner.repositoryRoot.appendingPathComponent(
        "Sources/LayoutService/Client/Resources/client")

    /// An answer read by curl: status, headers (names lowercased) and body.
    struct Answer {
        var status: Int
        var headers: [String: String]
        var body: Data
        var text: String { String(decoding: body, as: UTF8.self) }
    }

    static func fetch(_ url: String) async throws -> Answer {
        let folder = try CommandRunner.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: folder) }
        let body = folder.appendingPathComponent("body")
        let head = folder.appendingPathComponent("head")
        let output = try await CommandRunner.runTool(
            "/usr/bin/curl", ["-s", "-o", body.path, "-D", head.path, "-w", "%{http_code}", "--max-time", "30", url],
            timeout: 60)
        var headers: [String: String] = [:]
        for line in ((try? String(contentsOf: head, encoding: .utf8)) ?? "").split(separator: "\r\n") {
            guard let colon = line.firstIndex(of: ":") else { continue }
            headers[line[..<colon].lowercased()] = line[line.index(after: colon)...].trimmingCharacters(
                in: .whitespaces)
        }
        return Answer(
            status: Int(output.stdoutText) ?? 0, headers: headers, body: (try? Data(contentsOf: body)) ?? Data())
    }

    // MARK: One binary

    @Test func theBinaryCopiedAloneToAnotherFolderServesTheWebClient() async throws {
        let folder = try CommandRunner.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: folder) }
        let copy = folder.appendingPathComponent("feedlayout")
        // By cp, not by this process: a child another test forks while this process holds the copy open for
        // writing would inherit that descriptor, and running the copy would fail with "Text file busy".
        let copied = try await CommandRunner.runTool("/bin/cp", [CommandRunner.binary.path, copy.path], timeout: 120)
        #expect(copied.status == 0, "\(copied.stderr)")
        #expect(try FileManager.default.contentsOfDirectory(atPath: folder.path) == ["feedlayout"])
        let service = try await ServeProcess(
            store: folder.appendingPathComponent("store.sqlite").path, executable: copy)
        for (path, file) in [("/", "index.html"), ("/client/feed.js", "feed.js"), ("/client/feed.css", "feed.css")] {
            let answer = try await service.get(path)
            #expect(answer.status == 200, "\(path): \(service.log())")
            #expect(answer.body == (try Data(contentsOf: Self.client.appendingPathComponent(file))), "\(path)")
        }
        #expect(service.signal(SIGTERM) == 0, "\(service.log())")
        #expect(!service.log().contains("resource bundle"))
    }

    // MARK: Readiness

    /// PostgreSQL stopped under a running service: `/readyz` is a `503` `store-unavailable` with `Retry-After`, while
    /// `/healthz` stays `200` (the process is fine); once PostgreSQL is back, `/readyz` is `200` again.
    @Test func readinessFollowsTheStoreWhileHealthFollowsTheProcess() async throws {
        let cluster = try await PostgresTestCluster()
        defer { Task { await cluster.remove() } }
        let service = try await ServeProcess(store: cluster.url)
        defer { _ = service.signal(SIGTERM) }
        let base = "http://127.0.0.1:\(service.port)"

        let ready = try await Self.fetch(base + "/readyz")
        #expect(ready.status == 200 && ready.text == "{\"status\":\"ready\"}\n", "\(ready.text)")
        #expect(ready.headers["cache-control"] == "no-store")

        try await cluster.stop()
        let down = try await Self.fetch(base + "/readyz")
        #expect(down.status == 503, "\(down.text)")
        #expect(down.headers["content-type"] == "application/problem+json")
        #expect(down.headers["retry-after"] == "2")
        #expect(down.text.contains("\"type\":\"urn:feedlayout:problem:store-unavailable\""), "\(down.text)")
        #expect(!down.text.contains("postgres://"), "no store address reaches a client")
        let alive = try await Self.fetch(base + "/healthz")
        #expect(alive.status == 200 && alive.text.contains("\"ok\""), "\(alive.text)")

        try await cluster.start()
        // The client's pool connects again at the next question; a cluster just started may still refuse it for a
        // moment, so the test asks until it is ready (the suite's time limit ends a service that never is).
        var again = try await Self.fetch(base + "/readyz")
        while again.status != 200 {
            try await Task.sleep(for: .milliseconds(200))
            again = try await Self.fetch(base + "/readyz")
        }
        #expect(again.text == "{\"status\":\"ready\"}\n")
        #expect(service.log().contains("the store is not ready"), "the reason is in the operator's log")
    }
}
