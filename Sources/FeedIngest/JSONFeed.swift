/// Decodes a JSON Feed (1.0 / 1.1, https://jsonfeed.org/version/1.1) into items.
///
/// JSON is not streamed: the whole document is held (bounded by `maxInputBytes`) and decoded
/// when the reader finishes. Fields map as feedparser maps them: `id`, `url` (link), `title`,
/// `summary` else `content_text` else `content_html` (caption), `date_published` (else
/// `date_modified`), `authors[0].name` (else 1.0's `author.name`), and `image` /
/// `banner_image` / image `attachments` as images.
struct JSONFeedDecoder {
    unowned let reader: FeedReader

    func decode(_ bytes: [UInt8]) throws(FeedIngestError) -> [FeedItem] {
        let document: JSONValue
        do {
            document = try JSONValue.parse(bytes)
        } catch {
            throw FeedIngestError(
                code: .invalidJSON,
                message:
                    "the input starts with '{' but is not valid JSON (\(error.reason) at byte offset \(error.offset)); JSON Feeds must be valid JSON",
                source: reader.sourceName)
        }
        guard let items = document["items"]?.arrayValue else {
            throw FeedIngestError(
                code: .unsupportedFormat, message: "this JSON has no \"items\" array; it is not a JSON Feed",
                source: reader.sourceName)
        }
        reader.setJSONFeedTitle(document["title"]?.stringValue)
        let feedURL = document["feed_url"]?.stringValue ?? document["home_page_url"]?.stringValue
        var result: [FeedItem] = []
        for entry in items {
            guard case .object = entry else { continue }
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
            builder.base = feedURL.flatMap { URLResolver.isHTTP($0) ? $0 : nil }
            for key in ["image", "banner_image"] {
                if let url = entry[key]?.stringValue {
                    builder.images.append(RawImage(origin: "json:" + key, url: url, base: builder.base, line: nil))
                }
            }
            for attachment in entry["attachments"]?.arrayValue ?? [] {
                guard let url = attachment["url"]?.stringValue else { continue }
                builder.images.append(
                    RawImage(
                        origin: "enclosure", url: url, type: attachment["mime_type"]?.stringValue, base: builder.base,
                        line: nil))
            }
            result.append(reader.finisher.finish(builder, index: result.count))
        }
        return result
    }
}

extension FeedReader {
    func setJSONFeedTitle(_ title: String?) {
        guard let title else { return }
        let collapsed = HTMLTextConverter.collapseWhitespace(Array(title.utf8))
        feedTitle = collapsed.isEmpty ? nil : collapsed
    }
}
