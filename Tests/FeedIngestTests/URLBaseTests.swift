import Testing

@testable import FeedIngest

/// Relative references resolve as XML Base and RFC 3986 say: against the nearest `xml:base` in scope, else
/// against the feed document's own location (its folder, or its URL); never against an item's `<link>`.
struct URLBaseTests {
    static let localFeedDirectory = fixturesDirectory + "/local-feed"
    static let feedURL = "https://photos.example.com/feeds/recent.xml"

    static func rss(channelAttributes: String = "", _ items: String) -> String {
        """
        <rss version="2.0" xmlns:media="http://search.yahoo.com/mrss/" xmlns:content="http://purl.org/rss/1.0/modules/content/">
        <channel\(channelAttributes)><title>t</title>\(items)</channel></rss>
        """
    }

    static func local(_ text: String) throws -> [FeedItem] {
        try parse(text, baseURL: nil, feedDirectory: localFeedDirectory).items
    }

    @Test func aLocalFeedWithoutXMLBaseFindsItsPhotosBesideIt() throws {
        // The item's web page is no base: the photo is the file beside the feed, not a URL under the page.
        let items = try Self.local(
            Self.rss(
                """
                <item><guid>1</guid><link>https://example.com/pins/1</link>
                <media:content url="photos/c.jpg" medium="image"/></item>
                """))
        #expect(
            items.first?.image
                == FeedImage(
                    url: "photos/c.jpg", localPath: Self.localFeedDirectory + "/photos/c.jpg", origin: "media:content"))
        #expect(items.first?.warnings == [])
    }

    @Test(arguments: ["", #" xml:base="./""#, #" xml:base="photos/../""#])
    func aLocalFeedsFolderIsItsBaseWithOrWithoutAnXMLBaseThatNamesIt(channelAttributes: String) throws {
        let items = try Self.local(
            Self.rss(
                channelAttributes: channelAttributes,
                """
                <item><guid>1</guid><link>https://example.com/pins/1</link><enclosure url="photos/c.jpg" type="image/jpeg"/>
                <media:thumbnail url="photos/a%20b.jpg"/></item>
                """))
        #expect(items.first?.images.map(\.url) == ["photos/c.jpg", "photos/a b.jpg"])
        #expect(items.first?.images.allSatisfy { $0.localPath != nil } == true)
    }

    @Test func aLocalFeedsXMLBaseNamesAFolderOrAServer() throws {
        let items = try Self.local(
            Self.rss(
                channelAttributes: #" xml:base="photos/""#,
                """
                <item><guid>1</guid><media:content url="c.jpg" medium="image"/></item>
                <item xml:base="https://cdn.example.net/p/"><guid>2</guid><media:content url="c.jpg" medium="image"/></item>
                """))
        #expect(items.map { $0.image?.url } == ["photos/c.jpg", "https://cdn.example.net/p/c.jpg"])
        #expect(items[0].image?.localPath == Self.localFeedDirectory + "/photos/c.jpg")
    }

    @Test func aRemoteFeedResolvesAgainstNestedXMLBasesThenItsOwnURL() throws {
        let items = try parse(
            Self.rss(
                channelAttributes: #" xml:base="img/""#,
                """
                <item xml:base="2026/"><guid>1</guid><link>https://blog.example.org/post/</link>
                <media:content url="a.jpg" medium="image"/></item>
                <item><guid>2</guid><link>https://blog.example.org/other/</link>
                <media:thumbnail url="b.jpg" xml:base="/thumbs/"/></item>
                """), baseURL: Self.feedURL
        ).items
        #expect(
            items.map { $0.image?.url } == [
                "https://photos.example.com/feeds/img/2026/a.jpg", "https://photos.example.com/thumbs/b.jpg",
            ])
    }

    @Test func captionImagesAndLinksTakeTheBaseOfTheirOwnElement() throws {
        let items = try parse(
            Self.rss(
                """
                <item><guid>1</guid><link xml:base="https://blog.example.org/2026/">post.html</link>
                <content:encoded xml:base="https://cdn.example.net/c/"><![CDATA[<p><img src="big.jpg" width="800" height="600"></p>]]></content:encoded></item>
                <item><guid>2</guid><link>https://blog.example.org/2026/other.html</link>
                <description>&lt;img src="small.jpg" width="400" height="300"&gt;</description></item>
                """), baseURL: Self.feedURL
        ).items
        #expect(
            items.map(\.link) == [
                "https://blog.example.org/2026/post.html", "https://blog.example.org/2026/other.html",
            ])
        #expect(
            items.map { $0.image?.url } == [
                "https://cdn.example.net/c/big.jpg", "https://photos.example.com/feeds/small.jpg",
            ])
    }

    @Test func atomContentImagesTakeTheContentsXMLBase() throws {
        let items = try parse(
            """
            <feed xmlns="http://www.w3.org/2005/Atom" xml:base="https://photos.example.org/gallery/">
            <entry><id>tag:e1</id><link href="https://elsewhere.example/e1"/>
            <content type="html" xml:base="2026/">&lt;img src="e1.jpg"&gt;</content></entry></feed>
            """, baseURL: Self.feedURL
        ).items
        #expect(items.first?.image?.url == "https://photos.example.org/gallery/2026/e1.jpg")
    }
}

/// An item without `<link>` takes its permalink; other fields come only from the item's own elements.
struct ItemFieldTests {
    static func rss(_ items: String) -> String {
        "<rss version=\"2.0\"><channel><title>t</title>\(items)</channel></rss>"
    }

    /// The one entry of an Atom 0.3 feed whose entry holds `inner`.
    static func atom03Entry(_ inner: String) throws -> FeedItem? {
        try parse(#"<feed version="0.3" xmlns="http://purl.org/atom/ns#"><entry><id>e</id>\#(inner)</entry></feed>"#)
            .items.first
    }

    @Test func aPermalinkGuidIsTheLinkOfAnItemWithout() throws {
        let items = try parse(
            Self.rss(
                """
                <item><guid>https://blog.example.org/1</guid></item>
                <item><guid isPermaLink="true">https://blog.example.org/2</guid></item>
                <item><guid isPermaLink="false">https://blog.example.org/3</guid></item>
                <item><guid>item-4</guid></item>
                <item><guid>https://blog.example.org/5</guid><link>https://blog.example.org/five</link></item>
                """)
        ).items
        #expect(
            items.map(\.link) == [
                "https://blog.example.org/1", "https://blog.example.org/2", nil, nil, "https://blog.example.org/five",
            ])
        #expect(items.map(\.id) == (1...5).map { $0 == 4 ? "item-4" : "https://blog.example.org/\($0)" })
    }

    @Test func anAtomIdThatIsAWebAddressIsTheLinkOfAnEntryWithout() throws {
        let items = try parse(
            """
            <feed xmlns="http://www.w3.org/2005/Atom">
            <entry><id>https://blog.example.org/e1</id></entry>
            <entry><id>tag:blog.example.org,2026:e2</id></entry>
            <entry><id>https://blog.example.org/e3</id><link href="https://blog.example.org/three"/></entry>
            </feed>
            """
        ).items
        #expect(items.map(\.link) == ["https://blog.example.org/e1", nil, "https://blog.example.org/three"])
    }

    @Test func atom03Base64TextIsDecoded() throws {
        // "Example <b>Atom</b>" and "<p>Hello <i>there</i></p>", base64 with a line break inside.
        let item = try Self.atom03Entry(
            """
            <title mode="base64" type="text/html">RXhhbXBsZSA8Yj5B
            dG9tPC9iPg==</title>
            <content mode="base64" type="text/html">PHA+SGVsbG8gPGk+dGhlcmU8L2k+PC9wPg==</content>
            """)
        #expect(item?.title == "Example Atom")
        #expect(item?.text == "Hello there")
        // Atom 1.0 content of a binary MIME type is base64 too.
        let binary = try parse(
            #"<feed xmlns="http://www.w3.org/2005/Atom"><entry><id>e</id><title type="application/octet-stream">RXhhbXBsZQ==</title></entry></feed>"#
        ).items.first
        #expect(binary?.title == "Example")
    }

    @Test func anUpperCaseHexReferenceIsRepaired() throws {
        let item = try Self.atom03Entry(#"<title type="application/xhtml+xml" mode="xml">&#X41;&#x42;</title>"#)
        #expect(item?.title == "AB")
    }

    @Test func nestedUnknownElementsDoNotLendTheirFields() throws {
        let atom = try parse(
            """
            <feed xmlns="http://www.w3.org/2005/Atom">
            <entry><title>Correct</title><image><title>Wrong</title><id>wrong</id></image><id>e1</id></entry>
            <entry><image><title>Wrong</title><link href="https://wrong.example/"/></image><title>Correct</title>
            <author><name>Ana</name></author><id>e2</id></entry>
            </feed>
            """
        ).items
        #expect(atom.map(\.title) == ["Correct", "Correct"])
        #expect(atom.map(\.id) == ["e1", "e2"])
        #expect(atom.map(\.link) == [nil, nil])
        #expect(atom.last?.author == "Ana")
        let rss = try parse(
            Self.rss(
                """
                <item><image><link>https://item.example/imagelink</link><title>Wrong</title></image>
                <link>https://item.example/</link><title>Right</title></item>
                """)
        ).items
        #expect(rss.first?.link == "https://item.example/")
        #expect(rss.first?.title == "Right")
    }

    @Test func markupInAPlainTextTitleIsMarkupNotCharacters() throws {
        let item = try Self.atom03Entry("<title>Fish &amp; <b>Chips</b> &lt;3</title>")
        #expect(item?.title == "Fish & Chips <3")
    }

    @Test func itunesImagesWrittenTheOldWaysAreImages() throws {
        let items = try parse(
            """
            <rss xmlns:itunes="http://www.itunes.com/DTDs/Podcast-1.0.dtd"><channel>
            <item><guid>1</guid><itunes:image url="http://a.example/i.png"></itunes:image></item>
            <item><guid>2</guid><itunes:link rel="image" href="http://a.example/logo.jpg"></itunes:link></item>
            </channel></rss>
            """
        ).items
        #expect(items.map { $0.image?.url } == ["http://a.example/i.png", "http://a.example/logo.jpg"])
    }

    @Test func atomStyleLinkAndIdInAnRSSItemAreReadAsInAtom() throws {
        let items = try parse(
            Self.rss(
                """
                <item><link href="http://podlove.example/1"/><id>urn:uuid:3241ace2</id>
                <link rel="enclosure" type="image/jpeg" href="http://podlove.example/1.jpg"/></item>
                """)
        ).items
        #expect(items.first?.link == "http://podlove.example/1")
        #expect(items.first?.id == "urn:uuid:3241ace2")
        #expect(items.first?.image?.url == "http://podlove.example/1.jpg")
    }
}
