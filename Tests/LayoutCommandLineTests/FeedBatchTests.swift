import LayoutCommandLine
import Testing

/// The feeds of one `layout` batch and the folders their pages go to.
struct FeedBatchTests {
    @Test func feedsThatShareAFileNameGetNumberedFoldersInOrder() {
        var names = FeedBatch.FolderNames()
        let feeds = ["a/feed.xml", "b/feed.xml", "feed-2.xml", "c/feed.xml", "https://example.com/feed.rss", "d/feed"]
        #expect(feeds.map { names.name(for: $0) } == ["feed", "feed-2", "feed-2-2", "feed-3", "feed-4", "feed-5"])
    }

    @Test func tenThousandFeedsOfOneNameGetTenThousandFolders() {
        var names = FeedBatch.FolderNames()
        let given = (0..<10_000).map { names.name(for: "feeds/\($0)/feed.xml") }
        #expect(given == ["feed"] + (2...10_000).map { "feed-\($0)" })
    }
}
