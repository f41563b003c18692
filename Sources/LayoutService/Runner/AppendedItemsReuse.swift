import FeedIngest
import FeedLayout
import Foundation
import LayoutStore
import Logging

/// A new version of a feed whose items were appended takes its predecessor's pages (issue 37, "a new version costs
/// only what changed").
///
/// When the new feed is the predecessor's feed with whole items added after its last item and every other byte the
/// same (``FeedAppend``), with the same options (one layout: no breakpoints), name and base, the pages a layout of
/// the new feed makes before it reaches the predecessor's last page are the predecessor's pages byte for byte: the
/// engine places items in feed order and cuts a page only once the next batch is placed, so a page that has a
/// cursor depends on nothing after it. (The last page, with no cursor, is cut by the feed's end, and a flow row or
/// section still open there may take the new items: it is never taken.) The new layout takes pages
/// `0..<pageCount-1` as its own in one transaction (``LayoutStore/adoptPages(from:pageCount:into:)``) and resumes
/// from the last one's cursor.
///
/// The resumed run reads only what follows the cursor's item when it can (``Adoption/resumedFeed``): the feed's head
/// and its bytes from that item's line on (``FeedByteSplitter/resumedFeed(_:atItemStart:knownLines:)``), the items before it
/// taken as the cursor's since their bytes are the predecessor's. It can when the feed is XML with only whitespace
/// among its items (``FeedAppend/Match/oldItemStarts``) and the item begins its line. Otherwise it reads the whole
/// feed and checks, as it reads it, that the items before the cursor are the ones it was made from.
///
/// Not taken (the layout is computed from scratch, which gives the same bytes, only slower): a predecessor not
/// `done`, truncated by `--max-items` or holding as many items as it allows, with breakpoints, with one page, with
/// pages stored before the store kept each page's counts, or whose cursor this service's fonts and options refuse.
enum AppendedItemsReuse {
    /// A layout that took its predecessor's pages.
    struct Adoption {
        /// The layout as stored after taking them.
        var record: LayoutRecord
        /// The feed to resume from the record's last cursor, when it can be read from the cursor's item on; `nil`:
        /// the whole feed.
        var resumedFeed: FeedInput?
    }

    /// Makes `record`'s layout begin with its predecessor's pages when they are its own.
    /// - Parameter match: How `feed` extends the predecessor's feed, when the caller has found it (the refresher
    ///   does, to count what changed); else it is found here, from the predecessor's stored feed.
    /// - Returns: The adoption, or `nil` when the pages were not taken.
    static func adopt(
        _ record: LayoutRecord, feed: [UInt8], predecessor: String, match known: FeedAppend.Match?,
        pipeline: LayoutPipeline, store: any LayoutStore, maximumItems: Int?, logger: Logger
    ) async throws -> Adoption? {
        guard record.parts.count == 1, record.parts[0].pageCount == 0, predecessor != record.id else { return nil }
        let timer = ContinuousClock()
        let started = timer.now
        func skip(_ reason: String) -> Adoption? {
            logger.info(
                "a new version laid out from scratch",
                metadata: ["layout": "\(record.id)", "predecessor": "\(predecessor)", "reason": "\(reason)"])
            return nil
        }
        guard let old = try? await store.layout(predecessor) else { return skip("the predecessor is gone") }
        guard old.status == "done" else { return skip("the predecessor is \(old.status)") }
        guard old.options == record.options, old.feedName == record.feedName, old.baseURL == record.baseURL,
            old.parts.count == 1, old.parts[0].width == record.parts[0].width,
            old.parts[0].columns == record.parts[0].columns
        else { return skip("other options, feed name or base") }
        guard old.warnings[ItemLimit.warningCode] == nil, maximumItems.map({ old.itemCount < $0 }) ?? true else {
            return skip("the predecessor reached --max-items")
        }
        let pageCount = old.parts[0].pageCount - 1
        guard pageCount > 0 else { return skip("the predecessor has one page") }
        var match = known
        if match == nil, let oldFeed = try? await store.feed(of: predecessor) {
            match = FeedAppend.match(old: oldFeed, new: feed)
        }
        guard let match else { return skip("not the predecessor's feed with items appended") }
        guard let cursor = try await lastCursor(of: predecessor, pageIndex: pageCount - 1, store: store),
            let resumeIndex = pipeline.resumeIndex(ofCursor: cursor)
        else { return skip("the predecessor's cursor does not fit this service's options and fonts") }
        guard try await store.adoptPages(from: predecessor, pageCount: pageCount, into: record.id),
            let adopted = try await store.layout(record.id), adopted.parts.first?.lastCursor == cursor
        else { return skip("the predecessor's pages are not all in the store") }
        let resumedFeed = resumed(feed, at: resumeIndex, match: match, record: record)
        logger.info(
            "a new version took its predecessor's pages",
            metadata: [
                "layout": "\(record.id)", "predecessor": "\(predecessor)", "pages": "\(pageCount)",
                "items": "\(adopted.itemCount)", "reads": "\(resumedFeed == nil ? "the whole feed" : "from the cursor")",
                "ms": "\(Int(((timer.now - started) / .milliseconds(1)).rounded()))",
            ])
        return Adoption(record: adopted, resumedFeed: resumedFeed)
    }

    /// The feed read from item `index` on, when it can be (see the type's comment).
    private static func resumed(
        _ feed: [UInt8], at index: Int, match: FeedAppend.Match, record: LayoutRecord
    ) -> FeedInput? {
        // The whole feed would fail on the reader's input limit: so must the resumed one.
        guard index > 0, let starts = match.oldItemStarts,
            let start = index < starts.count ? starts[index] : index == starts.count ? match.firstAppendedStart : nil,
            feed.count <= FeedIngestOptions().maxInputBytes,
            let bytes = FeedByteSplitter.resumedFeed(feed, atItemStart: start, knownLines: match.knownLines)
        else { return nil }
        return .resumed(bytes, firstItem: index, name: record.feedName, baseURL: record.baseURL)
    }

    /// The `cursor` of a stored page (read from its bytes: one page).
    private static func lastCursor(of id: String, pageIndex: Int, store: any LayoutStore) async throws -> String? {
        guard let page = try? await store.page(id, layoutIndex: 0, pageIndex: pageIndex, gzip: false),
            let object = try? JSONSerialization.jsonObject(with: page) as? [String: Any]
        else { return nil }
        return object["cursor"] as? String
    }
}
