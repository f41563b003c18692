import ByteTools
/// Decodes a JSON Feed (1.0 / 1.1, https://jsonfeed.org/version/1.1) into items, entry by entry as
/// its bytes arrive (see ``JSONFeedSplitter``): memory holds one entry, not the document.
///
/// Fields map as feedparser maps them: `id`, `url` (link), `title`, `summary` else `content_text`
/// else `content_html` (caption), `date_published` (else `date_modified`), `authors[0].name` (else
/// 1.0's `author.name`), and `image` / `banner_image` / image `attachments` as images. Relative
/// references resolve against the top-level `feed_url`, else `home_page_url` (the first of each
/// counts). Feeds write those before `items`; an entry with a relative reference that comes before
/// them waits, with every entry after it, until they are known or the document ends.
///
/// Entries before a syntax error are handed out; the error then ends the feed.
struct JSONFeedDecoder {
    unowned let reader: FeedReader
    private var splitter = JSONFeedSplitter()
    private var itemsArraySeen = false
    private var titleSeen = false
    /// The first `feed_url` and `home_page_url` members, once seen (nil until then; a value that is no
    /// string is kept too, as it still settles which member counts).
    private var feedURL: JSONValue?
    private var homePageURL: JSONValue?
    /// Entries waiting for the base to be known, in order.
    private var waiting: [JSONValue] = []
    private var nextIndex = 0

    init(reader: FeedReader) {
        self.reader = reader
    }

    /// The items the next bytes complete.
    mutating func consume(_ bytes: UnsafeBufferPointer<UInt8>) throws(FeedIngestError) -> [FeedItem] {
        let pieces: [JSONFeedSplitter.Piece]
        do { pieces = try splitter.consume(bytes) } catch { throw invalid(error) }
        return handle(pieces)
    }

    /// The last items; throws when the document is cut off, invalid, or not a JSON Feed.
    mutating func finish() throws(FeedIngestError) -> [FeedItem] {
        let pieces: [JSONFeedSplitter.Piece]
        do { pieces = try splitter.finish() } catch { throw invalid(error) }
        var items = handle(pieces)
        guard itemsArraySeen else {
            throw FeedIngestError(
                code: .unsupportedFormat, message: "this JSON has no \"items\" array; it is not a JSON Feed",
                source: reader.sourceName)
        }
        // The document is complete: whatever base there is, is known.
        let base = resolvedBase
        items += waiting.map { item(from: $0, base: base) }
        waiting = []
        return items
    }

    private func invalid(_ error: JSONValue.SyntaxError) -> FeedIngestError {
        FeedIngestError(
            code: .invalidJSON,
            message:
                "the input starts with '{' but is not valid JSON (\(error.reason) at byte offset \(error.offset)); JSON Feeds must be valid JSON",
            source: reader.sourceName)
    }

    private mutating func handle(_ pieces: [JSONFeedSplitter.Piece]) -> [FeedItem] {
        var items: [FeedItem] = []
        for piece in pieces {
            switch piece {
            case .itemsArray:
                itemsArraySeen = true
            case .member(let key, let value):
                remember(key: key, value: value)
            case .item(let entry):
                guard case .object = entry else { continue }
                if waiting.isEmpty && (baseIsKnown || !hasRelativeReference(entry)) {
                    items.append(item(from: entry, base: resolvedBase))
                } else {
                    waiting.append(entry)
                }
            }
        }
        if !waiting.isEmpty && baseIsKnown {
            let base = resolvedBase
            items += waiting.map { item(from: $0, base: base) }
            waiting = []
        }
        return items
    }

    private mutating func remember(key: String, value: JSONValue) {
        switch key {
        case "title" where !titleSeen:
            titleSeen = true
            reader.setJSONFeedTitle(value.stringValue)
        case "feed_url" where feedURL == nil: feedURL = value
        case "home_page_url" where homePageURL == nil: homePageURL = value
        default: break
        }
    }

    /// Whether no later member can change the base: a string `feed_url` settles it, and so does a
    /// `home_page_url` once a `feed_url` that is no string has been seen.
    private var baseIsKnown: Bool {
        guard let feedURL else { return false }
        return feedURL.stringValue != nil || homePageURL != nil
    }

    /// The base of relative references: `feed_url`, else `home_page_url`, when it is an http(s) URL.
    private var resolvedBase: String? {
        let text = feedURL?.stringValue ?? homePageURL?.stringValue
        return text.flatMap { URLResolver.isHTTP($0) ? $0 : nil }
    }

    /// Whether the base could change the entry's record: a reference with no scheme, in its fields or
    /// among the `<img>` of its `content_html` (read only while the base is unknown, so that most feeds,
    /// which give `feed_url` first, never pay for it).
    private func hasRelativeReference(_ entry: JSONValue) -> Bool {
        let references =
            [entry["url"], entry["image"], entry["banner_image"]]
            + (entry["attachments"]?.arrayValue ?? []).map { $0["url"] }
        let isRelative = { (text: String) in URLResolver.schemeLength(of: text) == nil }
        if references.contains(where: { $0?.stringValue.map(isRelative) ?? false }) { return true }
        guard let html = entry["content_html"]?.stringValue else { return false }
        return reader.converter.convert(Array(html.utf8), collectImages: true).images.contains { isRelative($0.source) }
    }

    private mutating func item(from entry: JSONValue, base: String?) -> FeedItem {
        var builder = ItemBuilder()
        func set(_ field: ItemField, _ key: String, _ kind: TextKind) {
            if let value = entry[key]?.stringValue { builder.set(field, Array(value.utf8), kind: kind) }
        }
        set(.guid, "id", .plain)
        set(.link, "url", .plain)
        set(.title, "title", .plain)
        set(.description, "summary", .plain)
        set(.summary, "content_text", .plain)
        set(.contentEncoded, "content_html", .html)
        set(.published, "date_published", .plain)
        set(.updated, "date_modified", .plain)
        let authors = entry["authors"]?.arrayValue ?? entry["author"].map { [$0] } ?? []
        if let name = authors.lazy.compactMap({ $0["name"]?.stringValue }).first {
            builder.set(.author, Array(name.utf8), kind: .plain)
        }
        if let layout = entry["_feedlayout"] {
            // The span is a number or "full"; `stringValue` reads both.
            if let span = layout["span"]?.stringValue {
                builder.set(.layoutSpan, Array(span.utf8), kind: .plain)
            }
            if let section = layout["section"]?.stringValue {
                builder.set(.layoutSection, Array(section.utf8), kind: .plain)
            }
        }
        builder.base = base
        for key in ["image", "banner_image"] {
            if let url = entry[key]?.stringValue {
                builder.images.append(RawImage(origin: "json:" + key, url: url, base: builder.base, line: nil))
            }
        }
        for attachment in entry["attachments"]?.arrayValue ?? [] {
            guard let url = attachment["url"]?.stringValue else { continue }
            var image = RawImage(
                origin: "enclosure", url: url, type: attachment["mime_type"]?.stringValue, base: builder.base,
                line: nil)
            image.alt = attachment["title"]?.stringValue
            builder.images.append(image)
        }
        defer { nextIndex += 1 }
        return reader.finisher.finish(builder, index: nextIndex)
    }
}

extension FeedReader {
    func setJSONFeedTitle(_ title: String?) {
        guard let title else { return }
        let collapsed = HTMLTextConverter.collapseWhitespace(Array(title.utf8))
        feedTitle = collapsed.isEmpty ? nil : collapsed
    }
}
