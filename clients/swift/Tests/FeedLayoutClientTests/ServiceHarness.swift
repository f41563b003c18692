import Foundation
import XCTest

@testable import FeedLayoutClient

#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// A running `feedlayout serve` of the root package's binary, named by `FEEDLAYOUT_BINARY` (scripts/test sets it to
/// the root's debug build). Tests that need one skip, saying so, when the variable is not set, so that `swift test`
/// alone in clients/swift still runs every test that needs no service.
///
/// The service listens on a free loopback port, keeps its store in a temporary folder, serves the sample feed's
/// photos (`--image-root`), and is stopped (SIGTERM, then waited for) when the test class ends.
final class ServiceHarness: @unchecked Sendable {
    let binary: String
    let folder: URL
    let process: Process
    let base: URL
    let imageRoot: String
    let transport = Transport.urlSession(URLSession(configuration: .ephemeral))

    /// The repository's root: clients/swift/Tests/FeedLayoutClientTests/ is four folders below it.
    static let repositoryRoot = URL(fileURLWithPath: #filePath)
        .deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
        .deletingLastPathComponent().deletingLastPathComponent()

    static func binaryOrSkip() throws -> String {
        guard let binary = ProcessInfo.processInfo.environment["FEEDLAYOUT_BINARY"], !binary.isEmpty else {
            throw XCTSkip(
                "FEEDLAYOUT_BINARY is not set: this test needs a running `feedlayout serve` (scripts/test sets it to "
                    + "the root package's debug build, .build/debug/feedlayout)")
        }
        guard FileManager.default.isExecutableFile(atPath: binary) else {
            throw HarnessError("FEEDLAYOUT_BINARY=\(binary) is not an executable file")
        }
        return binary
    }

    /// Starts a service whose posted feeds may name photos under `imageRoot` by relative path.
    init(imageRoot: String) throws {
        binary = try Self.binaryOrSkip()
        self.imageRoot = imageRoot
        folder = FileManager.default.temporaryDirectory.appendingPathComponent("feedlayout-client-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        let log = folder.appendingPathComponent("service.log")
        _ = FileManager.default.createFile(atPath: log.path, contents: nil)
        process = Process()
        process.executableURL = URL(fileURLWithPath: binary)
        process.arguments = [
            "serve", "--host", "127.0.0.1", "--port", "0", "--store", folder.appendingPathComponent("store.sqlite").path,
            "--image-root", imageRoot, "--max-feed-bytes", String(1 << 30), "--creations-per-minute", "0",
            "--access-log", folder.appendingPathComponent("access.log").path,
        ]
        let handle = try FileHandle(forWritingTo: log)
        process.standardOutput = handle
        process.standardError = handle
        try process.run()
        // The service logs its address once it listens (`--port 0`: the port it was given).
        let start = Date()
        var address: String?
        while address == nil {
            let text = (try? String(contentsOf: log, encoding: .utf8)) ?? ""
            if let range = text.range(of: #"listening on 127\.0\.0\.1:[0-9]+"#, options: .regularExpression) {
                address = String(text[range].dropFirst("listening on ".count))
            } else if !process.isRunning {
                throw HarnessError("\(binary) serve stopped (status \(process.terminationStatus)): \(text.suffix(2000))")
            } else if Date().timeIntervalSince(start) > 120 {
                process.terminate()
                throw HarnessError("\(binary) serve did not say where it listens within 120 s: \(text.suffix(2000))")
            } else {
                Thread.sleep(forTimeInterval: 0.05)
            }
        }
        base = URL(string: "http://\(address!)")!
    }

    func stop() {
        if process.isRunning {
            process.terminate()
            process.waitUntilExit()
        }
        try? FileManager.default.removeItem(at: folder)
    }

    // MARK: Requests

    func get(_ pathAndQuery: String) async throws -> Data {
        let url = URL(string: base.absoluteString + pathAndQuery)!
        let answer = try await transport.get(url, [:])
        guard answer.status == 200 else {
            throw HarnessError("GET \(pathAndQuery): \(answer.status) \(String(decoding: answer.body.prefix(500), as: UTF8.self))")
        }
        return answer.body
    }

    func get<Value: Decodable>(_ type: Value.Type, _ pathAndQuery: String) async throws -> Value {
        try JSONDecoder().decode(Value.self, from: try await get(pathAndQuery))
    }

    /// Posts a feed's text with options (the service's camelCase JSON) and waits until the layout is done.
    func layOut(feedAt path: String, options: [String: Any]) async throws -> LayoutStatus {
        let text = try String(contentsOfFile: path, encoding: .utf8)
        let body = try JSONSerialization.data(withJSONObject: ["feedText": text, "options": options])
        var request = URLRequest(url: base.appendingPathComponent("v1/layouts"))
        request.httpMethod = "POST"
        request.setValue("application/json", forHTTPHeaderField: "Content-Type")
        request.httpBody = body
        let (data, status) = try await send(request)
        guard status == 202 || status == 200 else {
            throw HarnessError("POST /v1/layouts (\(path)): \(status) \(String(decoding: data.prefix(500), as: UTF8.self))")
        }
        var layout = try JSONDecoder().decode(LayoutStatus.self, from: data)
        // Polled until done; a bound only so that a stuck layout fails instead of hanging the suite.
        let start = Date()
        while layout.status == .running {
            guard Date().timeIntervalSince(start) < 1800 else { throw HarnessError("layout \(layout.id) still running after 30 min") }
            try await Task.sleep(nanoseconds: 200_000_000)
            layout = try await get(LayoutStatus.self, "/v1/layouts/\(layout.id)")
        }
        guard layout.status == .done else { throw HarnessError("layout of \(path) \(layout.status): \(String(describing: layout.error))") }
        return layout
    }

    private func send(_ request: URLRequest) async throws -> (Data, Int) {
        try await withCheckedThrowingContinuation { continuation in
            URLSession.shared.dataTask(with: request) { data, response, error in
                if let error { return continuation.resume(throwing: error) }
                continuation.resume(returning: (data ?? Data(), (response as? HTTPURLResponse)?.statusCode ?? 0))
            }.resume()
        }
    }

    /// The page requests the service has answered so far (`feedlayout_http_requests_total` of the two page routes,
    /// every status), from `/metrics`.
    func pageRequestCount() async throws -> Int {
        let text = String(decoding: try await get("/metrics"), as: UTF8.self)
        var total = 0
        for line in text.split(separator: "\n") where line.hasPrefix("feedlayout_http_requests_total{") {
            guard line.contains(#"route="/v1/layouts/{id}/pages/{index}""#) || line.contains(#"route="/v1/pages""#),
                let value = line.split(separator: " ").last.flatMap({ Double($0) })
            else { continue }
            total += Int(value)
        }
        return total
    }

    /// The sample feed with `<fl:section>` on every item (four seasons of 13 items), written into the service's
    /// folder, beside a link to the sample feed's photos.
    func sectionedSampleFeed() throws -> String {
        var text = try String(contentsOfFile: Self.sampleFeed, encoding: .utf8)
        text = text.replacingOccurrences(of: #"<rss version="2.0""#, with: #"<rss version="2.0" xmlns:fl="urn:feedlayout:1""#)
        var parts = text.components(separatedBy: "<item>")
        for index in 1..<parts.count {
            parts[index] = "<fl:section>\(["Spring", "Summer", "Autumn", "Winter"][min((index - 1) / 13, 3)])</fl:section>"
                + parts[index]
        }
        let path = folder.appendingPathComponent("sectioned.xml").path
        try parts.joined(separator: "<item>").write(toFile: path, atomically: true, encoding: .utf8)
        return path
    }

    static let sampleFeed = repositoryRoot.appendingPathComponent("sample-feed/feed.xml").path
    static let sampleFolder = repositoryRoot.appendingPathComponent("sample-feed").path
}

/// A service that several tests share, started once.
final class SharedService: @unchecked Sendable {
    private let lock = NSLock()
    private var service: ServiceHarness?

    func get(_ start: () throws -> ServiceHarness) throws -> ServiceHarness {
        lock.lock()
        defer { lock.unlock() }
        if let service { return service }
        let started = try start()
        service = started
        return started
    }

    func stop() {
        lock.lock()
        defer { lock.unlock() }
        service?.stop()
        service = nil
    }
}

struct HarnessError: Error, CustomStringConvertible {
    var description: String
    init(_ description: String) { self.description = description }
}

/// Compares the client with a running service on one layout width: every page decodes and encodes to the same JSON
/// values, and random rectangles and snap offsets get the service's answers.
enum ServiceComparison {
    /// Every page of breakpoint `breakpoint`, fetched by index (a few at a time): their bytes, round-tripped, and
    /// the index of them.
    static func pages(_ service: ServiceHarness, _ layout: LayoutStatus, breakpoint: Int) async throws -> PinIndex {
        let count = layout.layouts[breakpoint].pages
        var pages: [Page] = []
        try await forEachConcurrently(Array(0..<count), width: 4) { number in
            let data = try await service.get("/v1/layouts/\(layout.id)/pages/\(number)?layout=\(breakpoint)")
            return try assertRoundTrip(data, "layout \(layout.id)/\(breakpoint) page \(number)", decodeAgain: count < 50)
        } check: { page in
            pages.append(page)
        }
        XCTAssertNil(pages.last?.cursor)
        return try PinIndex(pages: pages)
    }

    static func query(_ value: Double) -> String { String(describing: value) }

    /// `rectangles` random rectangles and `snaps` random offsets (each in a random direction), answered by the
    /// index and by the service; a few requests at a time.
    static func compare(
        _ service: ServiceHarness, _ layout: LayoutStatus, breakpoint: Int, index: PinIndex, rectangles: Int,
        snaps: Int, seed: UInt64
    ) async throws {
        var maker = QueryMaker(seed: seed, index: index)
        let rects = (0..<rectangles).map { _ in maker.rect() }
        var directionRandom = SeededGenerator(seed: seed ^ 0xD1CE)
        let offsets = (0..<snaps).map { _ in
            (maker.snapOffset(), SnapDirection.allCases.randomElement(using: &directionRandom)!)
        }
        let prefix = "/v1/layouts/\(layout.id)"
        var nonEmpty = 0
        try await forEachConcurrently(rects, width: 8) { rect in
            let answer = try await service.get(
                ItemsInRect.self,
                "\(prefix)/items?x=\(query(rect.x))&y=\(query(rect.y))&width=\(query(rect.width))"
                    + "&height=\(query(rect.height))&layout=\(breakpoint)")
            return (rect, answer.items)
        } check: { rect, items in
            let ours = index.items(in: rect)
            XCTAssertEqual(ours.map(\.index), items.map(\.index), "layout \(breakpoint), rectangle \(rect)")
            XCTAssertEqual(ours, items, "layout \(breakpoint), rectangle \(rect): the pins differ")
            if !items.isEmpty { nonEmpty += 1 }
        }
        XCTAssertGreaterThan(nonEmpty, rectangles / 4, "most random rectangles should hold pins")
        try await forEachConcurrently(offsets, width: 8) { (offset: Double, direction: SnapDirection) in
            let answer = try await service.get(
                SnapTarget.self, "\(prefix)/snap?offset=\(query(offset))&direction=\(direction.rawValue)&layout=\(breakpoint)")
            return (offset, direction, answer)
        } check: { offset, direction, answer in
            XCTAssertEqual(index.snap(offset, direction: direction), answer, "layout \(breakpoint), snap \(offset) \(direction)")
        }
    }

    /// Runs `work` over `elements`, `width` at a time, and `check` on each result in order.
    static func forEachConcurrently<Element: Sendable, Result: Sendable>(
        _ elements: [Element], width: Int, _ work: @escaping @Sendable (Element) async throws -> Result,
        check: (Result) -> Void
    ) async throws {
        var results = [Result?](repeating: nil, count: elements.count)
        try await withThrowingTaskGroup(of: (Int, Result).self) { group in
            var next = 0
            while next < min(width, elements.count) {
                let position = next
                group.addTask { (position, try await work(elements[position])) }
                next += 1
            }
            while let (position, result) = try await group.next() {
                results[position] = result
                if next < elements.count {
                    let position = next
                    group.addTask { (position, try await work(elements[position])) }
                    next += 1
                }
            }
        }
        for result in results { check(result!) }
    }
}
