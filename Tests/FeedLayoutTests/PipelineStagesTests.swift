import Foundation
import Testing
import TextMeasure

@testable import FeedLayout

/// The pipeline's stages run in their own tasks: these check that what comes out does not depend on how they
/// interleave, that errors and early stops travel back through the channels, and that the texts memo changes
/// nothing.
@Suite struct PipelineStagesTests {
    /// A feed of `count` items over a few repeated titles and captions (so the measurement memo is used), with
    /// declared image sizes whose files are missing (no network), long enough that many windows queue up between the stages.
    static func writeFeed(count: Int) throws -> String {
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("feedlayout-stages-\(UUID())")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        var xml = "<?xml version=\"1.0\"?>\n<rss version=\"2.0\" xmlns:media=\"http://search.yahoo.com/mrss/\">"
        xml += "<channel><title>stages</title>\n"
        let captions = [
            "Fog over the harbour at dawn",
            "A very long caption that wraps over several lines of the column and is cut",
            "雨の日の商店街", "",
        ]
        for index in 0..<count {
            xml += "<item><guid>urn:stages:\(index)</guid><title>Pin \(index % 7)</title>"
            xml += "<description>\(captions[index % captions.count])</description>"
            xml += "<media:content url=\"photos/\(index).jpg\" width=\"\(200 + index % 13 * 40)\" "
            xml += "height=\"\(300 + index % 11 * 50)\"/></item>\n"
        }
        xml += "</channel></rss>\n"
        let path = folder.appendingPathComponent("feed.xml").path
        try Data(xml.utf8).write(to: URL(fileURLWithPath: path))
        return path
    }

    /// Pages as their JSON bytes, in the order the pipeline hands them over.
    static func pages(of feed: String, options: LayoutOptions) async throws -> ([String], LayoutSummary) {
        let pipeline = try LayoutPipeline(options: options)
        var pages: [String] = []
        let summary = try await pipeline.run(feedPath: feed) { page in
            var json = JSONWriter()
            Records.write(page, into: &json)
            pages.append(String(decoding: json.bytes, as: UTF8.self))
        }
        return (pages, summary)
    }

    static func options(concurrency: Int, pageSize: Int = 25, maximumPages: Int? = nil) -> LayoutOptions {
        // The photos are missing: the declared sizes are used, with a warning per item.
        LayoutOptions(
            pagination: PaginationRule(pageSize: pageSize), probeConcurrency: concurrency, maximumPages: maximumPages)
    }

    @Test func pagesDoNotDependOnHowManyTasksPrepare() async throws {
        let feed = try Self.writeFeed(count: 1_500)
        let (one, oneSummary) = try await Self.pages(of: feed, options: Self.options(concurrency: 1))
        let (many, manySummary) = try await Self.pages(of: feed, options: Self.options(concurrency: 16))
        #expect(one.count == 60)
        #expect(one == many)
        #expect(oneSummary.items == 1_500)
        #expect(manySummary.items == 1_500)
        #expect(oneSummary.warnings == manySummary.warnings)
    }

    @Test func aFeedErrorTravelsBackThroughTheStages() async throws {
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("feedlayout-stages-\(UUID())")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        let page = folder.appendingPathComponent("page.html")
        try Data("<html><body><p>not a feed</p></body></html>\n".utf8).write(to: page)
        let pipeline = try LayoutPipeline(options: Self.options(concurrency: 4))
        var pages = 0
        await #expect {
            _ = try await pipeline.run(feedPath: page.path) { _ in pages += 1 }
        } throws: { error in
            guard let error = error as? LayoutError else { return false }
            return error.code == .feedInvalid && error.message.contains("page.html")
        }
        #expect(pages == 0)
    }

    @Test func maximumPagesStopsTheStagesEarly() async throws {
        let feed = try Self.writeFeed(count: 3_000)
        let (pages, _) = try await Self.pages(of: feed, options: Self.options(concurrency: 2, maximumPages: 2))
        #expect(pages.count == 2)
        let (all, _) = try await Self.pages(of: feed, options: Self.options(concurrency: 2))
        #expect(Array(all.prefix(2)) == pages)
    }

    @Test func anErrorFromThePageHandlerStopsTheRun() async throws {
        struct Full: Error {}
        let feed = try Self.writeFeed(count: 3_000)
        let pipeline = try LayoutPipeline(options: Self.options(concurrency: 2))
        var handed = 0
        await #expect(throws: Full.self) {
            _ = try await pipeline.run(feedPath: feed) { _ in
                handed += 1
                if handed == 3 { throw Full() }
            }
        }
        #expect(handed == 3)
    }

    @Test func cancellingTheCallerStopsEveryStage() async throws {
        // 20,000 items make 400 pages: far more than are laid out before the cancellation reaches the stages.
        let feed = try Self.writeFeed(count: 20_000)
        let pipeline = try LayoutPipeline(options: Self.options(concurrency: 2))
        let (firstPage, firstPageSeen) = AsyncStream<Void>.makeStream()
        let run = Task {
            var pages = 0
            _ = try await pipeline.run(feedPath: feed) { _ in
                pages += 1
                if pages == 1 { firstPageSeen.yield() }
            }
            return pages
        }
        for await _ in firstPage { break }
        run.cancel()
        // The run ends (the parser, the preparing stage and placement all stop) with the cancellation, not with a
        // summary of a partial run.
        await #expect(throws: CancellationError.self) { _ = try await run.value }
    }
}
