import ArgumentParser
import FeedIngest
import FeedLayout
import FeedLayoutTestSupport
import Foundation
import LayoutStore
import NIOHTTP1
import Testing

@testable import LayoutService

import LayoutCommandLine

/// A new version of a feed whose items were appended takes its predecessor's pages (``AppendedItemsReuse``): its
/// pages are byte for byte the library's for the new feed, the taken ones are the predecessor's stored bytes and
/// are not laid out again, and any other change is laid out from scratch.
@Suite(.timeLimit(.minutes(5)))
struct AppendedItemsReuseTests {
    static var options: [String: Any] { ["width": 600, "columns": 3, "pageSize": 10, "gutter": 12] }
    static let arguments = ["--columns=3", "--gutter=12", "--page-size=10", "--width=600"]

    /// An RSS feed: items `0..<count` (ServiceFeeds' captions and photos), item 3's photo missing (a warning on
    /// the first page), `edit` applied to each item's text.
    static func feed(
        items count: Int, photos: String, title: String = "t", order: [Int]? = nil,
        edit: (Int, String) -> String = { $1 }
    ) -> String {
        var feed = """
            <?xml version="1.0"?><rss version="2.0" xmlns:media="http://search.yahoo.com/mrss/"><channel><title>\(title)</title>

            """
        let words = ["espresso", "harbour", "lantern", "meadow", "granite", "saffron", "willow", "comet"]
        for index in order ?? Array(0..<count) {
            let photo =
                index == 3 ? "missing.jpg" : index % 3 == 0 ? "aitzgorri-autumn.jpg" : "chelsea-the-cat.jpg"
            let caption = (0..<(index * 7 % 23 + 1)).map { words[($0 + index) % words.count] }.joined(separator: " ")
            var item = "<item><guid>item-\(index)</guid><title>Pin \(index) \(words[index % words.count])</title>"
            item += "<link>https://example.org/pins/\(index)</link><description>\(caption)</description>"
            item += "<media:content url=\"\(photos)\(photo)\" medium=\"image\"/></item>\n"
            feed += edit(index, item)
        }
        return feed + "</channel></rss>\n"
    }

    /// Starts a layout of posted feed text as a subscription's new version does: stored like a posted one, then
    /// queued with the layout of the version before.
    static func startVersion(_ service: ServiceHarness, feed: String, predecessor: String?) async throws -> String {
        let handlers = service.server.handlers
        let request = try LayoutRequest(
            body: [UInt8](try JSONSerialization.data(withJSONObject: ["feedText": feed, "options": options])))
        let pipeline = try LayoutPipeline(
            options: try ClientOptions.layoutOptions(request.options, settings: handlers.settings),
            resources: handlers.resources)
        let bytes = Array(feed.utf8)
        let id = RouteHandlers.layoutID(identity: pipeline.identity, feed: bytes, base: nil)
        let parts = zip(pipeline.options.layouts, pipeline.grids).map { layout, grid in
            (width: layout.waterfall.containerWidth, columns: grid.columnCount)
        }
        #expect(
            try await handlers.store.insertLayout(
                id: id, options: LayoutOptionValues.storedJSON(request.options), feedName: "feedText", baseURL: nil,
                feed: bytes, parts: parts))
        await handlers.runner.enqueue(id, feed: bytes, predecessor: predecessor)
        return id
    }

    static func itemsLaidOut(_ service: ServiceHarness) async throws -> Int {
        let text = try await service.request(.GET, "/metrics", record: false).text
        let line = try #require(text.split(separator: "\n").first { $0.hasPrefix("feedlayout_items_laid_out_total ") })
        return try #require(Int(line.split(separator: " ")[1]))
    }

    /// The layout's pages as served, plain and gzipped (the stored bytes).
    static func pages(_ service: ServiceHarness, _ id: String, count: Int) async throws -> [(json: [UInt8], gzip: [UInt8])] {
        var pages: [(json: [UInt8], gzip: [UInt8])] = []
        for index in 0..<count {
            let plain = try await service.request(.GET, "/v1/layouts/\(id)/pages/\(index)", record: false)
            let gzipped = try await service.request(
                .GET, "/v1/layouts/\(id)/pages/\(index)", headers: [("Accept-Encoding", "gzip")], record: false)
            #expect(plain.status == 200 && gzipped.status == 200)
            #expect(gzipped.headers.first(name: "Content-Encoding") == "gzip")
            pages.append((plain.body, gzipped.raw))
        }
        return pages
    }

    /// The parts of a layout's state that its pages decide.
    static func state(_ reply: ServiceHarness.Reply) -> String {
        let json = reply.json
        let keys = ["status", "items", "pages", "warnings", "contentHeight", "layouts"]
        let kept = json.filter { keys.contains($0.key) }
        let data = (try? JSONSerialization.data(withJSONObject: kept, options: [.sortedKeys])) ?? Data()
        return String(decoding: data, as: UTF8.self)
    }

    @Test func appendedItemsTakeThePredecessorsPagesAndTheRestIsLaidOutAsTheLibraryDoes() async throws {
        try await TestHTTPServer.with { photos in
            try ServiceFeeds.servePhotos(photos)
            let base = photos.url("/photos/")
            let service = try await ServiceHarness.start()
            defer { Task { await service.stop() } }
            let first = Self.feed(items: 45, photos: base)
            let old = try await Self.startVersion(service, feed: first, predecessor: nil)
            let oldDone = try await service.waitUntilDone(old)
            #expect(oldDone.json["status"] as? String == "done", "\(oldDone.text)")
            #expect(oldDone.json["pages"] as? Int == 5)
            #expect(try await Self.itemsLaidOut(service) == 45)
            let oldPages = try await Self.pages(service, old, count: 5)

            let second = Self.feed(items: 57, photos: base)
            #expect(second.hasPrefix(String(first.dropLast("</channel></rss>\n".count))))
            let new = try await Self.startVersion(service, feed: second, predecessor: old)
            let newDone = try await service.waitUntilDone(new)
            #expect(newDone.json["status"] as? String == "done", "\(newDone.text)")
            #expect(newDone.json["items"] as? Int == 57)
            #expect(newDone.json["pages"] as? Int == 6)
            // Pages 0-3 (40 items) were taken; items 40-56 were laid out.
            #expect(try await Self.itemsLaidOut(service) == 45 + 17)

            let expected = try await ServiceRoutesTests.expectedPages(
                feed: second, arguments: Self.arguments, baseURL: nil)
            #expect(expected.count == 6)
            let newPages = try await Self.pages(service, new, count: 6)
            for (index, page) in expected.enumerated() {
                #expect(newPages[index].json == page, "page \(index) is not the library's page byte for byte")
            }
            for index in 0..<4 {
                #expect(newPages[index].gzip == oldPages[index].gzip, "page \(index) is not the predecessor's")
            }
            // The pages the feed's end cut are not taken: the old last page ends at item 44, the new one does not.
            #expect(newPages[4].json != oldPages[4].json)

            // The new version's state is a from-scratch layout's of the same feed (counts, warnings, pins).
            let scratch = try await ServiceHarness.start()
            defer { Task { await scratch.stop() } }
            let posted = try await scratch.post(["feedText": second, "options": Self.options])
            #expect(posted.json["id"] as? String == new)
            let scratchDone = try await scratch.waitUntilDone(new)
            #expect(Self.state(newDone) == Self.state(scratchDone))
            #expect((newDone.json["warnings"] as? [String: Int])?.isEmpty == false, "item 3's missing photo")
            let height = try #require(
                (newDone.json["layouts"] as? [[String: Any]])?.first?["contentHeight"] as? Double)
            let query = "/v1/layouts/\(new)/items?x=0&y=0&width=600&height=\(Int(height))"
            let pins = try await service.request(.GET, query, record: false)
            let scratchPins = try await scratch.request(.GET, query, record: false)
            #expect(pins.status == 200)
            #expect(pins.body == scratchPins.body)
        }
    }

    @Test(arguments: ["edited", "removed", "reordered", "channel", "insertedAtTop", "sameItemsOnly"])
    func aFeedThatIsNotAPureAppendIsLaidOutFromScratch(change: String) async throws {
        try await TestHTTPServer.with { photos in
            try ServiceFeeds.servePhotos(photos)
            let base = photos.url("/photos/")
            let service = try await ServiceHarness.start()
            defer { Task { await service.stop() } }
            let first = Self.feed(items: 45, photos: base)
            let old = try await Self.startVersion(service, feed: first, predecessor: nil)
            #expect(try await service.waitUntilDone(old).json["status"] as? String == "done")

            let second: String
            switch change {
            case "edited":
                second = Self.feed(items: 57, photos: base) { index, item in
                    index == 12 ? item.replacingOccurrences(of: "<title>Pin 12", with: "<title>Pin twelve") : item
                }
            case "removed": second = Self.feed(items: 57, photos: base, order: (0..<57).filter { $0 != 20 })
            case "reordered":
                second = Self.feed(items: 57, photos: base, order: [0, 1, 2, 3, 5, 4] + Array(6..<57))
            case "channel": second = Self.feed(items: 57, photos: base, title: "another title")
            case "insertedAtTop": second = Self.feed(items: 57, photos: base, order: Array(45..<57) + Array(0..<45))
            default:
                // The same items and one more after the channel's end: not items appended.
                second = first.replacingOccurrences(of: "</channel>", with: "<item><guid>x</guid></item></channel>")
            }
            let new = try await Self.startVersion(service, feed: second, predecessor: old)
            let newDone = try await service.waitUntilDone(new)
            #expect(newDone.json["status"] as? String == "done", "\(newDone.text)")
            let items = try #require(newDone.json["items"] as? Int)
            #expect(try await Self.itemsLaidOut(service) == 45 + items, "pages were taken from the predecessor")
            let expected = try await ServiceRoutesTests.expectedPages(
                feed: second, arguments: Self.arguments, baseURL: nil)
            let newPages = try await Self.pages(service, new, count: expected.count)
            for (index, page) in expected.enumerated() {
                #expect(newPages[index].json == page, "page \(index) is not the library's page byte for byte")
            }
        }
    }

    @Test func otherOptionsOrAnUnfinishedPredecessorAreNotTaken() async throws {
        try await TestHTTPServer.with { photos in
            try ServiceFeeds.servePhotos(photos)
            let base = photos.url("/photos/")
            let service = try await ServiceHarness.start()
            defer { Task { await service.stop() } }
            // The predecessor: other options (4 columns), same feed bytes up to the appended items.
            let posted = try await service.post([
                "feedText": Self.feed(items: 45, photos: base),
                "options": ["width": 600, "columns": 4, "pageSize": 10, "gutter": 12],
            ])
            let old = try #require(posted.json["id"] as? String)
            #expect(try await service.waitUntilDone(old).json["status"] as? String == "done")
            let new = try await Self.startVersion(
                service, feed: Self.feed(items: 57, photos: base), predecessor: old)
            #expect(try await service.waitUntilDone(new).json["status"] as? String == "done")
            #expect(try await Self.itemsLaidOut(service) == 45 + 57)
            // A predecessor that does not exist.
            let third = try await Self.startVersion(
                service, feed: Self.feed(items: 58, photos: base), predecessor: "0123456789abcdef0123456789abcdef")
            #expect(try await service.waitUntilDone(third).json["status"] as? String == "done")
            #expect(try await Self.itemsLaidOut(service) == 45 + 57 + 58)
        }
    }

    // MARK: The premise: a page with a cursor depends on nothing after it

    /// A feed with sections every 7 items, spans and declared photo sizes, and every 9th item with warnings that
    /// name their line and column. The photos are never fetched: a loopback address is refused at once, with the
    /// same warning in every run (a name that does not resolve got "Name or service not known" in one run and
    /// "Temporary failure in name resolution" in the next, and the pages differed).
    static func sectionedFeed(items count: Int) -> String {
        var feed = """
            <?xml version="1.0"?><rss version="2.0" xmlns:media="http://search.yahoo.com/mrss/" xmlns:fl="urn:feedlayout:1"><channel><title>t</title>

            """
        for index in 0..<count {
            let title = index % 9 == 4 ? "Pin \(index) & more</title><pubDate>yesterday</pubDate>" : "Pin \(index)</title>"
            feed += "<item><guid>item-\(index)</guid><title>\(title)<description>caption \(index) "
            feed += String(repeating: "word ", count: index % 17) + "</description>"
            feed += "<fl:section>section \(index / 7)</fl:section>"
            if index % 11 == 5 { feed += "<fl:span>2</fl:span>" }
            feed += "<media:content url=\"https://127.0.0.1/\(index % 5).jpg\" medium=\"image\" "
            feed += "width=\"\(400 + index % 7 * 50)\" height=\"\(300 + index % 11 * 40)\"/></item>\n"
        }
        return feed + "</channel></rss>\n"
    }

    static func pages(feed: String, pipeline: LayoutPipeline, resume: String? = nil) async throws -> [[UInt8]] {
        try await pages(input: .bytes(Array(feed.utf8)), pipeline: pipeline, resume: resume)
    }

    static func pages(input: FeedInput, pipeline: LayoutPipeline, resume: String?) async throws -> [[UInt8]] {
        var pages: [[UInt8]] = []
        _ = try await pipeline.run(input, resume: resume) { page in
            var json = JSONWriter()
            Records.write(page, into: &json)
            json.appendRaw("\n")
            pages.append(json.takeBytes())
        }
        return pages
    }

    static func cursor(_ page: [UInt8]) -> String? {
        (try? JSONSerialization.jsonObject(with: Data(page)) as? [String: Any])?["cursor"] as? String
    }

    @Test(arguments: [
        ["--width=600", "--columns=3", "--page-size=10"],
        ["--width=600", "--columns=3", "--page-height=700"],
        ["--width=600", "--columns=4", "--page-size=9", "--placement=grid-lanes"],
        ["--width=600", "--mode=flow", "--row-photo-height=120", "--page-size=8"],
        ["--width=600", "--mode=flow", "--follow", "--page-height=500", "--section-header-height=20"],
        ["--width=600", "--columns=3", "--page-size=10", "--section-header-height=24", "--section-footer-height=8"],
    ])
    func everyPageBeforeTheLastIsTheSameWhenItemsAreAppended(arguments: [String]) async throws {
        // One pipeline for every run: making one loads the fonts.
        let pipeline = try LayoutPipeline(options: try LayoutCommandOptions.parse(arguments + ["--no-cache"]).options())
        let other = try LayoutPipeline(
            options: try LayoutCommandOptions.parse(arguments + ["--no-cache", "--gutter=3"]).options())
        for (count, added) in [(45, 12), (43, 1), (40, 30)] {
            let oldBytes = Array(Self.sectionedFeed(items: count).utf8)
            let old = try await Self.pages(feed: Self.sectionedFeed(items: count), pipeline: pipeline)
            let newFeed = Self.sectionedFeed(items: count + added)
            let newBytes = Array(newFeed.utf8)
            let match = try #require(FeedAppend.match(old: oldBytes, new: newBytes))
            #expect(match.appendedItems == added)
            let new = try await Self.pages(feed: newFeed, pipeline: pipeline)
            try #require(old.count >= 2, "\(arguments): one page")
            let kept = old.count - 1
            #expect(Array(new.prefix(kept)) == Array(old.prefix(kept)), "\(arguments), \(count)+\(added)")
            let cursor = try #require(Self.cursor(old[kept - 1]))
            let resumed = try await Self.pages(feed: newFeed, pipeline: pipeline, resume: cursor)
            #expect(resumed == Array(new.dropFirst(kept)), "\(arguments), \(count)+\(added): resumed")
            #expect(pipeline.accepts(cursor: cursor))
            #expect(!other.accepts(cursor: cursor))
            // Resumed by bytes: the head and the feed from the cursor's item on give the same pages, cursors (the
            // digest of the items before them) and warnings (their lines and columns) included.
            let index = try #require(pipeline.resumeIndex(ofCursor: cursor))
            let start = try #require(match.oldItemStarts?[index])
            let bytes = try #require(FeedByteSplitter.resumedFeed(newBytes, atItemStart: start))
            #expect(bytes.count < newBytes.count)
            let byBytes = try await Self.pages(
                input: .resumed(bytes, firstItem: index, name: "feed", baseURL: nil), pipeline: pipeline,
                resume: cursor)
            #expect(byBytes == resumed, "\(arguments), \(count)+\(added): resumed by bytes")
            await #expect(throws: LayoutError.self, "a feed resumed at another item than the cursor's") {
                _ = try await Self.pages(
                    input: .resumed(bytes, firstItem: index + 1, name: "feed", baseURL: nil), pipeline: pipeline,
                    resume: cursor)
            }
        }
    }
}
