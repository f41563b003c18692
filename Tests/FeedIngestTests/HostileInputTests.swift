import FeedIngest
import Testing

/// Hostile and wrong input: every case ends with a clear error or a kept, warned result.
struct HostileInputTests {
    @Test func externalEntitiesAreNeverLoaded() throws {
        let feed = try parse(fixture("xxe.xml"))
        // feedparser leaves "&secret; &remote;" in the title as text; they are declared external
        // entities, so we drop them (never loading anything) and say so on the item.
        #expect(
            feed.items == [
                FeedItem(
                    index: 0, id: "xxe-1", title: "Leak: from Example Site",
                    warnings: [
                        FeedWarning(
                            code: "externalEntity", message: "external entity 'secret' was not loaded", line: 11),
                        FeedWarning(
                            code: "externalEntity", message: "external entity 'remote' was not loaded", line: 11),
                    ])
            ])
    }

    @Test func entityBombEndsWithAClearError() {
        #expect {
            _ = try parse(fixture("entity-bomb.xml"), chunkSize: 4096)
        } throws: { error in
            guard let error = error as? FeedIngestError else { return false }
            return error.code == .entityExpansion && error.source == "test.xml" && error.message.contains("entity bomb")
        }
    }

    @Test func htmlPageIsNotAFeed() {
        #expect(throws: FeedIngestError.self) { _ = try parse(fixture("html-page.html")) }
        do {
            _ = try parse(fixture("html-page.html"))
        } catch let error as FeedIngestError {
            #expect(error.code == .notAFeed)
            #expect(error.description.hasPrefix("test.xml:1:1: error [notAFeed]: this is an HTML page"))
        } catch {
            Issue.record("unexpected error \(error)")
        }
    }

    @Test func xhtmlDocumentIsNotAFeed() {
        #expect {
            _ = try parse("<?xml version=\"1.0\"?>\n<html xmlns=\"http://www.w3.org/1999/xhtml\"><body/></html>")
        } throws: { ($0 as? FeedIngestError)?.code == .notAFeed }
    }

    @Test func otherXMLIsUnsupported() {
        #expect {
            _ = try parse("<?xml version=\"1.0\"?><svg xmlns=\"http://www.w3.org/2000/svg\"/>")
        } throws: {
            ($0 as? FeedIngestError)?.code == .unsupportedFormat
                && ($0 as? FeedIngestError)?.message.contains("<svg>") == true
        }
    }

    @Test func emptyInputIsMalformed() {
        #expect {
            _ = try parse("")
        } throws: { ($0 as? FeedIngestError)?.message.contains("the input is empty") == true }
    }

    @Test(arguments: ["   \n", "just some text"])
    func textWithoutMarkupIsNotAFeed(input: String) {
        #expect {
            _ = try parse(input)
        } throws: { ($0 as? FeedIngestError)?.code == .notAFeed }
    }

    @Test func inputSizeLimit() {
        let text =
            "<rss><channel>" + String(repeating: "<item><title>x</title></item>", count: 100) + "</channel></rss>"
        #expect {
            _ = try parse(text, chunkSize: 64, options: FeedIngestOptions(maxInputBytes: 1000))
        } throws: { error in
            guard let error = error as? FeedIngestError else { return false }
            return error.code == .inputTooLarge && error.message.contains("1000 bytes")
        }
    }

    @Test func textNodeOverTenMegabytesIsCappedNotFatal() throws {
        // libxml2 without XML_PARSE_HUGE refuses single text nodes over 10 MB in some paths; the
        // reader must keep the items around it and bound the field's memory.
        let huge = String(repeating: "word ", count: 2_200_000)  // 11 MB
        let text =
            "<rss><channel><item><guid>before</guid></item><item><guid>huge</guid><description>\(huge)</description></item><item><guid>after</guid></item></channel></rss>"
        let options = FeedIngestOptions(maxTextLength: 20, maxFieldBytes: 1 << 20)
        let feed = try parse(Array(text.utf8), chunkSize: 65536, options: options)
        #expect(feed.items.map(\.id) == ["before", "huge", "after"])
        #expect(feed.items[1].text == "word word word word…")
        #expect(feed.items[1].warnings.map(\.code) == ["fieldTruncated"])
    }

    /// 11.7 MB of HTML in one description: in a CDATA section of the input, or escaped (which the sanitizer
    /// hands to libxml2 as CDATA too). The items around it are kept and the field is capped.
    @Test(arguments: ["in CDATA", "escaped"])
    func markupOverTenMegabytesIsCappedNotFatal(written: String) throws {
        let huge =
            written == "escaped"
            ? String(repeating: "&lt;b&gt;x&lt;/b&gt; ", count: 1_300_000)
            : "<![CDATA[" + String(repeating: "<b>x</b> ", count: 1_300_000) + "]]>"
        let text =
            "<rss><channel><item><guid>huge</guid><description>\(huge)</description></item><item><guid>after</guid></item></channel></rss>"
        let feed = try parse(Array(text.utf8), chunkSize: 65536, options: FeedIngestOptions(maxTextLength: 8))
        #expect(feed.items.map(\.id) == ["huge", "after"])
        #expect(feed.items[0].text == "x x x x…")
        #expect(feed.items[0].warnings.map(\.code) == ["fieldTruncated"])
    }

    @Test func attributeValueOverTenMegabytesIsCutNotFatal() throws {
        let huge = String(repeating: "a", count: 11_000_000)
        let text =
            "<rss><channel><item><guid>huge</guid><enclosure url=\"https://x/\(huge).jpg\" type=\"image/jpeg\"/></item><item><guid>after</guid></item></channel></rss>"
        let feed = try parse(Array(text.utf8), chunkSize: 65536)
        #expect(feed.items.map(\.id) == ["huge", "after"])
        // The cut URL is still a candidate (its type says image); what matters is that the tag
        // closes and the next item is read.
        #expect(feed.items[0].images.first?.url.count == (1 << 20))
        #expect(
            feed.items[0].warnings == [
                FeedWarning(
                    code: "attributeTruncated", message: "1 attribute value longer than 1 MiB was cut", line: 1,
                    column: 1_048_630)
            ])
    }

    @Test func deepNestingKeepsTheItems() throws {
        // 5,000 nested elements inside a description: no recursion in the reader, and the item
        // after it is still read.
        let depth = 5000
        let text =
            "<rss><channel><item><guid>deep</guid><description>" + String(repeating: "<div>", count: depth)
            + "x" + String(repeating: "</div>", count: depth)
            + "</description></item><item><guid>next</guid></item></channel></rss>"
        let feed = try parse(text, chunkSize: 4096)
        #expect(feed.items.map(\.id) == ["deep", "next"])
    }

    @Test func readerCannotBeReusedAfterFinish() throws {
        let reader = FeedReader(sourceName: "once.xml", baseURL: nil, feedDirectory: nil)
        let bytes = Array("<rss><channel><item><guid>1</guid></item></channel></rss>".utf8)
        _ = try bytes.withUnsafeBytes { try reader.consume($0) }
        #expect(try reader.finish().isEmpty == false)
        #expect {
            _ = try reader.finish()
        } throws: { ($0 as? FeedIngestError)?.code == .readerFinished }
    }
}

/// More encodings and entity abuse.
struct EncodingAndEntityTests {
    @Test func unknownEncodingLabelIsReadAsUTF8() throws {
        let feed = try parse(
            "<?xml version=\"1.0\" encoding=\"utf8mb4\"?><rss><channel><item><guid>u</guid><title>Ünïcode</title></item></channel></rss>"
        )
        #expect(feed.items == [FeedItem(index: 0, id: "u", title: "Ünïcode")])
        #expect(
            feed.feedWarnings == [
                FeedWarning(code: "unknownEncoding", message: "unknown encoding 'utf8mb4' was read as UTF-8", line: 1)
            ])
    }

    @Test func windows1251IsDecodedByLibxml2() throws {
        // "Фото" in windows-1251.
        var bytes = Array(
            "<?xml version=\"1.0\" encoding=\"windows-1251\"?><rss><channel><item><guid>c</guid><title>".utf8)
        bytes += [0xD4, 0xEE, 0xF2, 0xEE]
        bytes += Array("</title></item></channel></rss>".utf8)
        let feed = try parse(bytes)
        #expect(feed.items == [FeedItem(index: 0, id: "c", title: "Фото")])
    }

    @Test func quadraticEntityBlowupStaysBounded() throws {
        // One 50 kB entity referenced 50,000 times (2.5 GB expanded): libxml2 2.9 does not call
        // this a loop, so the field cap is what bounds memory; the next item is still read.
        let big = String(repeating: "a", count: 50_000)
        let references = String(repeating: "&big;", count: 50_000)
        let text =
            "<?xml version=\"1.0\"?><!DOCTYPE rss [<!ENTITY big \"\(big)\">]><rss><channel><item><guid>q</guid><title>\(references)</title></item><item><guid>after</guid></item></channel></rss>"
        let feed = try parse(Array(text.utf8), chunkSize: 65536, options: FeedIngestOptions(maxTextLength: 10))
        #expect(
            feed.items == [
                FeedItem(
                    index: 0, id: "q", title: "aaaaaaaaa…",
                    warnings: [
                        FeedWarning(
                            code: "fieldTruncated", message: "a text field longer than 1048576 bytes was cut", line: 1)
                    ]),
                FeedItem(index: 1, id: "after"),
            ])
    }
}

struct LibraryDiagnosticsTests {
    @Test func encodingConversionFailureIsAWarningNotStderr() throws {
        // A Shift_JIS feed with an invalid byte pair in its second item: iconv fails there and
        // libxml2 stops. The first item is kept; the failure is a warning (and, through the
        // reader's per-thread error scope, never printed).
        let feed = try parse(fixture("shift-jis-invalid.xml"))
        #expect(feed.items.count == 2)
        #expect(feed.items.first == FeedItem(index: 0, id: "ok", title: "東京"))
        #expect(feed.items.last?.title == nil)
        #expect(feed.items.last?.warnings.map(\.code) == ["encodingError", "unclosedItem"])
        #expect(feed.items.last?.warnings.first?.message.contains("0x82 0x20") == true)
    }

    @Test func readersRunConcurrently() async throws {
        let bytes = fixture("rss2-flickr.xml")
        let expected = try parse(bytes).items
        let results = try await withThrowingTaskGroup(of: [FeedItem].self) { group in
            for chunkSize in 1...8 {
                group.addTask { try parse(bytes, chunkSize: chunkSize * 97).items }
            }
            var all: [[FeedItem]] = []
            for try await items in group { all.append(items) }
            return all
        }
        #expect(results.count == 8)
        for items in results { #expect(items == expected) }
    }
}
