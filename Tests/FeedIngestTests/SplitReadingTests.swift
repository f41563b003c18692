import FeedIngest
import Testing

/// Reads a feed the way `ingest` and `layout` do on two cores: items captured by the reader and finished
/// by a separate `FeedItemFinisher`, and, once the reader has decided, bytes cleaned by the detached
/// `FeedInputSanitizer` before the reader parses them.
func parseSplit(
    _ bytes: [UInt8], chunkSize: Int, baseURL: String? = "https://example.com/feed.xml", feedDirectory: String? = nil,
    options: FeedIngestOptions = .init()
) throws -> (feed: ParsedFeed, detached: Bool) {
    let reader = FeedReader(sourceName: "test.xml", baseURL: baseURL, feedDirectory: feedDirectory, options: options)
    let finisher = FeedItemFinisher(reader.finishing)
    var captured: [CapturedFeedItem] = []
    var sanitizer: FeedInputSanitizer?
    var offset = 0
    while offset < bytes.count {
        let end = min(bytes.count, offset + chunkSize)
        let chunk = Array(bytes[offset..<end])
        offset = end
        if var detached = sanitizer {
            let clean = try chunk.withUnsafeBytes { try detached.sanitize($0) }
            sanitizer = detached
            captured += try reader.captureItems(sanitized: clean)
        } else {
            captured += try chunk.withUnsafeBytes { try reader.captureItems($0) }
            sanitizer = reader.detachSanitizer()
        }
    }
    if var detached = sanitizer {
        captured += try reader.captureRemainingItems(sanitized: detached.finish())
    } else {
        captured += try reader.captureRemainingItems()
    }
    let feed = ParsedFeed(
        items: captured.map(finisher.finish), format: reader.format, feedTitle: reader.feedTitle,
        feedWarnings: reader.feedWarnings)
    return (feed, sanitizer != nil)
}

/// `bytes` with a 2 KB comment after the XML declaration (or at the start when there is none), so that the
/// reader decides how to read the feed before its items and the detached sanitizer cleans all of them. ASCII, so
/// it reads the same in UTF-8 and windows-1252 feeds.
func paddedForEarlyDecision(_ bytes: [UInt8]) -> [UInt8] {
    let comment = Array(("<!--" + String(repeating: " padding", count: 256) + " -->").utf8)
    // After the declaration wherever it is: junk before it must stay within the bytes the reader decides on.
    var insertAt = bytes.starts(with: [0xEF, 0xBB, 0xBF]) ? 3 : 0
    let opening = Array("<?xml".utf8)
    if let start = (0..<max(0, bytes.count - opening.count)).first(where: {
        bytes[$0..<$0 + opening.count].elementsEqual(opening)
    }),
        let end = (start..<bytes.count - 1).first(where: {
            bytes[$0] == UInt8(ascii: "?") && bytes[$0 + 1] == UInt8(ascii: ">")
        })
    {
        insertAt = end + 2
    }
    return Array(bytes[..<insertAt]) + comment + Array(bytes[insertAt...])
}

/// The fixtures libxml2 decodes itself (UTF-16, Shift_JIS) or that are JSON: no sanitizer to detach.
let fixturesWithoutSanitizer: Set = ["utf16-bom.xml", "shift-jis.xml", "shift-jis-invalid.xml", "json-feed.json"]

@Suite struct SplitReadingTests {
    /// Every fixture, including those with repairs (invalid UTF-8, control characters, bare `&`, windows-1252),
    /// reads the same split as whole: same records, same warnings at the same lines, same feed warnings.
    @Test(arguments: StreamingTests.fixtureNames + ["entity-bomb.xml", "html-page.html"])
    func splitReadingMatchesConsume(name: String) throws {
        let bytes = fixture(name)
        guard let whole = try? parse(bytes, chunkSize: 4096) else {
            // A feed the reader refuses (an HTML page, an entity bomb) is refused the same way split.
            #expect(throws: FeedIngestError.self) { try parseSplit(bytes, chunkSize: 4096) }
            return
        }
        for chunkSize in [1, 3, 64, 1500, 4096] {
            let (split, _) = try parseSplit(bytes, chunkSize: chunkSize)
            #expect(split.items == whole.items, "\(name), chunk size \(chunkSize)")
            #expect(split.feedWarnings == whole.feedWarnings, "\(name), chunk size \(chunkSize)")
            #expect(split.format == whole.format)
            #expect(split.feedTitle == whole.feedTitle)
        }
    }

    /// The same with every item behind the detached sanitizer (most fixtures are shorter than the kilobyte the
    /// reader looks at before deciding, so above they end before it detaches).
    @Test(arguments: StreamingTests.fixtureNames.filter { !fixturesWithoutSanitizer.contains($0) })
    func detachedSanitizingMatchesConsume(name: String) throws {
        let bytes = paddedForEarlyDecision(fixture(name))
        let whole = try parse(bytes, chunkSize: bytes.count)
        for chunkSize in [1100, 1500, 2100] {
            let (split, detached) = try parseSplit(bytes, chunkSize: chunkSize)
            #expect(detached, "\(name) reads through the sanitizer")
            #expect(split.items == whole.items, "\(name), chunk size \(chunkSize)")
            #expect(split.feedWarnings == whole.feedWarnings, "\(name), chunk size \(chunkSize)")
            #expect(split.feedTitle == whole.feedTitle)
        }
    }

    /// No sanitizer is detached where libxml2 decodes the encoding itself or the feed is JSON.
    @Test(arguments: fixturesWithoutSanitizer.sorted())
    func noSanitizerWhereLibxml2DecodesOrTheFeedIsJSON(name: String) throws {
        let bytes = fixture(name)
        #expect(try !parseSplit(bytes + Array(repeating: 0x20, count: 2048), chunkSize: 1100).detached)
    }

    /// Repairs found by the detached sanitizer land on the item the parser is in when it reaches them, with the
    /// input's line and column.
    @Test func repairsFromTheDetachedSanitizerKeepTheirItemAndLine() throws {
        let padding = String(repeating: "<!-- padding so the reader decides before the items -->\n", count: 40)
        let text = """
            <?xml version="1.0" encoding="utf-8"?>
            \(padding)<rss version="2.0"><channel><title>t</title>
            <item><title>one</title><description>AT&T \u{0B}tab</description></item>
            <item><title>two \u{01}</title></item>
            </channel></rss>
            """
        let whole = try parse(text, chunkSize: 100_000)
        let (split, detached) = try parseSplit(Array(text.utf8), chunkSize: 1100)
        #expect(detached)
        #expect(split.items == whole.items)
        #expect(split.items.count == 2)
        #expect(split.items[0].warnings.map(\.code).contains("unescapedAmpersand"))
        #expect(!split.items[1].warnings.isEmpty)
        #expect(split.items[1].warnings.allSatisfy { $0.line == whole.items[1].warnings.first?.line })
    }

    /// An input without a feed in it says how many bytes were read, all of them, when the sanitizer was detached.
    @Test func noRootAfterDetachingCountsEveryByte() throws {
        let bytes = Array(("<?xml version=\"1.0\"?>" + String(repeating: "<!-- nothing -->\n", count: 300)).utf8)
        let error = #expect(throws: FeedIngestError.self) { try parseSplit(bytes, chunkSize: 1100) }
        #expect(error?.code == .malformedDocument)
        #expect(
            error?.message.contains("no root element in \(bytes.count) bytes") == true, "\(String(describing: error))")
    }

    /// The input limit holds when the sanitizer counts the bytes.
    @Test func theDetachedSanitizerKeepsTheInputLimit() throws {
        let items = String(repeating: "<item><title>x</title></item>\n", count: 200)
        let text = "<?xml version=\"1.0\"?><rss version=\"2.0\"><channel>\(items)</channel></rss>"
        let error = #expect(throws: FeedIngestError.self) {
            try parseSplit(Array(text.utf8), chunkSize: 1024, options: FeedIngestOptions(maxInputBytes: 3000))
        }
        #expect(error?.code == .inputTooLarge)
    }
}
