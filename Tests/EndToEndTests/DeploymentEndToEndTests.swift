import FeedLayoutTestSupport
import Foundation
import Testing

#if canImport(Glibc)
    import Glibc
#endif

/// What deploying `feedlayout serve` relies on: the binary runs alone (the web client is compiled in), `/readyz`
/// follows the store while `/healthz` follows the process, and the examples in `examples/deploy/` work: the systemd
/// unit passes `systemd-analyze verify`, and the nginx site, run by a real nginx in front of serve, answers the same
/// bytes as serve itself.
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

    // MARK: examples/deploy

    @Test(
        .enabled(
            if: FileManager.default.isExecutableFile(atPath: "/usr/bin/systemd-analyze"),
            "systemd-analyze is missing (Debian's systemd package): the unit is not checked"))
    func theSystemdUnitPassesSystemdAnalyzeVerify() async throws {
        let unit = try String(contentsOf: Self.examples.appendingPathComponent("feedlayout.service"), encoding: .utf8)
        #expect(unit.contains("ExecStart=/usr/local/bin/feedlayout serve --host 127.0.0.1 "))
        #expect(unit.contains("EnvironmentFile=-/etc/feedlayout/feedlayout.env"))
        #expect(unit.contains("StateDirectory=feedlayout") && unit.contains("DynamicUser=yes"))
        // verify checks that ExecStart names an executable: the built binary stands in for the installed one.
        let folder = try CommandRunner.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: folder) }
        let checked = folder.appendingPathComponent("feedlayout.service")
        try unit.replacingOccurrences(of: "/usr/local/bin/feedlayout", with: CommandRunner.binary.path)
            .write(to: checked, atomically: true, encoding: .utf8)
        let verified = try await CommandRunner.runTool(
            "/usr/bin/systemd-analyze", ["verify", "--man=no", checked.path], timeout: 120)
        #expect(verified.status == 0, "\(verified.stderr)")
        #expect(!verified.stderr.contains("feedlayout.service"), "warnings about the unit: \(verified.stderr)")
    }

    /// A real nginx with the example site in front of serve on loopback: every page, the layout and the client's
    /// files fetched through it are the bytes serve answers directly, and nginx's requests for pages are answered
    /// by the page fast path (counted in `feedlayout_page_fast_path_total`).
    @Test func theNginxSiteProxiesToServeByteForByteAndPagesTakeTheFastPath() async throws {
        let nginx = "/usr/sbin/nginx"
        try #require(
            FileManager.default.isExecutableFile(atPath: nginx),
            "nginx is missing: scripts/install-deps --test installs Debian's nginx")
        try await TestHTTPServer.with { server in
            try RemoteFeedEndToEndTests.serveSampleFeed(server)
            let folder = try CommandRunner.temporaryDirectory()
            defer { try? FileManager.default.removeItem(at: folder) }
            let service = try await ServeProcess(store: folder.appendingPathComponent("store.sqlite").path)
            defer { _ = service.signal(SIGTERM) }
            let posted = try await service.post([
                "feed": server.url("/feed"), "options": ["width": 800, "columns": 3, "pageSize": 12],
            ])
            #expect(posted.status == 202, "\(String(decoding: posted.body, as: UTF8.self))")
            let id = try #require(
                (try JSONSerialization.jsonObject(with: posted.body) as? [String: Any])?["id"] as? String)
            let done = try await service.waitUntilDone(id)
            #expect(done["status"] as? String == "done", "\(done)")
            let pageCount = try #require(done["pages"] as? Int)
            #expect(pageCount > 1)

            let proxy = try await NginxProcess(
                site: Self.examples.appendingPathComponent("feedlayout.nginx.conf"),
                upstreamPort: service.port, folder: folder.appendingPathComponent("nginx"))
            defer { proxy.stop() }
            let direct = "http://127.0.0.1:\(service.port)"
            let proxied = "http://127.0.0.1:\(proxy.port)"
            let pages = (0..<pageCount).map { "/v1/layouts/\(id)/pages/\($0)" }
            // Directly first: the pages are then in serve's memory, where the fast path answers from.
            var expected: [String: Answer] = [:]
            for path in pages + ["/v1/layouts/\(id)", "/", "/client/feed.js", "/readyz"] {
                expected[path] = try await Self.fetch(direct + path)
                #expect(expected[path]?.status == 200, "\(path)")
            }
            let before = try await Self.fastPathCount(direct)
            for path in pages {
                let answer = try await Self.fetch(proxied + path)
                #expect(answer.status == 200, "\(path) through nginx: \(answer.text.prefix(300)); \(proxy.log())")
                #expect(answer.body == expected[path]?.body, "\(path) through nginx is not serve's page")
                #expect(answer.headers["etag"] == expected[path]?.headers["etag"], "\(path)")
            }
            let after = try await Self.fastPathCount(direct)
            #expect(
                after - before >= pageCount,
                "nginx's \(pageCount) page requests are answered by the page fast path (feedlayout_page_fast_path_total went from \(before) to \(after))"
            )
            for path in ["/v1/layouts/\(id)", "/", "/client/feed.js", "/readyz"] {
                let answer = try await Self.fetch(proxied + path)
                #expect(answer.status == 200 && answer.body == expected[path]?.body, "\(path) through nginx")
            }
        }
    }

    /// The sum of every `feedlayout_page_fast_path_total` series of serve's `/metrics` (0 when there is none).
    static func fastPathCount(_ base: String) async throws -> Int {
        let metrics = try await fetch(base + "/metrics")
        #expect(metrics.status == 200)
        return metrics.text.split(separator: "\n").filter {
            $0.hasPrefix("feedlayout_page_fast_path_total")
        }.compactMap { line in line.split(separator: " ").last.flatMap { Double($0) } }.reduce(0) { $0 + Int($1) }
    }

    /// nginx (Debian's) running the example site, made to listen on a free port of 127.0.0.1 and to proxy to serve's
    /// port, under a main configuration of the test's own (a folder for its pid, logs and temporary files).
    final class NginxProcess: @unchecked Sendable {
        // Unchecked: every member is a constant set at start, and `Process` is safe to signal from any task.
        let process = Process()
        let port: Int
        let folder: URL

        init(site: URL, upstreamPort: Int, folder: URL) async throws {
            self.folder = folder
            try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
            port = try PostgresTestCluster.freePort()
            var text = try String(contentsOf: site, encoding: .utf8)
            // The example's addresses, replaced: each must be there (a test of the example as it is written).
            for (example, here) in [
                ("    listen 80;\n", "    listen 127.0.0.1:\(port);\n"), ("    listen [::]:80;\n", ""),
                ("server 127.0.0.1:8080;", "server 127.0.0.1:\(upstreamPort);"),
            ] {
                guard text.contains(example) else {
                    throw TestInputError(message: "the example site no longer has \(example.debugDescription)")
                }
                text = text.replacingOccurrences(of: example, with: here)
            }
            try text.write(to: folder.appendingPathComponent("site.conf"), atomically: true, encoding: .utf8)
            let path = folder.path
            // Run as root, nginx's workers would switch to `nobody`, which may not write this folder.
            let main = """
                \(getuid() == 0 ? "user root;" : "")
                daemon off;
                worker_processes 1;
                pid \(path)/nginx.pid;
                error_log \(path)/error.log warn;
                events { worker_connections 256; }
                http {
                  access_log \(path)/access.log;
                  client_body_temp_path \(path)/client;
                  proxy_temp_path \(path)/proxy;
                  fastcgi_temp_path \(path)/fastcgi;
                  uwsgi_temp_path \(path)/uwsgi;
                  scgi_temp_path \(path)/scgi;
                  include \(path)/site.conf;
                }
                """
            try main.write(to: folder.appendingPathComponent("nginx.conf"), atomically: true, encoding: .utf8)
            process.executableURL = URL(fileURLWithPath: "/usr/sbin/nginx")
            process.arguments = ["-p", path, "-c", path + "/nginx.conf", "-e", path + "/error.log"]
            process.standardOutput = FileHandle.nullDevice
            process.standardError = FileHandle.nullDevice
            try process.run()
            // Up once it answers (anything: serve's own answer comes through).
            let deadline = Date().addingTimeInterval(30)
            while (try? await DeploymentEndToEndTests.fetch("http://127.0.0.1:\(port)/healthz"))?.status != 200 {
                guard process.isRunning, Date() < deadline else {
                    stop()
                    throw TestInputError(message: "nginx did not start: \(log())")
                }
                try await Task.sleep(for: .milliseconds(100))
            }
        }

        func log() -> String {
            (try? String(contentsOf: folder.appendingPathComponent("error.log"), encoding: .utf8)) ?? ""
        }

        /// Fast shutdown (SIGTERM), waited for.
        func stop() {
            guard process.isRunning else { return }
            kill(process.processIdentifier, SIGTERM)
            _ = process.waitForExit()
        }
    }
}
