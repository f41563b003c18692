import FeedIngest
import Testing

/// Whole records for each format. Where feedparser 6.0 has a different opinion the comment says
/// why ours differs.
struct FormatTests {
    @Test func rss2WithMediaRSS() throws {
        let feed = try parse(fixture("rss2-flickr.xml"))
        #expect(feed.format == .rss)
        #expect(feed.feedTitle == "Uploads from Jane")
        #expect(feed.feedWarnings == [])
        let large = FeedImage(
            url: "https://live.staticflickr.com/65535/5300_b.jpg", width: 1024, height: 683, type: "image/jpeg",
            origin: "media:content")
        let thumbnail = FeedImage(
            url: "https://live.staticflickr.com/65535/5300_s.jpg", width: 75, height: 75, origin: "media:thumbnail")
        let group = [
            FeedImage(
                url: "https://live.staticflickr.com/65535/5301_z.jpg", width: 640, height: 480, type: "image/jpeg",
                origin: "media:content"),
            FeedImage(
                url: "https://live.staticflickr.com/65535/5301_b.jpg", width: 1024, height: 768, type: "image/jpeg",
                origin: "media:content"),
            FeedImage(
                url: "https://live.staticflickr.com/65535/5301_k.jpg", width: 2048, height: 1536, type: "image/jpeg",
                origin: "media:content"),
        ]
        #expect(
            feed.items == [
                FeedItem(
                    index: 0, id: "tag:flickr.com,2004:/photo/5300", title: "Harbour at dawn",
                    // feedparser keeps the description's HTML; the contract asks for plain text.
                    text: "Jane posted a photo: Fog lifting over the boats.",
                    link: "https://www.flickr.com/photos/jane/5300/",
                    // feedparser: author "nobody@flickr.com (Jane)", author_detail.name "Jane"; we give the name.
                    author: "Jane", published: "2024-05-01T12:12:33Z", image: large, imageFallbacks: [thumbnail],
                    images: [large, thumbnail]),
                FeedItem(
                    index: 1, id: "tag:flickr.com,2004:/photo/5301", title: "Second", text: "Just text.",
                    link: "https://www.flickr.com/photos/jane/5301/", published: "2024-05-02T10:00:00Z",
                    // isDefault wins over the larger rendition; the video is not an image candidate.
                    // The others follow, largest first, for a layout to fall back on.
                    image: group[1], imageFallbacks: [group[2], group[0]], images: group),
            ])
    }

    @Test func rss091WithTheNetscapeDTD() throws {
        // The external DTD is never loaded (no network, no DTD loading), yet its HTML entities
        // must read as characters, as feedparser reads them.
        let feed = try parse(fixture("rss091-netscape.xml"))
        #expect(feed.format == .rss)
        #expect(feed.feedTitle == "Café Photos")
        #expect(feed.feedWarnings == [])
        #expect(
            feed.items == [
                FeedItem(
                    index: 0, id: "http://cafe.example.com/creme", title: "Crème brûlée", text: "Dessert & café.",
                    link: "http://cafe.example.com/creme")
            ])
    }

    @Test func rss1RDF() throws {
        // Served from the site itself: the root-relative <img> resolves against the feed's URL.
        let feed = try parse(fixture("rss1.rdf"), baseURL: "https://rdf.example.com/feed.rdf")
        #expect(feed.format == .rdf)
        #expect(feed.feedTitle == "RDF Photos")
        let image = FeedImage(
            url: "https://rdf.example.com/photos/lighthouse.jpg", width: 1600, height: 1067, origin: "html:img")
        #expect(
            feed.items == [
                FeedItem(
                    index: 0, id: "https://rdf.example.com/p/1", title: "Lighthouse", text: "White tower, blue sky.",
                    link: "https://rdf.example.com/p/1", author: "Mo Chen", published: "2024-05-06T07:08:09Z",
                    image: image, images: [image])
            ])
    }

    @Test func atom10WithXMLBase() throws {
        let feed = try parse(fixture("atom-xml-base.xml"))
        #expect(feed.format == .atom)
        #expect(feed.feedTitle == "Gallery & more")
        let spring = FeedImage(
            url: "https://photos.example.org/gallery/2024/images/spring.jpg", type: "image/jpeg", origin: "atom:link")
        let thumbnail = FeedImage(
            url: "https://cdn.example.net/t/e2-small.jpg", width: 160, height: 120, origin: "media:thumbnail")
        let protocolRelative = FeedImage(url: "https://cdn.example.net/e3.jpg", origin: "atom:link")
        #expect(
            feed.items == [
                FeedItem(
                    index: 0, id: "tag:photos.example.org,2024:spring",
                    // feedparser keeps type="html" titles as HTML ("<b>Spring</b> walk"); we want text.
                    title: "Spring walk",
                    // type="text": "<in>" is text, not a tag (feedparser agrees).
                    text: "A walk <in> spring.",
                    // entry xml:base "2024/" against the feed's "https://photos.example.org/gallery/".
                    link: "https://photos.example.org/gallery/2024/spring.html",
                    // feedparser: "Ana Lima (ana@example.org)"; we give the name alone.
                    author: "Ana Lima", published: "2024-05-01T08:00:00Z", image: spring, images: [spring]),
                FeedItem(
                    index: 1, id: "tag:photos.example.org,2024:e2", title: "Relative everywhere",
                    text: "An xhtml body with 1 < 2.", link: "https://photos.example.org/about/entry2",
                    // No <published>: <updated> stands in, as feedparser's `updated` would.
                    published: "2024-05-03T09:00:00Z", image: thumbnail, images: [thumbnail]),
                FeedItem(
                    index: 2, id: "tag:photos.example.org,2024:e3", title: "Protocol-relative",
                    // feedparser falls back to the id for the link; an id is not a URL to open.
                    link: nil, published: "2024-05-04T09:00:00Z", image: protocolRelative, images: [protocolRelative]),
            ])
    }

    @Test func atom03() throws {
        let feed = try parse(fixture("atom03.xml"))
        #expect(feed.format == .atom)
        #expect(feed.feedTitle == "Old Atom")
        let image = FeedImage(url: "https://old.example.com/v.jpg", origin: "html:img")
        #expect(
            feed.items == [
                FeedItem(
                    index: 0, id: "tag:old.example.com,2004:1", title: "Vintage", text: "Escaped",
                    link: "https://old.example.com/1", author: "Old Timer", published: "2004-01-02T08:04:05Z",
                    image: image, images: [image])
            ])
    }

    @Test func jsonFeed() throws {
        let feed = try parse(fixture("json-feed.json"))
        #expect(feed.format == .jsonFeed)
        #expect(feed.feedTitle == "JSON Photos")
        let dunes = FeedImage(url: "https://json.example.com/images/dunes.jpg", origin: "json:image")
        let attachment = FeedImage(url: "https://json.example.com/a.png", type: "image/png", origin: "enclosure")
        #expect(
            feed.items == [
                FeedItem(
                    index: 0, id: "j-1", title: "Dunes — at noon", text: "Sand and sky",
                    link: "https://json.example.com/p/1",
                    author: "Sam Ortiz", published: "2024-05-07T19:00:00Z", image: dunes, images: [dunes]),
                FeedItem(
                    index: 1, id: "2", text: "Numeric id, attachment only", image: attachment, images: [attachment]),
            ])
    }

    @Test func invalidJSONIsAClearError() {
        #expect {
            _ = try parse("{\"items\": [ {\"id\": 1,, } ]}")
        } throws: { error in
            (error as? FeedIngestError)?.code == .invalidJSON
                && (error as? FeedIngestError)?.message.contains("byte offset") == true
        }
    }
}
