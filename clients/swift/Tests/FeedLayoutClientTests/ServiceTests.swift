import Foundation
import XCTest

@testable import FeedLayoutClient

/// The client against a running `feedlayout serve` (FEEDLAYOUT_BINARY; skipped without it): the sample feed at three
/// breakpoints and in the other kinds of layout, and, when FEEDLAYOUT_PIPELINE_FEED names the benchmarks' pipeline
/// feed folder (`.bench/pipeline-N`: feed.xml and photos/), that feed.
final class ServiceTests: XCTestCase {
    /// The service of the sample feed's tests, started by the first of them and stopped when the class ends.
    static let sampleService = SharedService()

    override class func tearDown() {
        sampleService.stop()
        super.tearDown()
    }

    func sample() throws -> ServiceHarness {
        try Self.sampleService.get { try ServiceHarness(imageRoot: ServiceHarness.sampleFolder) }
    }

    /// Every page of the sample feed at 375:2, 768:3 and 1280:5 decodes and encodes to the same JSON values, and
    /// 1,000 rectangles and 1,000 snap offsets (spread over the three widths) get the service's answers.
    func testSampleFeedAtThreeBreakpoints() async throws {
        let service = try sample()
        let layout = try await service.layOut(
            feedAt: ServiceHarness.sampleFeed,
            options: ["breakpoints": "375:2,768:3,1280:5", "pageSize": 10, "placeholders": true])
        XCTAssertEqual(layout.layouts.map(\.width), [375, 768, 1280])
        for breakpoint in 0..<3 {
            let index = try await ServiceComparison.pages(service, layout, breakpoint: breakpoint)
            XCTAssertEqual(index.count, 52)
            XCTAssertEqual(index.contentHeight, layout.layouts[breakpoint].contentHeight)
            try await ServiceComparison.compare(
                service, layout, breakpoint: breakpoint, index: index, rectangles: breakpoint == 2 ? 334 : 333,
                snaps: breakpoint == 2 ? 334 : 333, seed: UInt64(100 + breakpoint))
        }
    }

    /// The other kinds of layout: flow rows, the horizontal axis, and sections (200 rectangles and snaps each).
    func testSampleFeedInFlowHorizontalAndSectionedLayouts() async throws {
        let service = try sample()
        let layouts: [(String, String, [String: Any])] = [
            ("flow", ServiceHarness.sampleFeed, ["mode": "flow", "rowPhotoHeight": 120, "width": 1024, "pageSize": 10]),
            ("horizontal", ServiceHarness.sampleFeed,
             ["axis": "horizontal", "height": 900, "columns": 3, "maxPhotoWidth": 400, "pageSize": 10]),
            ("sections", try service.sectionedSampleFeed(),
             ["width": 768, "columns": 3, "sectionHeaderHeight": 40, "sectionFooterHeight": 24, "sectionInset": "8",
              "pageSize": 10]),
        ]
        for (seed, (name, feed, options)) in layouts.enumerated() {
            let layout = try await service.layOut(feedAt: feed, options: options)
            let index = try await ServiceComparison.pages(service, layout, breakpoint: 0)
            XCTAssertEqual(index.count, 52, name)
            XCTAssertEqual(index.isIndexedByColumn, name != "flow", name)
            try await ServiceComparison.compare(
                service, layout, breakpoint: 0, index: index, rectangles: 200, snaps: 200, seed: UInt64(200 + seed))
        }
    }

    /// The loader, scrolled from top to bottom a screen at a time, asks for each page exactly once: the service
    /// answers as many page requests as there are pages, and the loader holds every page.
    func testTheLoaderFetchesEachPageOnce() async throws {
        let service = try sample()
        let layout = try await service.layOut(
            feedAt: ServiceHarness.sampleFeed, options: ["breakpoints": "375:2,1280:5", "pageSize": 5])
        try await scrollThrough(service, layout, width: 390, screen: 844)
    }

    /// The README's example, compiled into this test target (ReadmeExample.swift), runs against the service and
    /// finds the service's pins for the first screen.
    func testTheReadmeExampleRuns() async throws {
        let service = try sample()
        let layout = try await service.layOut(
            feedAt: ServiceHarness.sampleFeed, options: ["breakpoints": "375:2,768:3,1280:5"])
        let pins = try await firstScreen(service: service.base, layoutID: layout.id)
        let expected = try await service.get(
            ItemsInRect.self, "/v1/layouts/\(layout.id)/items?x=0&y=0&width=390&height=844&layout=0")
        XCTAssertFalse(pins.isEmpty)
        XCTAssertEqual(pins, expected.items)
    }

    /// The benchmarks' pipeline feed (FEEDLAYOUT_PIPELINE_FEED): every page decodes and encodes to the same JSON,
    /// 1,000 rectangles and 1,000 snap offsets get the service's answers, and the loader fetches each page once.
    func testPipelineFeed() async throws {
        _ = try ServiceHarness.binaryOrSkip()
        guard let folder = ProcessInfo.processInfo.environment["FEEDLAYOUT_PIPELINE_FEED"], !folder.isEmpty else {
            throw XCTSkip(
                "FEEDLAYOUT_PIPELINE_FEED is not set: it names a folder of Benchmarks/inputs/make-pipeline-feed.py "
                    + "(feed.xml and photos/); scripts/test makes .bench/pipeline-20000")
        }
        let service = try ServiceHarness(imageRoot: folder)
        defer { service.stop() }
        let started = Date()
        let layout = try await service.layOut(
            feedAt: (folder as NSString).appendingPathComponent("feed.xml"), options: ["width": 1280, "pageSize": 50])
        print("pipeline feed: \(layout.items) pins, \(layout.pages) pages, laid out in \(Int(Date().timeIntervalSince(started))) s")
        var phase = Date()
        func took(_ what: String) {
            print("pipeline feed: \(what) in \(String(format: "%.1f", Date().timeIntervalSince(phase))) s")
            phase = Date()
        }
        let index = try await ServiceComparison.pages(service, layout, breakpoint: 0)
        XCTAssertEqual(index.count, layout.items)
        took("every page fetched, decoded, encoded again and compared, and indexed")
        try await ServiceComparison.compare(
            service, layout, breakpoint: 0, index: index, rectangles: 1000, snaps: 1000, seed: 300)
        took("1,000 rectangles and 1,000 snap offsets compared with the service")
        try await scrollThrough(service, layout, width: 1280, screen: 900)
        took("scrolled through with the loader")
    }

    /// Scrolls a loader over the layout's breakpoint for `width`, a screen at a time, and checks that the service
    /// answered exactly one page request per page.
    func scrollThrough(_ service: ServiceHarness, _ layout: LayoutStatus, width: Double, screen: Double) async throws {
        let before = try await service.pageRequestCount()
        let loader = try await LayoutLoader(
            service: service.base, layoutID: layout.id, width: width, prefetchDistance: screen * 2)
        let breakpoint = loader.breakpoint
        XCTAssertEqual(breakpoint, Breakpoints.choose(layout.layouts, forWidth: width)!.index)
        let summary = layout.layouts[breakpoint]
        var top = 0.0
        while top < summary.contentHeight {
            await loader.show(Rect(x: 0, y: top, width: width, height: screen))
            // A visible rectangle jumps around too: back up a screen.
            let last = Rect(x: 0, y: max(0, top - screen), width: width, height: screen)
            await loader.show(last)
            await loader.settle()
            let error = await loader.prefetchError
            XCTAssertNil(error)
            let extent = await loader.loadedExtent
            let complete = await loader.isComplete
            XCTAssertTrue(complete || extent >= last.maxY + screen * 2, "loaded to \(extent) for \(last)")
            top += screen
        }
        await loader.show(Rect(x: 0, y: summary.contentHeight + 10_000, width: width, height: screen))
        await loader.settle()
        let isComplete = await loader.isComplete
        let loaded = await loader.loadedPageCount
        let requests = await loader.requestCount
        XCTAssertTrue(isComplete)
        XCTAssertEqual(loaded, summary.pages)
        // The layout's status (one request) and one per page.
        XCTAssertEqual(requests, 1 + summary.pages)
        let after = try await service.pageRequestCount()
        XCTAssertEqual(after - before, summary.pages, "the service answered \(after - before) page requests for \(summary.pages) pages")
        let all = await loader.items(in: Rect(x: -1, y: -1, width: width + 2, height: summary.contentHeight + 2))
        XCTAssertEqual(all.count, layout.items)
    }
}
