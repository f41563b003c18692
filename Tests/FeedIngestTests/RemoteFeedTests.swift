import Testing

@testable import FeedIngest

/// A feed fetched over http(s): its URL is the last base, the transport's charset counts when the
/// document declares none, and local files are never read for it.
struct RemoteFeedTests {
    static let feedURL = "https://photos.example.com/feeds/recent.xml"

    static func item(_ inner: String) -> String {
        """
        <rss version="2.0" xmlns:media="http://search.yahoo.com/mrss/"><channel><title>t</title>
        <item><guid>g</guid>\(inner)</item></channel></rss>
        """
    }

    @Test func relativeImagesResolveAgainstTheFeedsURL() throws {
        let feed = try parse(
            Self.item(#"<media:content url="img/a.jpg" medium="image"/><media:thumbnail url="/t.jpg"/>"#),
            baseURL: Self.feedURL)
        #expect(
            feed.items[0].images.map(\.url) == [
                "https://photos.example.com/feeds/img/a.jpg", "https://photos.example.com/t.jpg",
            ])
        #expect(feed.items[0].warnings.isEmpty)
    }

    @Test func xmlBaseComesBeforeTheFeedsURLAndTheItemLinkIsNoBase() throws {
        let feed = try parse(
            """
            <rss version="2.0" xmlns:media="http://search.yahoo.com/mrss/"><channel><title>t</title>
            <item><link>https://blog.example.org/2026/post.html</link><media:content url="a.jpg" medium="image"/></item>
            <item xml:base="https://cdn.example.net/x/"><link>https://blog.example.org/p</link>
            <media:content url="b.jpg" medium="image"/></item>
            <item><media:content url="c.jpg" medium="image"/></item>
            </channel></rss>
            """, baseURL: Self.feedURL)
        #expect(
            feed.items.map { $0.image?.url } == [
                "https://photos.example.com/feeds/a.jpg", "https://cdn.example.net/x/b.jpg",
                "https://photos.example.com/feeds/c.jpg",
            ])
    }

    @Test(arguments: [("https://a.example/f.xml", "https:"), ("http://a.example/f.xml", "http:")])
    func protocolRelativeImagesTakeTheFeedsScheme(feedURL: String, scheme: String) throws {
        let feed = try parse(
            Self.item(#"<media:content url="//cdn.example.net/p.jpg" medium="image"/>"#), baseURL: feedURL)
        #expect(feed.items[0].image?.url == scheme + "//cdn.example.net/p.jpg")
    }

    @Test(arguments: ["file:///etc/hostname", "file://localhost/etc/passwd"])
    func localFilesAreRefusedButTheReferenceIsKept(reference: String) throws {
        let feed = try parse(
            Self.item(#"<media:content url="\#(reference)" medium="image" width="640" height="480"/>"#),
            baseURL: Self.feedURL)
        let item = try #require(feed.items.first)
        #expect(item.image == FeedImage(url: reference, width: 640, height: 480, origin: "media:content"))
        #expect(item.warnings.count == 1)
        #expect(item.warnings.first?.code == "refusedPath")
        #expect(item.warnings.first?.message.contains(Self.feedURL) == true)
        #expect(item.warnings.first?.line == 2)
    }

    /// An image root the person running the layout named is the one folder a remote feed's `file:` URLs may name.
    @Test func anImageRootAdmitsFileURLsInsideIt() throws {
        let feed = try parse(
            """
            <rss version="2.0" xmlns:media="http://search.yahoo.com/mrss/"><channel><title>t</title>
            <item><guid>a</guid><media:content url="file:///etc/hostname" medium="image"/></item>
            <item><guid>b</guid><media:content url="file:///usr/share/x.jpg" medium="image"/></item>
            </channel></rss>
            """, baseURL: Self.feedURL, options: FeedIngestOptions(imageRoot: "/etc"))
        #expect(feed.items.first?.image == FeedImage(url: "hostname", localPath: "/etc/hostname", origin: "media:content"))
        #expect(feed.items.first?.warnings == [])
        #expect(feed.items.last?.image?.localPath == nil)
        #expect(feed.items.last?.warnings.first?.code == "refusedPath")
    }

    @Test func theTransportCharsetCountsWhenTheDocumentDeclaresNone() throws {
        // "café" in ISO-8859-1, no XML declaration: the HTTP charset is the only word on it.
        let bytes =
            Array("<rss><channel><item><title>caf".utf8) + [0xE9] + Array("</title></item></channel></rss>".utf8)
        let labelled = try parse(
            bytes, baseURL: Self.feedURL, options: FeedIngestOptions(transportEncoding: "ISO-8859-1"))
        #expect(labelled.items.map(\.title) == ["café"])
        #expect(labelled.items[0].warnings.isEmpty)
        // Without it the byte is invalid UTF-8: read as windows-1252 too, but with a warning.
        let unlabelled = try parse(bytes, baseURL: Self.feedURL)
        #expect(unlabelled.items.map(\.title) == ["café"])
        #expect(codes(unlabelled.items[0].warnings) == ["invalidUTF8"])
    }

    @Test func theTransportCharsetReachesLibxml2ForOtherEncodings() throws {
        // "привет" in KOI8-R.
        let koi8: [UInt8] = [0xD0, 0xD2, 0xC9, 0xD7, 0xC5, 0xD4]
        let bytes =
            Array("<rss><channel><item><title>".utf8) + koi8 + Array("</title></item></channel></rss>".utf8)
        let feed = try parse(
            bytes, chunkSize: 5, baseURL: Self.feedURL, options: FeedIngestOptions(transportEncoding: "koi8-r"))
        #expect(feed.items.map(\.title) == ["привет"])
        #expect(feed.items[0].warnings.isEmpty)
    }

    @Test func aDeclaredEncodingWinsOverTheTransport() throws {
        let text =
            #"<?xml version="1.0" encoding="utf-8"?><rss><channel><item><title>café</title></item></channel></rss>"#
        let feed = try parse(text, baseURL: Self.feedURL, options: FeedIngestOptions(transportEncoding: "iso-8859-1"))
        #expect(feed.items.map(\.title) == ["café"])
        let bom = try parse(
            [0xEF, 0xBB, 0xBF] + Array("<rss><channel><item><title>café</title></item></channel></rss>".utf8),
            baseURL: Self.feedURL, options: FeedIngestOptions(transportEncoding: "iso-8859-1"))
        #expect(bom.items.map(\.title) == ["café"])
    }
}
