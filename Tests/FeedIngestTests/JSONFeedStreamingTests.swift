import FeedIngest
import Testing

/// A JSON Feed is read entry by entry as its bytes arrive, with the same records as a whole-document read.
struct JSONFeedStreamingTests {
    /// Feeds `text` in `chunkSize` pieces and returns, for each piece, the ids of the items it completed.
    static func idsPerChunk(_ text: String, chunkSize: Int) throws -> [[String]] {
        let reader = FeedReader(sourceName: "feed.json", baseURL: nil, feedDirectory: nil)
        let bytes = Array(text.utf8)
        var result: [[String]] = []
        var offset = 0
        while offset < bytes.count {
            let chunk = Array(bytes[offset..<min(bytes.count, offset + chunkSize)])
            result.append(try chunk.withUnsafeBytes { try reader.consume($0) }.map(\.id))
            offset += chunkSize
        }
        result.append(try reader.finish().map(\.id))
        return result
    }

    /// A first member long enough that the reader has decided the input is JSON (it holds the first
    /// kilobyte back) before the items begin.
    static let padding = #""description":""# + String(repeating: "x", count: 1100) + #"","#

    static func entry(_ id: Int, image: String = "https://example.com/photo.jpg") -> String {
        #"{"id":"e\#(id)","title":"Entry \#(id)","image":"\#(image)","summary":"a caption, with \"quotes\" and ] }"}"#
    }

    @Test func entriesLeaveAsSoonAsTheyClose() throws {
        let entries = (0..<50).map { Self.entry($0) }.joined(separator: ",\n")
        let text = #"{"version":"https://jsonfeed.org/version/1.1","title":"T","items":["# + entries + "]}"
        let perChunk = try Self.idsPerChunk(text, chunkSize: 2048)
        // Long before the end, entries were handed out; all of them, once each, in order.
        #expect(perChunk.dropLast(2).contains { !$0.isEmpty })
        #expect(perChunk.flatMap { $0 } == (0..<50).map { "e\($0)" })
    }

    @Test func cuttingTheBytesAnywhereGivesTheSameItems() throws {
        let text =
            #"{ "title" : "Cut", "feed_url": "https://example.com/feed.json", "items" : [ "#
            + [Self.entry(1), Self.entry(2, image: "img/2.jpg"), #"{"id": 3, "tags": [1, 2.5e3, true, null, {"a": []}]}"#]
            .joined(separator: " , ") + " ] , \"home_page_url\": \"https://other.example.com/\" }  \n"
        let whole = try parse(text, chunkSize: text.utf8.count)
        #expect(whole.items.map(\.id) == ["e1", "e2", "3"])
        #expect(whole.items[1].image?.url == "https://example.com/img/2.jpg")
        for chunkSize in [1, 2, 3, 7, 64] {
            #expect(try parse(text, chunkSize: chunkSize).items == whole.items, "chunk size \(chunkSize)")
        }
    }

    /// `feed_url` after the items still resolves a relative reference: such an entry, and every one after it,
    /// waits until the base is known; an entry with only absolute references leaves at once.
    @Test func aRelativeReferenceWaitsForABaseThatComesLater() throws {
        let text =
            "{" + Self.padding + #""items":["# + Self.entry(1) + "," + Self.entry(2, image: "photos/2.jpg") + "," + Self.entry(3)
            + #"],"feed_url":"https://later.example.com/feeds/main.json"}"#
        let perChunk = try Self.idsPerChunk(text, chunkSize: 16)
        #expect(perChunk.flatMap { $0 } == ["e1", "e2", "e3"])
        // e1 left before the base was known; e2 and e3 only once it was.
        #expect(perChunk.contains(["e1"]) && perChunk.contains(["e2", "e3"]))
        let feed = try parse(text)
        #expect(feed.items[1].image?.url == "https://later.example.com/feeds/photos/2.jpg")
    }

    /// HTML whose images are all absolute needs no base; one relative `<img>` makes the entry wait.
    @Test func onlyRelativeImagesInHTMLWaitForTheBase() throws {
        let absolute = #"{"id":"a","content_html":"<p><img src=\"https://cdn.example.com/a.jpg\"></p>"}"#
        let relative = #"{"id":"r","content_html":"<p><img src=\"img/r.jpg\"></p>"}"#
        let text = "{" + Self.padding + #""items":["# + absolute + "," + relative + #"],"home_page_url":"https://site.example.com/blog/"}"#
        let perChunk = try Self.idsPerChunk(text, chunkSize: 8)
        let absoluteLeft = try #require(perChunk.firstIndex(of: ["a"]))
        let relativeLeft = try #require(perChunk.firstIndex(of: ["r"]))
        #expect(absoluteLeft < relativeLeft)
        #expect(try parse(text).items[1].image?.url == "https://site.example.com/blog/img/r.jpg")
    }

    @Test func syntaxErrorsKeepTheirDocumentOffset() {
        let text = #"{"title":"x","items":[{"id":"a"},{"id":1,,}]}"#
        #expect {
            _ = try parse(text, chunkSize: 5)
        } throws: { error in
            guard let error = error as? FeedIngestError else { return false }
            // The second comma of "1,,", where a member name should be: 4 bytes before the end.
            return error.code == .invalidJSON
                && error.message.contains("expected a member name at byte offset \(text.utf8.count - 4)")
        }
    }

    @Test(arguments: [
        (#"{"items":[{"id":"a"}]} trailing"#, "text after the JSON value"),
        (#"{"items":[{"id":"a"}"#, "unexpected end in array"),
        (#"{"title":"no items"}"#, "no \"items\" array"),
        (#"{"items":{"id":"a"}}"#, "no \"items\" array"),
    ])
    func brokenDocumentsAreRefused(text: String, expected: String) {
        #expect {
            _ = try parse(text, chunkSize: 3)
        } throws: { error in
            (error as? FeedIngestError)?.message.contains(expected) == true
        }
    }

    @Test func nestingDeeperThanTheLimitIsRefusedInsideAnEntry() {
        let deep = String(repeating: "[", count: 511) + String(repeating: "]", count: 511)
        #expect {
            _ = try parse(#"{"items":[{"id":"a","x":"# + deep + "}]}", chunkSize: 100)
        } throws: { error in
            (error as? FeedIngestError)?.message.contains("nesting deeper than 512") == true
        }
    }
}
