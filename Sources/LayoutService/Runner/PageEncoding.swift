import FeedIngest
import FeedLayout
import Foundation
import LayoutStore
import TextMeasure
import WaterfallLayout

/// A page as the service stores and serves it: the bytes `feedlayout layout` writes for it (compact JSON and a
/// newline), their gzip form, and each pin's place, with where its JSON sits in the page's bytes (viewport
/// queries answer with those slices, so no pin is written twice; the writer says where each item went, where
/// a scan of the written page for them was a percent of the service's CPU).
enum PageEncoding {
    /// The page's bytes, pins and counts; its gzip form is left empty for ``compress(_:)``, which the run's page
    /// storing task calls: compressed there, beside the run rather than in it (the run's write stage of a 5,020-item
    /// layout whose photos were all cached went from 91 ms to 28-48 ms).
    static func write(for page: LayoutPage) -> PageWrite {
        // One line: each item's range, taken as it is written, is exactly its JSON.
        var json = JSONWriter(indentWidth: 0, reservingCapacity: 1 << 16)
        var ranges: [Range<Int>] = []
        Records.write(page, into: &json, itemRanges: &ranges)
        json.appendRaw("\n")
        let bytes = json.takeBytes()
        var pins: [PinRecord] = []
        pins.reserveCapacity(page.items.count)
        var warnings: [String: Int] = [:]
        for (item, range) in zip(page.items, ranges) {
            let frame = item.placed.frame
            pins.append(
                PinRecord(
                    itemIndex: item.index, column: item.placed.column, columnSpan: item.placed.columnSpan,
                    x: frame.x, y: frame.y, width: frame.width, height: frame.height, pageIndex: page.index,
                    jsonOffset: range.lowerBound, jsonLength: range.count))
            if page.layoutIndex == 0 {
                for warning in item.warnings { warnings[warning.code, default: 0] += 1 }
            }
        }
        return PageWrite(
            layoutIndex: page.layoutIndex, pageIndex: page.index, json: bytes, gzip: [],
            cursor: page.cursor, contentHeight: Double(page.contentHeight) / page.grid.scale, pins: pins,
            itemCount: page.layoutIndex == 0 ? page.items.count : 0, warnings: warnings)
    }

    /// The pages with their gzip form, as they are stored and served.
    static func compress(_ writes: [PageWrite]) -> [PageWrite] {
        writes.map { write in
            var write = write
            if write.gzip.isEmpty { write.gzip = Gzip.compress(write.json) }
            return write
        }
    }

    /// Whether an `If-None-Match` list names this tag (or is `*`): for pages and for the client's files alike.
    static func ifNoneMatch(_ header: String, names tag: String) -> Bool {
        header.split(separator: ",").contains { candidate in
            let candidate = candidate.trimmingCharacters(in: .whitespaces)
            return candidate == "*" || candidate == tag || candidate == "W/" + tag
        }
    }

    /// A page form's strong entity tag. The layout id digests everything that decides a page's bytes, and a page
    /// never changes once stored, so the id and the page's place name its bytes; the gzipped form is a different
    /// representation and gets its own tag.
    static func entityTag(id: String, layoutIndex: Int, pageIndex: Int, gzip: Bool) -> String {
        "\"\(id)-\(layoutIndex)-\(pageIndex)\(gzip ? ".gz" : "")\""
    }
}
