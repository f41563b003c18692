import FeedIngest
import Testing

/// FeedLayout's own feed extension: `<fl:span>` and `<fl:section>` in namespace `urn:feedlayout:1`, and a JSON
/// Feed item's `_feedlayout` object.
struct LayoutHintTests {
    @Test func rssItemsCarryTheirSpanAndSection() throws {
        let feed = try parse(
            """
            <rss version="2.0" xmlns:fl="urn:feedlayout:1"><channel><title>t</title>
            <item><guid>a</guid><title>plain</title></item>
            <item><guid>b</guid><fl:span> 2 </fl:span><fl:section>Monday</fl:section></item>
            <item><guid>c</guid><fl:span>FULL</fl:span></item>
            </channel></rss>
            """)
        #expect(feed.items.map(\.layout) == [
            LayoutHints(), LayoutHints(span: .columns(2), section: "Monday"), LayoutHints(span: .fullWidth),
        ])
        #expect(feed.items.allSatisfy { $0.warnings.isEmpty })
    }

    @Test func theNamespaceIsMatchedByURINotByPrefix() throws {
        let feed = try parse(
            """
            <feed xmlns="http://www.w3.org/2005/Atom" xmlns:x="urn:feedlayout:1" xmlns:fl="urn:other">
            <title>t</title>
            <entry><id>a</id><x:span>3</x:span><fl:span>2</fl:span></entry>
            </feed>
            """)
        #expect(feed.items.map(\.layout) == [LayoutHints(span: .columns(3))])
    }

    @Test func aSpanThatIsNotACountIsDroppedWithAWarningOnItsLine() throws {
        let feed = try parse(
            """
            <rss version="2.0" xmlns:fl="urn:feedlayout:1"><channel><title>t</title>
            <item><guid>a</guid>
            <fl:span>wide</fl:span></item>
            <item><guid>b</guid><fl:span>0</fl:span></item>
            </channel></rss>
            """)
        #expect(feed.items.map(\.layout.span) == [nil, nil])
        #expect(feed.items.map { $0.warnings.map(\.code) } == [["invalidSpan"], ["invalidSpan"]])
        #expect(feed.items[0].warnings[0].line == 3)
        #expect(feed.items[0].warnings[0].message.contains("'wide'"))
    }

    @Test func jsonFeedItemsTakeHintsFromTheirFeedLayoutObject() throws {
        let feed = try parse(
            """
            {"version": "https://jsonfeed.org/version/1.1", "title": "t", "items": [
              {"id": "a", "_feedlayout": {"span": 2, "section": "Tuesday"}},
              {"id": "b", "_feedlayout": {"span": "full"}},
              {"id": "c"}
            ]}
            """)
        #expect(feed.items.map(\.layout) == [
            LayoutHints(span: .columns(2), section: "Tuesday"), LayoutHints(span: .fullWidth), LayoutHints(),
        ])
    }
}
