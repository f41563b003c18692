import Foundation
import XCTest

@testable import FeedLayoutClient

/// A service made of fixture pages, answering as `feedlayout serve` does, and counting what it is asked.
final class FixtureService: @unchecked Sendable {
    let id = "0123456789abcdef0123456789abcdef"
    let base = URL(string: "http://service.invalid:8080")!
    private let lock = NSLock()
    private var layouts: [[Data]] = []
    private var widths: [(Double, Int)] = []
    private var requested: [String] = []
    /// Answers to give before the real one, by path (a problem's status and body, say).
    private var scripted: [String: [(Int, String)]] = [:]
    /// While set, requests wait until cancelled.
    private var hang = false
    private(set) var cancelledRequests = 0

    init(_ fixtureLayouts: [String]) throws {
        for name in fixtureLayouts {
            let files = try Fixtures.pageFiles(name)
            layouts.append(try files.map { try Data(contentsOf: $0) })
            let page = try Page(json: layouts.last![0])
            widths.append((page.layout.width, page.layout.columns ?? 1))
        }
    }

    /// NSLock's own withLock needs macOS 14; the package's tests run from macOS 12.
    private func locked<T>(_ body: () throws -> T) rethrows -> T {
        lock.lock()
        defer { lock.unlock() }
        return try body()
    }

    var requests: [String] { locked { requested } }
    func script(_ path: String, _ answers: [(Int, String)]) { locked { scripted[path] = answers } }
    func setHanging(_ value: Bool) { locked { hang = value } }

    var transport: Transport {
        Transport { [self] url, _ in try await answer(url) }
    }

    private func answer(_ url: URL) async throws -> (status: Int, body: Data) {
        let components = URLComponents(url: url, resolvingAgainstBaseURL: false)!
        let query = Dictionary(uniqueKeysWithValues: (components.queryItems ?? []).map { ($0.name, $0.value ?? "") })
        let path = components.path
        let (hanging, scriptedAnswer): (Bool, (Int, String)?) = locked {
            requested.append(path + (query["cursor"].map { "?cursor=" + $0 } ?? "")
                + (query["layout"].map { $0.count < 32 ? "?layout=" + $0 : "" } ?? ""))
            let next = scripted[path]?.first
            if next != nil { scripted[path]!.removeFirst() }
            return (hang, next)
        }
        if hanging {
            do {
                while true { try await Task.sleep(nanoseconds: 1_000_000) }
            } catch {
                locked { cancelledRequests += 1 }
                throw error
            }
        }
        if let scriptedAnswer { return (scriptedAnswer.0, Data(scriptedAnswer.1.utf8)) }
        if path == "/v1/layouts/\(id)" {
            let summaries = widths.enumerated().map { index, width in
                #"{"index":\#(index),"width":\#(width.0),"columns":\#(width.1),"pages":\#(layouts[index].count),"contentHeight":100}"#
            }
            let body = #"{"id":"\#(id)","status":"done","items":52,"pages":\#(layouts.map(\.count).reduce(0, +)),"warnings":{},"layouts":[\#(summaries.joined(separator: ","))],"links":{"self":"/v1/layouts/\#(id)","pages":"/v1/layouts/\#(id)/pages/0"}}"#
            return (200, Data(body.utf8))
        }
        if path.hasPrefix("/v1/layouts/\(id)/pages/"), let number = Int(path.split(separator: "/").last!) {
            let layout = Int(query["layout"] ?? "0")!
            guard number < layouts[layout].count else { return notFound() }
            return (200, layouts[layout][number])
        }
        if path == "/v1/pages", let cursor = query["cursor"] {
            for pages in layouts {
                for (number, data) in pages.enumerated() where try Page(json: data).cursor == cursor {
                    return number + 1 < pages.count ? (200, pages[number + 1]) : notFound()
                }
            }
        }
        return notFound()
    }

    private func notFound() -> (Int, Data) {
        (404, Data(#"{"type":"urn:feedlayout:problem:not-found","title":"Not found","status":404,"detail":"no such page"}"#.utf8))
    }
}

final class LayoutLoaderTests: XCTestCase {
    func loader(_ service: FixtureService, breakpoint: Int = 0, distance: Double = 500) -> LayoutLoader {
        LayoutLoader(
            service: service.base, layoutID: service.id, breakpoint: breakpoint, prefetchDistance: distance, wait: 10,
            headers: [:], transport: service.transport)
    }

    func testPagesComeInOrderOnceEachByIndexThenByCursor() async throws {
        let service = try FixtureService(["waterfall/375"])
        let pages = try Fixtures.pages("waterfall/375")
        let loader = loader(service)
        // Several callers at once share each request.
        async let first = loader.loadNextPage()
        async let again = loader.page(0)
        let (a, b) = try await (first, again)
        XCTAssertEqual(a, pages[0])
        XCTAssertEqual(b, pages[0])
        while try await loader.loadNextPage() != nil {}
        let isComplete = await loader.isComplete
        XCTAssertTrue(isComplete)
        XCTAssertEqual(
            service.requests,
            ["/v1/layouts/\(service.id)/pages/0?layout=0", "/v1/pages?cursor=\(pages[0].cursor!)",
             "/v1/pages?cursor=\(pages[1].cursor!)"])
        let all = await loader.items(in: Rect(x: 0, y: 0, width: 375, height: 1e9))
        XCTAssertEqual(all, pages.flatMap(\.items))
        let snap = await loader.snap(pages[1].items[0].frame.y + 1, direction: .backward)
        XCTAssertEqual(snap, try PinIndex(pages: pages).snap(pages[1].items[0].frame.y + 1, direction: .backward))
        let requestCount = await loader.requestCount
        XCTAssertEqual(requestCount, 3)
    }

    func testAPageFetchedAheadByIndexJoinsInItsTurnWithoutAnotherRequest() async throws {
        let service = try FixtureService(["waterfall/1280"])
        let loader = loader(service)
        _ = try await loader.page(2)
        var loaded = await loader.loadedPageCount
        XCTAssertEqual(loaded, 0)
        try await loader.loadNextPage()
        try await loader.loadNextPage()
        loaded = await loader.loadedPageCount
        XCTAssertEqual(loaded, 3, "page 2, fetched before, joins once page 1 is in")
        let isComplete = await loader.isComplete
        XCTAssertTrue(isComplete)
        XCTAssertEqual(service.requests.count, 3)
        XCTAssertEqual(service.requests.filter { $0.contains("pages/2") }.count, 1)
    }

    func testShowingARectanglePrefetchesUntilTheDistanceIsCovered() async throws {
        let service = try FixtureService(["waterfall/375"])
        let pages = try Fixtures.pages("waterfall/375")
        let loader = loader(service, distance: 300)
        // The first screen: page 0 reaches far enough below it.
        await loader.show(Rect(x: 0, y: 0, width: 375, height: 600))
        await loader.settle()
        var loaded = await loader.loadedPageCount
        XCTAssertEqual(loaded, 1)
        let extent = await loader.loadedExtent
        XCTAssertEqual(extent, pages[0].columnHeights.min())
        // Scrolled to within the distance of the loaded content's end: the next page comes.
        await loader.show(Rect(x: 0, y: extent - 300 - 600 + 1, width: 375, height: 600))
        await loader.settle()
        loaded = await loader.loadedPageCount
        XCTAssertEqual(loaded, 2)
        // Far down: every page, each once.
        await loader.show(Rect(x: 0, y: 100_000, width: 375, height: 600))
        await loader.show(Rect(x: 0, y: 100_100, width: 375, height: 600))
        await loader.settle()
        loaded = await loader.loadedPageCount
        XCTAssertEqual(loaded, 3)
        XCTAssertEqual(Set(service.requests).count, 3)
        XCTAssertEqual(service.requests.count, 3)
        let error = await loader.prefetchError
        XCTAssertNil(error)
    }

    func testCancellingStopsTheRequestInFlight() async throws {
        let service = try FixtureService(["waterfall/375"])
        let loader = loader(service)
        service.setHanging(true)
        let waiting = Task { try await loader.loadNextPage() }
        while service.requests.isEmpty { await Task.yield() }
        waiting.cancel()
        do {
            _ = try await waiting.value
            XCTFail("a cancelled load returned")
        } catch {
            XCTAssertTrue(error is CancellationError, "\(error)")
        }
        XCTAssertEqual(service.cancelledRequests, 1)
        // The loader's own cancel() stops prefetching.
        await loader.show(Rect(x: 0, y: 0, width: 375, height: 600))
        while service.requests.count < 2 { await Task.yield() }
        await loader.cancel()
        await loader.settle()
        while service.cancelledRequests < 2 { await Task.yield() }
        let loaded = await loader.loadedPageCount
        XCTAssertEqual(loaded, 0)
        // And loading starts again afterwards.
        service.setHanging(false)
        try await loader.loadNextPage()
        let after = await loader.loadedPageCount
        XCTAssertEqual(after, 1)
    }

    func testAPageNotReadyIsAskedForAgainAndOtherProblemsAreErrors() async throws {
        let service = try FixtureService(["waterfall/375"])
        let notReady = #"{"type":"urn:feedlayout:problem:page-not-ready","title":"Not ready","status":404,"detail":"page 0 is not made yet","layoutStatus":"running"}"#
        service.script("/v1/layouts/\(service.id)/pages/0", [(404, notReady)])
        let loader = loader(service)
        try await loader.loadNextPage()
        XCTAssertEqual(service.requests.count, 2)

        let unauthorized = #"{"type":"urn:feedlayout:problem:unauthorized","title":"Unauthorized","status":401,"detail":"give a key"}"#
        let other = try FixtureService(["waterfall/375"])
        other.script("/v1/layouts/\(other.id)/pages/0", [(401, unauthorized)])
        do {
            try await self.loader(other).loadNextPage()
            XCTFail("a 401 loaded a page")
        } catch let ServiceError.problem(url, problem) {
            XCTAssertEqual(problem.type, "urn:feedlayout:problem:unauthorized")
            XCTAssertEqual(url.path, "/v1/layouts/\(other.id)/pages/0")
        }
        let broken = try FixtureService(["waterfall/375"])
        broken.script("/v1/layouts/\(broken.id)/pages/0", [(502, "<html>Bad gateway</html>")])
        do {
            try await self.loader(broken).loadNextPage()
            XCTFail("a 502 loaded a page")
        } catch let ServiceError.status(_, status, body) {
            XCTAssertEqual(status, 502)
            XCTAssertEqual(body, "<html>Bad gateway</html>")
        }
        let newer = try FixtureService(["waterfall/375"])
        newer.script("/v1/layouts/\(newer.id)/pages/0", [(200, #"{"schema":"feedlayout.page/2"}"#)])
        do {
            try await self.loader(newer).loadNextPage()
            XCTFail("a page/2 loaded")
        } catch let error as UnsupportedPageSchema {
            XCTAssertEqual(error.found, "feedlayout.page/2")
        }
    }

    func testTheBreakpointForAWidthIsChosenFromTheLayout() async throws {
        let service = try FixtureService(["waterfall/375", "waterfall/1280"])
        for (width, expected) in [(320.0, 0), (390, 0), (1279, 0), (1280, 1), (2560, 1)] {
            let loader = try await LayoutLoader(
                service: service.base, layoutID: service.id, width: width, prefetchDistance: 100, wait: 0, headers: [:],
                transport: service.transport)
            XCTAssertEqual(loader.breakpoint, expected, "width \(width)")
            let status = await loader.status
            XCTAssertEqual(status?.layouts.count, 2)
            try await loader.loadNextPage()
            let page = try await loader.page(0)
            XCTAssertEqual(page.layout.width, expected == 0 ? 375 : 1280)
        }
    }
}
