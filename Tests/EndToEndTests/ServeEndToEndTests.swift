import FeedLayoutTestSupport
import Foundation
import NIOCore
import Synchronization
import Testing

/// `feedlayout serve` as a process: its pages are `feedlayout layout`'s byte for byte, a layout survives
/// `kill -9` and SIGTERM of the service, and a store held by another process is refused at start.
@Suite(.serialized, .timeLimit(.minutes(5)))
struct ServeEndToEndTests {
    /// A `feedlayout serve` child process and the port it listens on.
    // Unchecked: every member is a constant set at start or behind a mutex, and `Process` is safe to signal and wait
    // for from any task.
    final class ServeProcess: @unchecked Sendable {
        let process = Process()
        let port: Int
        /// The status ``signal(_:)`` found, once the process ended.
        private let ended = Mutex<Int32?>(nil)
        let logFile: URL

        /// - Parameters:
        ///   - cacheHome: XDG_CACHE_HOME for the instance (where a local probe cache would go).
        ///   - executable: The binary to run (a copy elsewhere, say), run in its own folder when it is not the build's.
        ///   - environment: Variables added to the test's environment.
        init(
            store: String, arguments extra: [String] = [], cacheHome: URL = CommandRunner.testCacheHome,
            executable: URL = CommandRunner.binary, environment added: [String: String] = [:]
        ) async throws {
            logFile = FileManager.default.temporaryDirectory.appendingPathComponent("feedlayout-serve-\(UUID()).log")
            _ = FileManager.default.createFile(atPath: logFile.path, contents: nil)
            process.executableURL = executable
            if executable != CommandRunner.binary {
                process.currentDirectoryURL = executable.deletingLastPathComponent()
            }
            process.arguments = ["serve", "--port", "0", "--store", store, "--allow-private-network"] + extra
            var environment = ProcessInfo.processInfo.environment.merging(added) { $1 }
            environment["XDG_CACHE_HOME"] = cacheHome.path
            process.environment = environment
            let logHandle = try FileHandle(forWritingTo: logFile)
            process.standardOutput = logHandle
            process.standardError = logHandle
            try process.run()
            try logHandle.close()
            // The port, from the line the service logs once it listens.
            let deadline = Date().addingTimeInterval(60)
            var found: Int?
            while found == nil, Date() < deadline, process.isRunning {
                let text = (try? String(contentsOf: logFile, encoding: .utf8)) ?? ""
                if let range = text.range(of: "http://127.0.0.1:") {
                    found = Int(text[range.upperBound...].prefix { $0.isNumber })
                } else {
                    try await Task.sleep(for: .milliseconds(50))
                }
            }
            guard let found else {
                process.terminate()
                let text = (try? String(contentsOf: logFile, encoding: .utf8)) ?? ""
                throw TestInputError(message: "serve did not start: \(text)")
            }
            port = found
        }

        func log() -> String { (try? String(contentsOf: logFile, encoding: .utf8)) ?? "" }

        func get(_ path: String) async throws -> (status: Int, body: Data) {
            try await Self.http("GET", "http://127.0.0.1:\(port)\(path)")
        }

        func post(_ json: [String: Any]) async throws -> (status: Int, body: Data) {
            try await Self.http(
                "POST", "http://127.0.0.1:\(port)/v1/layouts", body: try JSONSerialization.data(withJSONObject: json))
        }

        /// One request through curl (a real client, as a user would).
        static func http(_ method: String, _ url: String, body: Data? = nil) async throws -> (status: Int, body: Data) {
            let bodyFile = FileManager.default.temporaryDirectory.appendingPathComponent("feedlayout-body-\(UUID())")
            defer { try? FileManager.default.removeItem(at: bodyFile) }
            var arguments = ["-s", "-o", bodyFile.path, "-w", "%{http_code}", "-X", method, url]
            var stdin: Data?
            if let body {
                arguments += ["-H", "Content-Type: application/json", "--data-binary", "@-"]
                stdin = body
            }
            let output = try await CommandRunner.runTool(
                "/usr/bin/curl", arguments, stdin: stdin, timeout: 60)
            return (Int(output.stdoutText) ?? 0, (try? Data(contentsOf: bodyFile)) ?? Data())
        }

        func json(_ path: String) async throws -> [String: Any] {
            let body = try await get(path).body
            return (try JSONSerialization.jsonObject(with: body) as? [String: Any]) ?? [:]
        }

        func waitUntilDone(_ id: String, timeout: TimeInterval = 120) async throws -> [String: Any] {
            let deadline = Date().addingTimeInterval(timeout)
            while true {
                let status = try await json("/v1/layouts/\(id)")
                if status["status"] as? String != "running" || Date() > deadline { return status }
                try await Task.sleep(for: .milliseconds(100))
            }
        }

        /// Sends `signal` and waits for the process to end (``Process/waitForExit(timeout:)``, not `waitUntilExit()`,
        /// which spun for minutes here on a child that had ended): its exit status, or the signal that ended it.
        func signal(_ signal: Int32) -> Int32 {
            if let status = ended.withLock({ $0 }) { return status }
            kill(process.processIdentifier, signal)
            let status = process.waitForExit(timeout: 120) ?? -1
            ended.withLock { $0 = status }
            return status
        }
    }

    /// A feed of `count` pins on `server`, each photo its own URL answering after `delay` ms, so a layout takes a
    /// while and can be interrupted between its pages; with `entityTag`, each photo carries the tag it gives its
    /// path (so a probe of it can be cached and revalidated).
    static func serveSlowFeed(
        _ server: TestHTTPServer, items count: Int, delay: Int64, gate: ResponseGate? = nil, gatedItem: Int = -1,
        entityTag: ((String) -> String)? = nil
    ) throws -> String {
        let photos = CommandRunner.repositoryRoot.appendingPathComponent("sample-feed/photos")
        let cat = try [UInt8](Data(contentsOf: photos.appendingPathComponent("chelsea-the-cat.jpg")))
        let hills = try [UInt8](Data(contentsOf: photos.appendingPathComponent("aitzgorri-autumn.jpg")))
        var feed =
            #"<?xml version="1.0"?><rss version="2.0" xmlns:media="http://search.yahoo.com/mrss/"><channel><title>t</title>"#
        for index in 0..<count {
            let path = "/photos/\(index).jpg"
            server.serve(
                path,
                .init(
                    body: index % 3 == 0 ? hills : cat, contentType: "image/jpeg", entityTag: entityTag?(path),
                    headDelay: .milliseconds(delay), gate: index == gatedItem ? gate : nil))
            feed += "<item><guid>pin-\(index)</guid><title>Pin \(index)</title>"
            feed += "<description>caption \(index) " + String(repeating: "words ", count: index % 13) + "</description>"
            feed += "<media:content url=\"photos/\(index).jpg\" medium=\"image\"/></item>\n"
        }
        feed += "</channel></rss>\n"
        server.serve("/feed.xml", .init(body: Array(feed.utf8), contentType: "application/rss+xml"))
        return server.url("/feed.xml")
    }

    /// The pages `feedlayout layout` writes for a feed URL with these options, by file name.
    static func cliPages(_ url: String, options: [String]) async throws -> [Data] {
        let out = try CommandRunner.temporaryDirectory()
        let result = try await CommandRunner.run(
            ["layout", url, "--out", out.path, "--allow-private-network", "--no-cache", "--quiet"] + options)
        // 1: some photos failed (the sample feed has a missing and a corrupt one on purpose); pages are written.
        #expect(result.status == 0 || result.status == 1, "\(result.stderr)")
        let names = try FileManager.default.contentsOfDirectory(atPath: out.path).filter { $0.hasPrefix("page-") }
            .sorted()
        return try names.map { try Data(contentsOf: out.appendingPathComponent($0)) }
    }

    static func servicePages(_ service: ServeProcess, _ id: String, count: Int) async throws -> [Data] {
        var pages: [Data] = []
        for index in 0..<count {
            let page = try await service.get("/v1/layouts/\(id)/pages/\(index)")
            #expect(page.status == 200)
            pages.append(page.body)
        }
        return pages
    }

    /// Expects a layout's pages from the service to be `expected` (the CLI's) byte for byte, saying where they part.
    static func expectServedPages(
        _ service: ServeProcess, _ id: String, equal expected: [Data], sourceLocation: SourceLocation = #_sourceLocation
    ) async throws {
        let served = try await servicePages(service, id, count: expected.count)
        #expect(served == expected, "\(difference(served: served, expected: expected))", sourceLocation: sourceLocation)
    }

    /// Where served pages part from the CLI's: the first page that differs, and every item warning up to it on each
    /// side (a photo that failed on one side only, a timeout on a loaded machine, explains most differences).
    static func difference(served: [Data], expected: [Data]) -> String {
        guard let first = (0..<min(served.count, expected.count)).first(where: { served[$0] != expected[$0] }) else {
            return "\(served.count) pages served, \(expected.count) from the CLI"
        }
        func warnings(_ pages: [Data]) -> [String] {
            pages.prefix(first + 1).flatMap { page -> [String] in
                let object = (try? JSONSerialization.jsonObject(with: page)) as? [String: Any]
                return (object?["items"] as? [[String: Any]] ?? []).flatMap { item in
                    (item["warnings"] as? [[String: Any]] ?? []).map {
                        "item \(item["index"] ?? "?"): \($0["message"] ?? "?")"
                    }
                }
            }
        }
        return
            "page \(first) is the first that differs; warnings up to it, served: \(warnings(served)); CLI: \(warnings(expected))"
    }

    @Test func theServicesPagesAreTheCommandsPagesByteForByte() async throws {
        try await TestHTTPServer.with { server in
            try RemoteFeedEndToEndTests.serveSampleFeed(server)
            let store = try CommandRunner.temporaryDirectory().appendingPathComponent("store.sqlite").path
            let service = try await ServeProcess(store: store)
            defer { _ = service.signal(SIGTERM) }
            let posted = try await service.post([
                "feed": server.url("/feed"),
                "options": ["width": 800, "columns": 3, "pageSize": 12, "placeholders": true],
            ])
            #expect(posted.status == 202, "\(String(decoding: posted.body, as: UTF8.self))")
            let id = try #require(
                (try JSONSerialization.jsonObject(with: posted.body) as? [String: Any])?["id"] as? String)
            let done = try await service.waitUntilDone(id)
            #expect(done["status"] as? String == "done")
            let expected = try await Self.cliPages(
                server.url("/feed"),
                options: ["--width", "800", "--columns", "3", "--page-size", "12", "--placeholders"])
            #expect(expected.count == 5)
            try await Self.expectServedPages(service, id, equal: expected)
        }
    }

    @Test(arguments: [SIGKILL, SIGTERM])
    func aLayoutCutShortBySignalIsFinishedAtTheNextStartWithTheSamePages(signal: Int32) async throws {
        try await TestHTTPServer.with { server in
            // 600 photos, 30 pages; photo 300 is held back until the service has been stopped, so the stop always
            // comes mid-layout (a fixed delay would race a loaded machine).
            let gate = ResponseGate(holdingAt: .beforeHead)
            let feed = try Self.serveSlowFeed(server, items: 600, delay: 5, gate: gate, gatedItem: 300)
            let store = try CommandRunner.temporaryDirectory().appendingPathComponent("store.sqlite").path
            let options = ["pageSize": 20, "width": 600, "columns": 3]
            var service = try await ServeProcess(store: store, arguments: ["--max-concurrent-layouts", "1"])
            let posted = try await service.post(["feed": feed, "options": options])
            let id = try #require(
                (try JSONSerialization.jsonObject(with: posted.body) as? [String: Any])?["id"] as? String)
            // Stop it while it waits for the held photo, with the pages before it stored.
            _ = await gate.waitUntilHeld()
            let stoppedAt = try await service.json("/v1/layouts/\(id)")
            let status = service.signal(signal)
            gate.open()
            if signal == SIGTERM {
                #expect(status == 0, "SIGTERM is a graceful stop: exit 0\n\(service.log())")
            }
            #expect(stoppedAt["status"] as? String == "running", "the layout ended before the signal: \(stoppedAt)")
            #expect((stoppedAt["pages"] as? Int ?? 0) < 30)

            service = try await ServeProcess(store: store, arguments: ["--max-concurrent-layouts", "1"])
            defer { _ = service.signal(SIGTERM) }
            let done = try await service.waitUntilDone(id)
            #expect(done["status"] as? String == "done", "\(done)\n\(service.log())")
            #expect(done["items"] as? Int == 600, "items are counted once across the restart")
            let expected = try await Self.cliPages(
                feed, options: ["--page-size", "20", "--width", "600", "--columns", "3"])
            #expect(expected.count == 30)
            #expect(done["pages"] as? Int == 30)
            try await Self.expectServedPages(service, id, equal: expected)
            await #expect(try service.get("/v1/layouts/\(id)/pages/30").status == 404)
        }
    }

    @Test func aStoreHeldByAnotherProcessIsRefusedAtStart() async throws {
        let folder = try CommandRunner.temporaryDirectory()
        let store = folder.appendingPathComponent("store.sqlite").path
        let first = try await ServeProcess(store: store)
        defer { _ = first.signal(SIGTERM) }
        let second = try await CommandRunner.run(["serve", "--port", "0", "--store", store], timeout: 60)
        #expect(second.status == 1)
        #expect(
            second.stderr.contains(store) && second.stderr.contains("another process is using this store"),
            "\(second.stderr)")

        // A database another program holds an exclusive lock on (a sqlite3 shell in a transaction).
        let other = folder.appendingPathComponent("other.sqlite").path
        let holder = Process()
        holder.executableURL = URL(fileURLWithPath: "/usr/bin/env")
        holder.arguments = [
            "python3", "-c",
            "import sqlite3, sys, time; c = sqlite3.connect(sys.argv[1], isolation_level=None); "
                + "c.execute('BEGIN EXCLUSIVE'); c.execute('CREATE TABLE t (x)'); print('held', flush=True); time.sleep(30)",
            other,
        ]
        let ready = Pipe()
        holder.standardOutput = ready
        try holder.run()
        defer { holder.terminate() }
        _ = ready.fileHandleForReading.availableData
        let refused = try await CommandRunner.run(["serve", "--port", "0", "--store", other], timeout: 60)
        #expect(refused.status == 1)
        #expect(refused.stderr.contains(other) && refused.stderr.contains("locked"), "\(refused.stderr)")
    }
}
