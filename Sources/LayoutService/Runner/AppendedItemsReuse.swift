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
/// from the last one's cursor; the run checks, as it reads the feed, that the items before the cursor are the ones
/// it was made from.
///
/// Not taken (the layout is computed from scratch, which gives the same bytes, only slower): a predecessor not
/// `done`, truncated by `--max-items` or holding as many items as it allows, with breakpoints, with one page, with
/// pages stored before the store kept each page's counts, or whose cursor this service's fonts and options refuse.
enum AppendedItemsReuse {
    /// Makes `record`'s layout begin with its predecessor's pages when they are its own.
    /// - Returns: The layout as stored after taking them, or `nil` when they were not taken.
    static func adopt(
        _ record: LayoutRecord, feed: [UInt8], predecessor: String, pipeline: LayoutPipeline,
        store: any LayoutStore, maximumItems: Int?, logger: Logger
    ) async throws -> LayoutRecord? {
        guard record.parts.count == 1, record.parts[0].pageCount == 0, predecessor != record.id else { return nil }
        func skip(_ reason: String) -> LayoutRecord? {
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
        guard let oldFeed = try? await store.feed(of: predecessor), FeedAppend.isAppend(old: oldFeed, new: feed) else {
            return skip("not the predecessor's feed with items appended")
        }
        guard let cursor = try await lastCursor(of: predecessor, pageIndex: pageCount - 1, store: store),
            pipeline.accepts(cursor: cursor)
        else { return skip("the predecessor's cursor does not fit this service's options and fonts") }
        guard try await store.adoptPages(from: predecessor, pageCount: pageCount, into: record.id),
            let adopted = try await store.layout(record.id), adopted.parts.first?.lastCursor == cursor
        else { return skip("the predecessor's pages are not all in the store") }
        logger.info(
            "a new version took its predecessor's pages",
            metadata: [
                "layout": "\(record.id)", "predecessor": "\(predecessor)", "pages": "\(pageCount)",
                "items": "\(adopted.itemCount)",
            ])
        return adopted
    }

    /// The `cursor` of a stored page (read from its bytes: one page).
    private static func lastCursor(of id: String, pageIndex: Int, store: any LayoutStore) async throws -> String? {
        guard let page = try? await store.page(id, layoutIndex: 0, pageIndex: pageIndex, gzip: false),
            let object = try? JSONSerialization.jsonObject(with: page) as? [String: Any]
        else { return nil }
        return object["cursor"] as? String
    }
}
