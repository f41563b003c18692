import AsyncHTTPClient
import FeedLayout
import FeedLayoutTestSupport
import Foundation
import Logging
import NIOCore
import NIOHTTP1
import Synchronization

import LayoutStore

@testable import LayoutService

/// A `feedlayout serve` in this process, on a free loopback port with a store of its own, and a client whose
/// every exchange is recorded for the OpenAPI check (`scripts/check-openapi responses`).
final class ServiceHarness: Sendable {
    let port: Int
    let storePath: String
    let settings: ServiceSettings
    /// The service itself, for tests that look at its parts (its upload budget, say).
    let server: LayoutServer
    private let task: Task<Void, any Error>
    let client: HTTPClient
    private let exchanges = Mutex<[String]>([])
    /// The service's own temporary folder (its store, unless the test named one), removed by ``stop()``.
    private let folder: URL

    struct Reply: Sendable {
        var status: Int
        var headers: HTTPHeaders
        /// The body as sent (gzip stays gzip).
        var raw: [UInt8]
        /// The body, un-gzipped when it came gzipped.
        var body: [UInt8]
        var text: String { String(decoding: body, as: UTF8.self) }
        var json: [String: Any] {
            (try? JSONSerialization.jsonObject(with: Data(body)) as? [String: Any]) ?? [:]
        }
    }

    private init(
        port: Int, storePath: String, folder: URL, settings: ServiceSettings, server: LayoutServer,
        task: Task<Void, any Error>
    ) {
        self.server = server
        self.port = port
        self.folder = folder
        self.storePath = storePath
        self.settings = settings
        self.task = task
        var configuration = HTTPClient.Configuration(
            timeout: .init(connect: .seconds(5), read: .seconds(120)), decompression: .disabled)
        // A kept-alive connection goes before the service's request deadline closes it: else a request sent just
        // as the service closes an idle connection fails (tests that set a deadline of a second met this).
        configuration.connectionPool.idleTimeout = .nanoseconds(
            min(TimeAmount.seconds(60).nanoseconds, TimeAmount(settings.requestTimeout).nanoseconds / 2))
        client = HTTPClient(eventLoopGroupProvider: .singleton, configuration: configuration)
    }

    /// Starts a service; `configure` adjusts its settings (the store path and port are the harness's).
    static func start(
        storePath: String? = nil, _ configure: (inout ServiceSettings) -> Void = { _ in }
    ) async throws -> ServiceHarness {
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("feedlayout-service-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        TemporaryFolders.removeAtExit(folder)
        var settings = ServiceSettings(
            host: "127.0.0.1", port: 0, storePath: storePath ?? folder.appendingPathComponent("store.sqlite").path,
            allowPrivateNetwork: true)
        configure(&settings)
        settings.port = 0
        var logger = Logger(label: "feedlayout.serve.test")
        logger.logLevel = .warning
        let server = try await LayoutServer(settings: settings, logger: logger)
        let (ports, continuation) = AsyncStream<Int>.makeStream()
        let task = Task {
            try await server.run { port in continuation.yield(port) }
        }
        var iterator = ports.makeAsyncIterator()
        guard let port = await iterator.next() else { throw TestInputError(message: "the service did not start") }
        return ServiceHarness(
            port: port, storePath: settings.storePath, folder: folder, settings: settings, server: server, task: task)
    }

    func url(_ path: String) -> String { "http://127.0.0.1:\(port)\(path)" }

    /// Sends a request and records the exchange.
    func request(
        _ method: HTTPMethod = .GET, _ path: String, body: [UInt8]? = nil, headers: [(String, String)] = [],
        record: Bool = true
    ) async throws -> Reply {
        var request = HTTPClientRequest(url: url(path))
        request.method = method
        for (name, value) in headers { request.headers.add(name: name, value: value) }
        if let body {
            request.headers.add(name: "Content-Type", value: "application/json")
            request.body = .bytes(ByteBuffer(bytes: body))
        }
        let response = try await client.execute(request, timeout: .seconds(120))
        let raw = [UInt8](buffer: try await response.body.collect(upTo: 1 << 30))
        let gzipped = response.headers.first(name: "Content-Encoding") == "gzip"
        let reply = Reply(
            status: Int(response.status.code), headers: response.headers, raw: raw,
            body: gzipped ? (Gzip.decompress(raw) ?? []) : raw)
        if record { self.record(method: method.rawValue, path: path, reply: reply) }
        return reply
    }

    func post(_ json: Any) async throws -> Reply {
        try await request(.POST, "/v1/layouts", body: [UInt8](try JSONSerialization.data(withJSONObject: json)))
    }

    /// Polls a layout until it is no longer running.
    func waitUntilDone(_ id: String, timeout: Duration = .seconds(120), headers: [(String, String)] = []) async throws -> Reply {
        let deadline = ContinuousClock.now + timeout
        while true {
            let reply = try await request(.GET, "/v1/layouts/\(id)", headers: headers, record: false)
            if reply.json["status"] as? String != "running" || ContinuousClock.now > deadline { return reply }
            try await Task.sleep(for: .milliseconds(50))
        }
    }

    private func record(method: String, path: String, reply: Reply) {
        var headers: [String: String] = [:]
        for header in reply.headers { headers[header.name.lowercased()] = header.value }
        var entry: [String: Any] = ["method": method, "path": path, "status": reply.status, "headers": headers]
        if let json = try? JSONSerialization.jsonObject(with: Data(reply.body), options: [.fragmentsAllowed]) {
            entry["body"] = json
        } else {
            entry["body"] = NSNull()
            entry["bodyText"] = reply.text
        }
        if let line = try? JSONSerialization.data(withJSONObject: entry) {
            exchanges.withLock { $0.append(String(decoding: line, as: UTF8.self)) }
        }
    }

    /// The recorded exchanges as JSON Lines.
    var recordedExchanges: String { exchanges.withLock { $0.joined(separator: "\n") + "\n" } }

    func stop() async {
        task.cancel()
        _ = await task.result
        try? await client.shutdown()
        try? FileManager.default.removeItem(at: folder)
    }
}

/// Feeds for the service tests: synthetic RSS whose photos are absolute URLs on a test HTTP server.
enum ServiceFeeds {
    static let repositoryRoot = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
        .deletingLastPathComponent()

    /// Serves two of the sample feed's photos at /photos/ on `server`.
    static func servePhotos(_ server: TestHTTPServer) throws {
        let photos = repositoryRoot.appendingPathComponent("sample-feed/photos")
        for name in ["chelsea-the-cat.jpg", "aitzgorri-autumn.jpg"] {
            let bytes = try Data(contentsOf: photos.appendingPathComponent(name))
            server.serve("/photos/" + name, .init(body: [UInt8](bytes), contentType: "image/jpeg"))
        }
    }

    /// An RSS feed of `count` items; photos at `photoBase` (absolute), captions of varied lengths.
    static func rss(items count: Int, photoBase: String, seed: Int = 0) -> String {
        var feed = """
            <?xml version="1.0"?><rss version="2.0" xmlns:media="http://search.yahoo.com/mrss/"><channel><title>t</title>

            """
        let words = ["espresso", "harbour", "lantern", "meadow", "granite", "saffron", "willow", "comet"]
        for index in 0..<count {
            let photo = (index + seed) % 3 == 0 ? "aitzgorri-autumn.jpg" : "chelsea-the-cat.jpg"
            let caption = (0..<((index * 7 + seed) % 23 + 1)).map { words[($0 + index + seed) % words.count] }
                .joined(separator: " ")
            feed += "<item><guid>s\(seed)-item-\(index)</guid><title>Pin \(index) \(words[index % words.count])</title>"
            feed += "<link>https://example.org/pins/\(index)</link><description>\(caption)</description>"
            feed += "<media:content url=\"\(photoBase)\(photo)\" medium=\"image\"/></item>\n"
        }
        return feed + "</channel></rss>\n"
    }
}

/// Folders the harness made, removed when the test process exits: tests stop their services from a `defer`d
/// task, which the process may end before it runs.
enum TemporaryFolders {
    private static let folders = Mutex<[URL]?>(nil)

    static func removeAtExit(_ folder: URL) {
        let first = folders.withLock { folders in
            defer { folders = (folders ?? []) + [folder] }
            return folders == nil
        }
        if first {
            atexit {
                for folder in TemporaryFolders.folders.withLock({ $0 ?? [] }) {
                    try? FileManager.default.removeItem(at: folder)
                }
            }
        }
    }
}
