import FeedIngest
import Testing

#if canImport(Glibc)
    import Glibc
#endif

/// The push parser: results never depend on how the bytes are cut, and items leave as soon as
/// they close.
struct StreamingTests {
    static let fixtureNames = [
        "rss2-flickr.xml", "junk-before-root.xml", "bom-then-junk.xml", "garbage-after-root.xml",
        "lying-encoding-utf8.xml", "latin1-with-c1.xml", "utf16-bom.xml", "shift-jis.xml", "control-characters.xml",
        "bare-ampersand-nbsp.xml", "cdata.xml", "non-numeric-sizes.xml", "odd-dates.xml",
        "media-namespace-variants.xml", "media-undeclared-prefix.xml", "images-only-in-html.xml",
        "lazy-load-data-src.xml", "tracking-pixels.xml", "atom-xml-base.xml", "xxe.xml", "rss1.rdf", "atom03.xml",
        "json-feed.json", "rss091-netscape.xml", "shift-jis-invalid.xml",
    ]

    @Test(arguments: fixtureNames)
    func chunkBoundariesDoNotChangeResults(name: String) throws {
        let bytes = fixture(name)
        let whole = try parse(bytes, chunkSize: bytes.count)
        #expect(!whole.items.isEmpty)
        for chunkSize in [1, 2, 3, 5, 64, 1000] {
            let chunked = try parse(bytes, chunkSize: chunkSize)
            #expect(chunked.items == whole.items, "chunk size \(chunkSize)")
            #expect(chunked.feedWarnings == whole.feedWarnings, "chunk size \(chunkSize)")
            #expect(chunked.feedTitle == whole.feedTitle)
        }
    }

    @Test func itemsLeaveAsSoonAsTheyClose() throws {
        let reader = FeedReader(sourceName: "stream.xml", baseURL: nil, feedDirectory: nil)
        var header = "<?xml version=\"1.0\"?><rss version=\"2.0\"><channel><title>S</title>"
        // Past the 1 KiB the reader holds back to decide on the encoding.
        header += "<!--" + String(repeating: " ", count: 1100) + "-->"
        func push(_ text: String) throws -> [String] {
            try Array(text.utf8).withUnsafeBytes { try reader.consume($0) }.map(\.id)
        }
        #expect(try push(header) == [])
        #expect(try push("<item><guid>first</guid></item><item><guid>sec") == ["first"])
        #expect(try push("ond</guid>") == [])
        // libxml2's push parser may hold a tag that ends exactly at the end of a chunk until the
        // next chunk arrives, so "second" comes out with this chunk or the next one.
        #expect(try push("</item>") + push("</channel></rss>") == ["second"])
        #expect(try reader.finish() == [])
        #expect(reader.feedTitle == "S")
        #expect(reader.format == .rss)
    }

    @Test func manyItemsKeepTheirOrderAndIndex() throws {
        var text = "<rss><channel>"
        for number in 0..<2000 { text += "<item><guid>i\(number)</guid><title>Item \(number)</title></item>" }
        text += "</channel></rss>"
        let feed = try parse(text, chunkSize: 4093)
        #expect(feed.items.count == 2000)
        #expect(feed.items.map(\.index) == Array(0..<2000))
        #expect(feed.items.map(\.id) == (0..<2000).map { "i\($0)" })
    }
}

/// Local feeds: images resolve inside the feed's directory (or the image root) and nowhere else.
struct LocalFeedTests {
    let directory = fixturesDirectory + "/local-feed"

    @Test func readsAFileAndKeepsImagesInsideItsDirectory() throws {
        var items: [FeedItem] = []
        let summary = try FeedReader.read(path: directory + "/feed.xml") { items.append($0) }
        #expect(summary == FeedSummary(itemCount: 5, format: .rss, feedTitle: "Local", warnings: [], byteCount: 617))
        let spaced = FeedImage(url: "photos/a b.jpg", localPath: directory + "/photos/a b.jpg", origin: "media:content")
        let normalised = FeedImage(url: "photos/c.jpg", localPath: directory + "/photos/c.jpg", origin: "media:content")
        let remote = FeedImage(url: "https://remote.example.com/r.jpg", origin: "media:content")
        // A refused reference stays on its item, unread (no local path), with a warning (issue 3).
        let escaping = FeedImage(url: "../../../etc/passwd", origin: "media:content")
        let fileURL = FeedImage(url: "file:///etc/hostname", origin: "media:content")
        #expect(
            items == [
                FeedItem(index: 0, id: "local-1", image: spaced, images: [spaced]),
                FeedItem(index: 1, id: "local-2", image: normalised, images: [normalised]),
                FeedItem(
                    index: 2, id: "local-3", image: escaping, images: [escaping],
                    warnings: [
                        FeedWarning(
                            code: "refusedPath",
                            message:
                                "local image '../../../etc/passwd' is outside the feed's directory; it is kept as written but not read",
                            line: 6)
                    ]),
                FeedItem(
                    index: 3, id: "local-4", image: fileURL, images: [fileURL],
                    warnings: [
                        FeedWarning(
                            code: "refusedPath",
                            message:
                                "local image 'file:///etc/hostname' is outside the feed's directory; it is kept as written but not read",
                            line: 7)
                    ]),
                FeedItem(index: 4, id: "local-5", image: remote, images: [remote]),
            ])
    }

    @Test func imageRootWidensWhatIsAllowed() throws {
        var items: [FeedItem] = []
        _ = try FeedReader.read(path: directory + "/feed.xml", options: FeedIngestOptions(imageRoot: "/etc")) {
            items.append($0)
        }
        // "../../../etc/passwd" is relative to the feed's directory, not to "/": still outside.
        #expect(items[2].image == FeedImage(url: "../../../etc/passwd", origin: "media:content"))
        #expect(items[3].image == FeedImage(url: "hostname", localPath: "/etc/hostname", origin: "media:content"))
    }

    @Test func symbolicLinksCannotLeadOutside() throws {
        var template = Array("/tmp/feedingest-XXXXXX".utf8CString)
        guard let created = mkdtemp(&template) else {
            Issue.record("mkdtemp failed")
            return
        }
        let temporary = String(cString: created)
        defer {
            unlink(temporary + "/escape")
            unlink(temporary + "/feed.xml")
            rmdir(temporary)
        }
        #expect(symlink("/etc", temporary + "/escape") == 0)
        let feedText =
            "<rss><channel><item><guid>s</guid><enclosure url=\"escape/passwd\" type=\"image/jpeg\"/></item></channel></rss>"
        let file = fopen(temporary + "/feed.xml", "w")
        fputs(feedText, file)
        fclose(file)
        var items: [FeedItem] = []
        _ = try FeedReader.read(path: temporary + "/feed.xml") { items.append($0) }
        #expect(items.count == 1)
        #expect(items.first?.image?.localPath == nil)
        #expect(items.first?.image?.url == "escape/passwd")
        #expect(items.first?.warnings.map(\.code) == ["refusedPath"])
    }

    @Test func usableImagesWinOverRefusedOnes() throws {
        var items: [FeedItem] = []
        _ = try FeedReader.read(path: directory + "/refused-content.xml") { items.append($0) }
        try #require(items.count == 3)
        // The larger media:content escapes the feed's directory; the thumbnail inside it is chosen.
        #expect(
            items[0].image
                == FeedImage(
                    url: "photos/c.jpg", localPath: directory + "/photos/c.jpg", width: 150, height: 100,
                    origin: "media:thumbnail"))
        #expect(items[0].images.map(\.url) == ["../../../etc/passwd", "photos/c.jpg"])
        #expect(items[0].warnings.map(\.code) == ["refusedPath"])
        #expect(items[0].imageFallbacks == [])
        // isDefault on a refused file URL does not beat a usable remote media:content.
        #expect(items[1].image?.url == "https://remote.example.com/r.jpg")
        #expect(items[1].images.count == 2)
        // Nothing usable: the choice order applies to the refused references, as before.
        #expect(items[2].image == FeedImage(url: "../outside.jpg", width: 4000, height: 3000, origin: "media:content"))
        #expect(items[2].warnings.map(\.code) == ["refusedPath", "refusedPath"])
    }

    @Test func missingFileIsAReadError() {
        #expect {
            _ = try FeedReader.read(path: fixturesDirectory + "/does-not-exist.xml") { _ in }
        } throws: { error in
            guard let error = error as? FeedIngestError else { return false }
            return error.code == .readFailed && error.message.contains("No such file")
        }
    }
}
