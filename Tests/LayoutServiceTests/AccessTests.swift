import AsyncHTTPClient
import ByteTools
import FeedLayoutTestSupport
import Foundation
import HTTPTypes
import NIOCore
import NIOHTTP1
import Synchronization
import Testing

@testable import LayoutService

/// Keys, scopes, CORS, request ids and quotas: the rules' decisions one by one, then a service that applies them on
/// the router and on the page fast path alike.
@Suite(.timeLimit(.minutes(5)))
struct AccessTests {
    static func digest(_ token: String) -> String { SHA256.hexDigest(Array(token.utf8)) }

    static let keysText = """
        # the service's keys
        writer:read,write:\(digest("write-token"))
        reader:read:\(digest("read-token"))

        operator:admin:\(digest("admin-token"))
        """

    static func keys() throws -> APIKeys { try APIKeys(text: keysText, source: "keys.txt") }

    static func temporaryFolder() throws -> URL {
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("feedlayout-access-\(UUID())")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        TemporaryFolders.removeAtExit(folder)
        return folder
    }

    // MARK: The keys file

    @Test func aKeysFileGivesEachTokenItsKeyAndNoTokenInClear() throws {
        let keys = try Self.keys()
        #expect(keys.keys.map(\.name) == ["writer", "reader", "operator"])
        #expect(keys.key(forToken: Array("write-token".utf8))?.name == "writer")
        #expect(keys.key(forToken: Array("read-token".utf8))?.scopes == [.read])
        #expect(keys.key(forToken: Array("read-token ".utf8)) == nil)
        #expect(keys.key(forToken: Array("".utf8)) == nil)
        #expect(keys.key(forToken: Array(Self.digest("write-token").utf8)) == nil, "the digest is not the token")
        let admin = try #require(keys.key(forToken: Array("admin-token".utf8)))
        #expect(admin.allows(.read) && admin.allows(.write) && admin.allows(.admin))
        #expect(!keys.key(forToken: Array("write-token".utf8))!.allows(.admin))
    }

    @Test(arguments: [
        ("a:read", "keys.txt:1: expected NAME:SCOPES:SHA256HEX, got 2 field(s)"),
        ("a:read,delete:\(String(repeating: "0", count: 64))", "keys.txt:1: unknown scope 'delete' (read, write or admin)"),
        ("a:read:\(String(repeating: "A", count: 64))", "keys.txt:1: the key's digest is not 64 lower-case hex digits"),
        ("a:read:abc", "keys.txt:1: the key's digest is not 64 lower-case hex digits"),
        ("\n# c\na b:read:\(String(repeating: "0", count: 64))", "keys.txt:3: the name 'a b' is not 1 to 64 letters"),
        (
            "a:read:\(String(repeating: "0", count: 64))\na:write:\(String(repeating: "1", count: 64))",
            "keys.txt:2: the name 'a' is used twice"
        ),
        (
            "a:read:\(String(repeating: "0", count: 64))\nb:write:\(String(repeating: "0", count: 64))",
            "keys.txt:2: the same token digest is given twice"
        ),
    ])
    func aWrongLineOfTheKeysFileIsNamedWithWhatIsWrong(text: String, message: String) {
        #expect {
            try APIKeys(text: text, source: "keys.txt")
        } throws: { error in
            "\(error)".hasPrefix(message)
        }
    }

    @Test func aKeysFileThatCannotBeReadOrIsEmptyIsAnError() throws {
        let folder = try Self.temporaryFolder()
        let empty = folder.appendingPathComponent("keys")
        try Data("# nothing yet\n".utf8).write(to: empty)
        #expect(throws: APIKeysError.self) { try APIKeys(contentsOfFile: empty.path) }
        #expect(throws: APIKeysError.self) { try APIKeys(contentsOfFile: folder.appendingPathComponent("none").path) }
    }

    // MARK: The rules' decisions

    static func rules(
        keys: APIKeys? = nil, privateReads: Bool = false, cors: [String] = []
    ) -> RequestRules {
        RequestRules(
            routes: ServiceRoute.all, keys: keys, privateReads: privateReads, corsOrigins: cors, accessLog: nil,
            metrics: ServiceMetrics())
    }

    static func facts(
        _ method: HTTPRequest.Method, _ route: String?, path: String = "/x", token: String? = nil,
        authorization: String? = nil, origin: String? = nil, requestID: String? = nil, preflight: String? = nil
    ) -> RequestRules.Facts {
        RequestRules.Facts(
            method: method, route: route, path: Substring(path),
            authorization: (authorization ?? token.map { "Bearer " + $0 }).map { Substring($0) },
            origin: origin.map { Substring($0) }, requestID: requestID.map { Substring($0) },
            preflightMethod: preflight.map { Substring($0) })
    }

    @Test func withoutKeysEveryRouteIsOpen() {
        let rules = Self.rules()
        for route in ServiceRoute.all {
            let decision = rules.decide(Self.facts(route.method, route.routerPath))
            #expect(decision.answer == nil, "\(route.method) \(route.path)")
        }
    }

    @Test func withKeysWritesNeedWriteAndMetricsNeedAdmin() throws {
        let rules = Self.rules(keys: try Self.keys())
        let post = rules.decide(Self.facts(.post, "/v1/layouts"))
        #expect(post.answer?.status == .unauthorized)
        #expect(post.answer?.headers[.wwwAuthenticate] == "Bearer realm=\"feedlayout\"")
        let wrong = rules.decide(Self.facts(.post, "/v1/layouts", token: "guess"))
        #expect(wrong.answer?.status == .unauthorized)
        #expect(wrong.answer?.headers[.wwwAuthenticate]?.contains("invalid_token") == true)
        let basic = rules.decide(Self.facts(.post, "/v1/layouts", authorization: "Basic d3JpdGUtdG9rZW4="))
        #expect(basic.answer?.status == .unauthorized)
        let reader = rules.decide(Self.facts(.post, "/v1/layouts", token: "read-token"))
        #expect(reader.answer?.status == .forbidden)
        #expect(reader.answer?.detail == "the key 'reader' lacks the scope 'write' that POST /v1/layouts needs")
        #expect(reader.keyName == "reader")
        let writer = rules.decide(Self.facts(.post, "/v1/layouts", authorization: "bearer  write-token"))
        #expect(writer.answer == nil && writer.keyName == "writer")
        #expect(rules.decide(Self.facts(.get, "/metrics", token: "write-token")).answer?.status == .forbidden)
        #expect(rules.decide(Self.facts(.get, "/metrics", token: "admin-token")).answer == nil)
        // Reads stay public: pages are immutable and made for CDNs.
        #expect(rules.decide(Self.facts(.get, ServiceRoute.pagePath)).answer == nil)
        #expect(rules.decide(Self.facts(.get, "/v1/layouts/{id}")).answer == nil)
    }

    @Test func privateReadsNeedReadOnEveryV1ReadAndNothingElse() throws {
        let rules = Self.rules(keys: try Self.keys(), privateReads: true)
        for route in ServiceRoute.all where route.method == .get {
            let anonymous = rules.decide(Self.facts(.get, route.routerPath))
            if route.path.hasPrefix("/v1/") {
                #expect(anonymous.answer?.status == .unauthorized, "\(route.path)")
                let reader = rules.decide(Self.facts(.get, route.routerPath, token: "read-token")).answer
                // The list of every client's layouts is the operators'.
                #expect(route.access == .admin ? reader?.status == .forbidden : reader == nil, "\(route.path)")
                #expect(rules.decide(Self.facts(.get, route.routerPath, token: "admin-token")).answer == nil)
            } else if route.access == .open {
                #expect(anonymous.answer == nil, "\(route.path)")
            }
        }
    }

    @Test func corsAnswersAllowedOriginsOnReadsAndTheirPreflights() {
        let rules = Self.rules(cors: ["https://app.example.org"])
        let page = rules.decide(Self.facts(.get, ServiceRoute.pagePath, origin: "https://app.example.org"))
        let fields = rules.responseFields(for: page)
        #expect(fields.contains { $0.0 == .accessControlAllowOrigin && $0.1 == "https://app.example.org" })
        #expect(fields.contains { $0.0 == .vary && $0.1 == "Origin" })
        let other = rules.decide(Self.facts(.get, ServiceRoute.pagePath, origin: "https://evil.example"))
        #expect(!rules.responseFields(for: other).contains { $0.0 == .accessControlAllowOrigin })
        #expect(rules.responseFields(for: other).contains { $0.0 == .vary }, "a cache keeps answers apart by origin")
        // Writes are not for other origins.
        let post = rules.decide(Self.facts(.post, "/v1/layouts", origin: "https://app.example.org"))
        #expect(!rules.responseFields(for: post).contains { $0.0 == .accessControlAllowOrigin })

        let preflight = rules.decide(
            Self.facts(.options, nil, path: "/v1/layouts/abc/pages/3", origin: "https://app.example.org", preflight: "GET"))
        #expect(preflight.isPreflight && preflight.answer == nil)
        #expect(rules.responseFields(for: preflight).contains { $0.0 == .accessControlAllowMethods })
        let postPreflight = rules.decide(
            Self.facts(.options, nil, path: "/v1/layouts", origin: "https://app.example.org", preflight: "POST"))
        #expect(postPreflight.answer?.kind == "cors-refused")
        let strangerPreflight = rules.decide(
            Self.facts(.options, nil, path: "/v1/layouts/abc", origin: "https://evil.example", preflight: "GET"))
        #expect(strangerPreflight.answer?.status == .forbidden)
        #expect(Self.rules().decide(Self.facts(.options, nil, path: "/v1/layouts/abc", preflight: "GET")).answer != nil)
    }

    @Test func aRequestIDIsTheClientsWhenPlainElseMadeHere() {
        let ids = RequestIDs()
        #expect(ids.accept("trace-42.a:b_c") == "trace-42.a:b_c")
        let made = [ids.accept(nil), ids.accept("two words"), ids.accept("x\r\nInjected: 1"), ids.accept(Substring(String(repeating: "a", count: 129)))]
        #expect(Set(made).count == 4)
        #expect(made.allSatisfy { RequestIDs.isPlain(Substring($0)) })
    }

    // MARK: Quotas, on a clock of the test's own

    @Test func theTokenBucketRefillsAtItsRateAndSaysWhenToComeBack() {
        let clock = Mutex(0.0)
        let quotas = CreationQuotas(
            limits: .init(perMinute: 6, burst: 2, queuedLayouts: 0), now: { clock.withLock { $0 } })
        #expect(quotas.admit("a") == nil)
        #expect(quotas.admit("a") == nil)
        #expect(quotas.admit("a") == .rate(retryAfterSeconds: 10))
        #expect(quotas.admit("b") == nil, "each client has its own bucket")
        clock.withLock { $0 = 4 }
        #expect(quotas.admit("a") == .rate(retryAfterSeconds: 6))
        clock.withLock { $0 = 10 }
        #expect(quotas.admit("a") == nil)
        #expect(quotas.admit("a") == .rate(retryAfterSeconds: 10))
        quotas.refund("a")
        #expect(quotas.admit("a") == nil, "a creation that made nothing new is given back")
        clock.withLock { $0 = 1000 }
        #expect(quotas.admit("a") == nil)
        #expect(quotas.admit("a") == nil)
        #expect(quotas.admit("a") != nil, "a bucket never holds more than its burst")
    }

    @Test func queuedLayoutsAreBoundedPerClientUntilTheyEnd() {
        let quotas = CreationQuotas(limits: .init(perMinute: 0, burst: 1, queuedLayouts: 2))
        quotas.layoutQueued("L1", client: "a")
        quotas.layoutQueued("L1", client: "a")
        #expect(quotas.admit("a") == nil)
        quotas.layoutQueued("L2", client: "a")
        #expect(quotas.admit("a") == .queued(limit: 2))
        #expect(quotas.admit("b") == nil)
        quotas.layoutEnded("L1")
        quotas.layoutEnded("L1")
        #expect(quotas.outstanding("a") == 1)
        #expect(quotas.admit("a") == nil)
    }

    // MARK: A service with keys

    static func startService(_ configure: (inout ServiceSettings) -> Void = { _ in }) async throws -> ServiceHarness {
        let keys = try keys()
        return try await ServiceHarness.start { settings in
            settings.apiKeys = keys
            settings.privateReads = true
            settings.corsOrigins = ["https://app.example.org"]
            settings.accessLog = nil
            settings.imageRoot = ServiceFeeds.repositoryRoot.appendingPathComponent("sample-feed").path
            configure(&settings)
        }
    }

    static func postSample(_ service: ServiceHarness, token: String) async throws -> ServiceHarness.Reply {
        let feed = try String(contentsOf: ServiceFeeds.repositoryRoot.appendingPathComponent("sample-feed/feed.xml"), encoding: .utf8)
        return try await service.request(
            .POST, "/v1/layouts",
            body: [UInt8](try JSONSerialization.data(withJSONObject: ["feedText": feed])),
            headers: [("Authorization", "Bearer " + token)])
    }

    static func fastPathCount(_ service: ServiceHarness) async throws -> Int {
        let metrics = try await service.request(.GET, "/metrics", headers: [("Authorization", "Bearer admin-token")], record: false)
        let line = metrics.text.split(separator: "\n").first { $0.hasPrefix("feedlayout_page_fast_path_total ") }
        return Int(line?.split(separator: " ").last ?? "") ?? -1
    }

    @Test func cachedAndUncachedPagesCarryTheSameFieldsAndTheSameRules() async throws {
        let service = try await Self.startService()
        defer { Task { await service.stop() } }
        #expect(try await Self.postSample(service, token: "read-token").status == 403)
        let posted = try await Self.postSample(service, token: "write-token")
        #expect(posted.status == 202)
        let id = try #require(posted.json["id"] as? String)
        let reader = [("Authorization", "Bearer read-token")]
        #expect(try await service.waitUntilDone(id, headers: reader).json["status"] as? String == "done")
        let path = "/v1/layouts/\(id)/pages/0"
        let headers = reader + [("Origin", "https://app.example.org"), ("X-Request-Id", "same-id"), ("Accept-Encoding", "gzip")]
        let before = try await Self.fastPathCount(service)
        // A client of its own: a connection that carried a request body (the post) is the decoder's for good.
        let reads = HTTPClient(eventLoopGroupProvider: .singleton, configuration: .init(decompression: .disabled))
        defer { _ = reads.shutdown() }
        func get(_ headers: [(String, String)] = headers) async throws -> ServiceHarness.Reply {
            var request = HTTPClientRequest(url: service.url(path))
            for (name, value) in headers { request.headers.add(name: name, value: value) }
            let response = try await reads.execute(request, timeout: .seconds(60))
            let raw = [UInt8](buffer: try await response.body.collect(upTo: 1 << 26))
            return ServiceHarness.Reply(status: Int(response.status.code), headers: response.headers, raw: raw, body: raw)
        }
        let first = try await get()
        let second = try await get()
        #expect(try await Self.fastPathCount(service) == before + 1, "the second answer came from the fast path")
        func fields(_ reply: ServiceHarness.Reply) -> [String] {
            reply.headers.filter { $0.name.lowercased() != "date" }.map { $0.name.lowercased() + ": " + $0.value }.sorted()
        }
        #expect(first.status == 200 && second.status == 200)
        #expect(fields(first) == fields(second))
        #expect(first.raw == second.raw)
        #expect(first.headers["x-request-id"] == ["same-id"])
        #expect(first.headers["access-control-allow-origin"] == ["https://app.example.org"])

        // Without a key, the cached page is refused as the uncached one would be: by the router, as a problem.
        let anonymous = try await get([("X-Request-Id", "anon-1")])
        #expect(anonymous.status == 401)
        #expect(anonymous.json["requestId"] as? String == "anon-1")
        #expect(anonymous.headers["www-authenticate"].first?.hasPrefix("Bearer") == true)
        let wrong = try await get([("Authorization", "Bearer nope")])
        #expect(wrong.status == 401)
        #expect(try await get(headers).status == 200, "the connection goes on after a refusal")
        #expect(try await Self.fastPathCount(service) == before + 2)
    }

    @Test func theFastPathAnswersHTTP10AndConnectionCloseAndThenCloses() async throws {
        let service = try await Self.startService { $0.privateReads = false }
        defer { Task { await service.stop() } }
        let posted = try await Self.postSample(service, token: "write-token")
        let id = try #require(posted.json["id"] as? String)
        _ = try await service.waitUntilDone(id)
        let path = "/v1/layouts/\(id)/pages/0"
        let warm = try await service.request(.GET, path)
        let before = try await Self.fastPathCount(service)
        // What nginx's proxy_pass sends by default.
        let nginxLike: [UInt8] = Array("GET \(path) HTTP/1.0\r\nHost: upstream\r\nConnection: close\r\n\r\n".utf8)
        let (answers, closed) = try await WireClient.exchangeAndWatch(
            port: service.port, chunks: [nginxLike + nginxLike], answers: 2, watchClose: true)
        #expect(answers.map(\.status) == [200], "one answer, then the connection is closed")
        #expect(answers.first?.body == warm.raw)
        #expect(answers.first?.headers["connection"] == "close")
        #expect(closed != nil)
        let keepAlive: [UInt8] = Array("GET \(path) HTTP/1.0\r\nHost: upstream\r\nConnection: keep-alive\r\n\r\n".utf8)
        let kept = try await WireClient.exchange(port: service.port, chunks: [keepAlive + keepAlive], answers: 2)
        #expect(kept.map(\.status) == [200, 200])
        #expect(kept.first?.headers["connection"] == "keep-alive")
        #expect(try await Self.fastPathCount(service) == before + 3)
        // A token the fast path does not know goes to the decoder and the router.
        let upgrade: [UInt8] = Array("GET \(path) HTTP/1.1\r\nHost: x\r\nConnection: upgrade\r\nUpgrade: h2c\r\n\r\n".utf8)
        #expect(try await WireClient.exchange(port: service.port, chunks: [upgrade], answers: 1).map(\.status) == [200])
        #expect(try await Self.fastPathCount(service) == before + 3)
    }

    @Test func creationsOverTheRateAre429AndOverTheQueueAre503() async throws {
        let service = try await Self.startService { settings in
            settings.creationsPerMinute = 0.01
            settings.creationBurst = 2
        }
        defer { Task { await service.stop() } }
        let first = try await Self.postSample(service, token: "write-token")
        #expect(first.status == 202)
        // The same layout again made nothing new: its creation is given back.
        #expect(try await Self.postSample(service, token: "write-token").status == 200)
        let id = try #require(first.json["id"] as? String)
        _ = try await service.waitUntilDone(id)
        for width in [300, 301] {
            let reply = try await service.request(
                .POST, "/v1/layouts",
                body: [UInt8](try JSONSerialization.data(withJSONObject: [
                    "feedText": "<rss version=\"2.0\"><channel><title>t</title></channel></rss>",
                    "options": ["width": width],
                ])),
                headers: [("Authorization", "Bearer write-token")])
            if width == 300 {
                #expect(reply.status == 202)
            } else {
                #expect(reply.status == 429)
                #expect(reply.json["type"] as? String == "urn:feedlayout:problem:rate-limited")
                #expect(Int(reply.headers["retry-after"].first ?? "") ?? 0 > 60)
            }
        }
        let metrics = try await service.request(.GET, "/metrics", headers: [("Authorization", "Bearer admin-token")])
        #expect(metrics.text.contains("feedlayout_key_rejections_total{key=\"writer\",status=\"429\"} 1"))
    }

    @Test func anAccessLogTextLineHasEveryFieldAndQuotesAStrangePath() throws {
        let path = try Self.temporaryFolder().appendingPathComponent("access.log").path
        let log = try AccessLog(destination: path, format: .text)
        log.record(
            AccessLog.Entry(
                method: "GET", route: "/v1/layouts/{id}", path: "/v1/layouts/ab", status: 200, bytes: 1234,
                duration: .microseconds(1_234), requestID: "r-1", keyName: nil))
        log.record(
            AccessLog.Entry(
                method: "GET", route: "unknown", path: "/a b\"c", status: 404, bytes: nil, duration: .microseconds(10_000_007),
                requestID: "r-2", keyName: "writer"))
        log.flush()
        let lines = try String(contentsOfFile: path, encoding: .utf8).split(separator: "\n")
        #expect(lines.count == 2)
        #expect(lines[0].hasSuffix(
            "Z info feedlayout.access: GET /v1/layouts/{id} path=/v1/layouts/ab status=200 bytes=1234 duration_ms=1.234 request_id=r-1 key=-"))
        #expect(lines[1].hasSuffix(
            #"GET unknown path="/a b\"c" status=404 bytes=- duration_ms=10000.007 request_id=r-2 key=writer"#))
    }

    @Test func theAccessLogHasALinePerRequestOnBothPaths() async throws {
        let folder = try Self.temporaryFolder()
        let logPath = folder.appendingPathComponent("access.log").path
        let service = try await Self.startService { settings in
            settings.privateReads = false
            settings.accessLog = logPath
            settings.logFormat = .json
        }
        let posted = try await Self.postSample(service, token: "write-token")
        let id = try #require(posted.json["id"] as? String)
        _ = try await service.waitUntilDone(id)
        for _ in 0..<2 {
            _ = try await service.request(.GET, "/v1/layouts/\(id)/pages/0", headers: [("X-Request-Id", "page-read")])
        }
        await service.stop()
        let lines = try String(contentsOfFile: logPath, encoding: .utf8).split(separator: "\n")
        let entries = lines.compactMap { try? JSONSerialization.jsonObject(with: Data($0.utf8)) as? [String: Any] }
        #expect(entries.count == lines.count, "every line is a JSON object")
        let post = try #require(entries.first { $0["method"] as? String == "POST" })
        #expect(post["route"] as? String == "/v1/layouts" && post["status"] as? Int == 202 && post["key"] as? String == "writer")
        let pages = entries.filter { $0["requestId"] as? String == "page-read" }
        #expect(pages.count == 2)
        #expect(pages.allSatisfy { $0["route"] as? String == ServiceRoute.pagePath && $0["status"] as? Int == 200 })
        #expect(Set(pages.compactMap { $0["bytes"] as? Int }).count == 1)
        #expect(!lines.joined().contains("write-token"), "tokens are never logged")
    }
}
