import FeedIngest
import Testing

/// The image choice order, one rule at a time.
struct ImageChoiceTests {
    private func item(_ body: String, namespaces: String = "") throws -> FeedItem {
        let text = """
            <rss version="2.0" xmlns:media="http://search.yahoo.com/mrss/" xmlns:itunes="http://www.itunes.com/dtds/podcast-1.0.dtd" xmlns:atom="http://www.w3.org/2005/Atom" \(namespaces)><channel><title>C</title>
            <item><guid>x</guid>\(body)</item></channel></rss>
            """
        let feed = try parse(text)
        try #require(feed.items.count == 1)
        return feed.items[0]
    }

    @Test func largestMediaContentWithoutDefault() throws {
        let result = try item(
            """
            <media:content url="https://i/a.jpg" medium="image" width="300" height="200"/>
            <media:group><media:content url="https://i/b.jpg" type="image/jpeg" width="1200" height="800"/></media:group>
            <media:content url="https://i/c.jpg" medium="image" width="640"/>
            <media:thumbnail url="https://i/t.jpg" width="2000" height="2000"/>
            """)
        #expect(
            result.image
                == FeedImage(
                    url: "https://i/b.jpg", width: 1200, height: 800, type: "image/jpeg", origin: "media:content"))
        #expect(
            result.images.map(\.url) == ["https://i/a.jpg", "https://i/b.jpg", "https://i/c.jpg", "https://i/t.jpg"])
    }

    @Test func videoContentFallsBackToItsThumbnail() throws {
        let result = try item(
            """
            <media:content url="https://v/clip.mp4" medium="video" width="1920" height="1080">
              <media:thumbnail url="https://v/small.jpg" width="120" height="90"/>
              <media:thumbnail url="https://v/large.jpg" width="480" height="360"/>
            </media:content>
            """)
        #expect(
            result.image == FeedImage(url: "https://v/large.jpg", width: 480, height: 360, origin: "media:thumbnail"))
        #expect(result.images.count == 2)
    }

    @Test func enclosureByTypeOrExtension() throws {
        let result = try item(
            """
            <enclosure url="https://p/episode.mp3" type="audio/mpeg" length="1"/>
            <enclosure url="https://p/notes.pdf"/>
            <enclosure url="https://p/Cover.JPG?v=2"/>
            <itunes:image href="https://p/show.png"/>
            """)
        #expect(result.image == FeedImage(url: "https://p/Cover.JPG?v=2", origin: "enclosure"))
        #expect(
            result.images == [
                FeedImage(url: "https://p/Cover.JPG?v=2", origin: "enclosure"),
                FeedImage(url: "https://p/show.png", origin: "itunes:image"),
            ])
    }

    @Test func atomEnclosureLinkInRSS() throws {
        let result = try item(
            """
            <link>https://site/post</link>
            <atom:link rel="alternate" href="https://elsewhere/post"/>
            <atom:link rel="enclosure" type="image/webp" href="/img/p.webp"/>
            """)
        // The RSS <link> wins over an Atom alternate link; relative hrefs resolve against the feed's URL, not it.
        #expect(result.link == "https://site/post")
        #expect(
            result.image == FeedImage(url: "https://example.com/img/p.webp", type: "image/webp", origin: "atom:link"))
    }

    @Test func itunesImageBeforeCaptionImages() throws {
        let result = try item(
            """
            <description>&lt;img src="https://c/in-caption.jpg"&gt;</description>
            <itunes:image href="https://p/episode.jpg"/>
            """)
        // Caption <img> are candidates only when nothing is declared.
        #expect(result.images == [FeedImage(url: "https://p/episode.jpg", origin: "itunes:image")])
        #expect(result.image == result.images.first)
    }

    @Test func nothingAtAll() throws {
        let result = try item("<title>Words only</title><description>No pictures here.</description>")
        #expect(result == FeedItem(index: 0, id: "x", title: "Words only", text: "No pictures here."))
    }
}

/// Fields beyond the image: ids, authors, fallbacks.
struct FieldTests {
    @Test func idFallsBackToLinkThenToAStableHash() throws {
        let text = """
            <rss><channel>
            <item><title>Linked</title><link>https://a/1</link></item>
            <item><title>Nothing</title><pubDate>2024-05-01</pubDate></item>
            <item><title>Permalink</title><guid>https://a/2</guid></item>
            <item><title>Not a permalink</title><guid isPermaLink="false">https://a/3</guid></item>
            </channel></rss>
            """
        let first = try parse(text)
        let second = try parse(text, chunkSize: 1)
        #expect(first.items.map(\.id)[0] == "https://a/1")
        #expect(first.items[1].id.hasPrefix("urn:feedlayout:"))
        #expect(first.items[1].id.count == "urn:feedlayout:".count + 16)
        // Stable across runs and readers (never Swift's per-process seeded hashing).
        #expect(first.items[1].id == second.items[1].id)
        #expect(first.items[1].id == "urn:feedlayout:" + "\(ItemHashProbe.expected)")
        #expect(first.items[2].link == "https://a/2")
        #expect(first.items[3].link == nil)
        #expect(first.items[3].id == "https://a/3")
    }

    @Test func authorsFromEveryVocabulary() throws {
        let text = """
            <rss xmlns:dc="http://purl.org/dc/elements/1.1/" xmlns:media="http://search.yahoo.com/mrss/" xmlns:itunes="http://www.itunes.com/dtds/podcast-1.0.dtd"><channel>
            <item><guid>1</guid><author>jo@example.com (Jo Park)</author><dc:creator>ignored</dc:creator></item>
            <item><guid>2</guid><dc:creator>  Dee   Creator </dc:creator></item>
            <item><guid>3</guid><media:credit role="photographer">Media Credit</media:credit></item>
            <item><guid>4</guid><itunes:author>Pod Caster</itunes:author></item>
            <item><guid>5</guid><author>only@example.com</author></item>
            </channel></rss>
            """
        #expect(
            try parse(text).items.map(\.author) == [
                "Jo Park", "Dee Creator", "Media Credit", "Pod Caster", "only@example.com",
            ])
    }

    @Test func atomWithoutNamespaceAndMediaTitleFallback() throws {
        let text = """
            <feed xmlns:media="http://search.yahoo.com/mrss/"><title>No xmlns</title>
            <entry><id>e</id><link href="https://n/e"/><media:title>From media</media:title><updated>2024-01-02T03:04:05Z</updated></entry>
            </feed>
            """
        let feed = try parse(text)
        #expect(feed.format == .atom)
        #expect(feed.feedTitle == "No xmlns")
        #expect(
            feed.items == [
                FeedItem(index: 0, id: "e", title: "From media", link: "https://n/e", published: "2024-01-02T03:04:05Z")
            ])
    }

    @Test func atomSourceDoesNotLendItsFields() throws {
        // Aggregators copy entries with a <source> describing the original feed; its title, id,
        // link and author are not the entry's (feedparser also keeps them apart, in `source`).
        let text = """
            <feed xmlns="http://www.w3.org/2005/Atom"><title>Planet</title>
            <entry>
              <source><id>urn:origin</id><title>Origin Feed</title><link href="https://origin/"/><author><name>Origin</name></author></source>
              <title>Copied entry</title><id>urn:entry</id><link href="https://origin/entry"/><author><name>Writer</name></author>
            </entry></feed>
            """
        #expect(
            try parse(text).items == [
                FeedItem(
                    index: 0, id: "urn:entry", title: "Copied entry", link: "https://origin/entry", author: "Writer")
            ])
    }

    @Test func captionIsCappedAtMaxTextLength() throws {
        let words = Array(repeating: "lorem", count: 100).joined(separator: " ")
        let feed = try parse(
            "<rss><channel><item><guid>c</guid><description>\(words)</description></item></channel></rss>",
            options: FeedIngestOptions(maxTextLength: 30))
        #expect(feed.items[0].text == "lorem lorem lorem lorem lorem…")
    }
}

/// FNV-1a 64 of "Nothing" 0x1F "2024-05-01T00:00:00Z" 0x1F "" 0x1F, computed independently here.
enum ItemHashProbe {
    static var expected: String {
        var hash: UInt64 = 0xcbf2_9ce4_8422_2325
        let prime: UInt64 = 0x100_0000_01b3
        for byte in Array("Nothing".utf8) + [0x1F] + Array("2024-05-01T00:00:00Z".utf8) + [0x1F, 0x1F] {
            hash = (hash ^ UInt64(byte)) &* prime
        }
        let hex = String(hash, radix: 16)
        return String(repeating: "0", count: 16 - hex.count) + hex
    }
}

/// The images after the chosen one, for a layout to try when probing finds the chosen one unusable.
struct ImageFallbackOrderTests {
    @Test func usableCandidatesFollowInTheChoiceOrderAndRefusedOnesNever() throws {
        let feed = try parse(
            """
            <rss version="2.0" xmlns:media="http://search.yahoo.com/mrss/"><channel><title>C</title><item><guid>x</guid>
            <enclosure url="photos/enclosure.jpg" type="image/jpeg"/>
            <media:thumbnail url="photos/thumb.jpg" width="150" height="100"/>
            <media:content url="../outside.jpg" medium="image" width="4000" height="3000"/>
            <media:content url="photos/small.jpg" medium="image" width="300" height="200"/>
            <media:content url="photos/c.jpg" medium="image" width="1200" height="800"/>
            </item></channel></rss>
            """, baseURL: nil, feedDirectory: fixturesDirectory + "/local-feed")
        let item = try #require(feed.items.first)
        #expect(item.image?.url == "photos/c.jpg")
        #expect(item.imageFallbacks.map(\.url) == ["photos/small.jpg", "photos/thumb.jpg", "photos/enclosure.jpg"])
    }
}
