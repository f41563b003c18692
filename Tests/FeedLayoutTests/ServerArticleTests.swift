import Foundation
import Testing

@testable import FeedLayout

// The code of the article "Laying out a feed in a server" (Sources/FeedLayout/FeedLayout.docc), exactly as the
// article shows it: the test below checks that the two stay the same, and the compiler checks the code.
// article: begin
import FeedLayout
import Logging

/// Made once when the server starts, and shared by every layout.
let sharedResources = LayoutResources(logger: Logger(label: "layouts"))

/// Lays out a feed a client sent, handing each page's JSON to `store` as soon as the page is made.
func layOutClientFeed(
    _ feed: [UInt8], width: Double, columns: Int,
    store: (_ pageIndex: Int, _ json: [UInt8]) async throws -> Void
) async throws -> LayoutSummary {
    var options = LayoutOptions()
    options.waterfall.containerWidth = width
    options.waterfall.columns = .fixed(columns)
    options.pagination = PaginationRule(pageSize: 20)
    let pipeline = try LayoutPipeline(options: options, resources: sharedResources)
    // Relative photo URLs resolve against where the feed came from; local files are never read.
    let input = FeedInput.bytes(feed, name: "client feed", baseURL: "https://example.org/feed.xml")
    return try await pipeline.run(input) { page in
        var json = JSONWriter()
        Records.write(page, into: &json)
        json.appendRaw("\n")
        try await store(page.index, json.takeBytes())
    }
}

/// The first `count` pages of a feed, then the layout stops.
func firstPages(of feed: [UInt8], count: Int) async throws -> [LayoutPage] {
    let pipeline = try LayoutPipeline(options: LayoutOptions(), resources: sharedResources)
    var pages: [LayoutPage] = []
    for try await page in pipeline.pages(of: .bytes(feed)) {
        pages.append(page)
        if pages.count == count { break }
    }
    return pages
}
// article: end

@Suite struct ServerArticleTests {
    static let repository = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
        .deletingLastPathComponent()

    @Test func theArticlesCodeIsThisFilesCode() throws {
        let article = try String(
            contentsOf: Self.repository.appendingPathComponent(
                "Sources/FeedLayout/FeedLayout.docc/LayingOutAFeedInAServer.md"), encoding: .utf8)
        var blocks: [String] = []
        var current: [Substring]?
        for line in article.split(separator: "\n", omittingEmptySubsequences: false) {
            if line == "```swift" {
                current = []
            } else if line == "```", let block = current {
                blocks.append(block.joined(separator: "\n"))
                current = nil
            } else {
                current?.append(line)
            }
        }
        let source = try String(contentsOfFile: #filePath, encoding: .utf8)
        let begin = try #require(source.range(of: "// article: begin\n"))
        let end = try #require(source.range(of: "\n// article: end"))
        let compiled = String(source[begin.upperBound..<end.lowerBound])
        #expect(blocks.count == 2)
        #expect(blocks.joined(separator: "\n\n") == compiled, "the article's code and the compiled code differ")
    }

    @Test func theArticlesCodeLaysOutAFeed() async throws {
        let feed = LibraryAPITests.feed(items: 45)
        var stored: [Int: [UInt8]] = [:]
        let summary = try await layOutClientFeed(Array(feed.utf8), width: 600, columns: 3) { index, json in
            stored[index] = json
        }
        #expect(summary.items == 45)
        #expect(stored.count == 3)
        #expect(stored[0].map { String(decoding: $0, as: UTF8.self).hasPrefix(#"{"schema":"feedlayout.page/1""#) } == true)
        let first = try await firstPages(of: Array(feed.utf8), count: 1)
        #expect(first.count == 1)
    }
}
