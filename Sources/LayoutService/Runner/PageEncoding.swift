import FeedIngest
import FeedLayout
import Foundation
import LayoutStore
import TextMeasure
import WaterfallLayout

/// A page as the service stores and serves it: the bytes `feedlayout layout` writes for it (compact JSON and a
/// newline), their gzip form, and each pin's place, with where its JSON sits in the page's bytes (viewport
/// queries answer with those slices, so no pin is written twice).
enum PageEncoding {
    static func write(for page: LayoutPage) -> PageWrite {
        var json = JSONWriter(indentWidth: 0, reservingCapacity: 1 << 16)
        Records.write(page, into: &json)
        json.appendRaw("\n")
        let bytes = json.takeBytes()
        let ranges = itemRanges(in: bytes)
        precondition(ranges.count == page.items.count, "the page's items array holds \(ranges.count) of \(page.items.count) items")
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
            layoutIndex: page.layoutIndex, pageIndex: page.index, json: bytes, gzip: Gzip.compress(bytes),
            cursor: page.cursor, contentHeight: Double(page.contentHeight) / page.grid.scale, pins: pins,
            itemCount: page.layoutIndex == 0 ? page.items.count : 0, warnings: warnings)
    }

    /// The byte ranges of the elements of a compact page's top-level `items` array, in order.
    ///
    /// The page is JSON the service wrote itself, so a small scanner does: it finds the `"items":[` key (a key can
    /// only appear unescaped outside strings, and the page format has one `items`) and splits the array at the
    /// commas of depth one, skipping strings with their escapes.
    static func itemRanges(in bytes: [UInt8]) -> [Range<Int>] {
        let key = Array(#""items":["#.utf8)
        guard let start = firstIndex(of: key, in: bytes) else { return [] }
        var ranges: [Range<Int>] = []
        var position = start + key.count
        var depth = 0
        var elementStart = position
        var inString = false
        while position < bytes.count {
            let byte = bytes[position]
            if inString {
                if byte == UInt8(ascii: "\\") {
                    position += 1
                } else if byte == UInt8(ascii: "\"") {
                    inString = false
                }
            } else {
                switch byte {
                case UInt8(ascii: "\""): inString = true
                case UInt8(ascii: "{"), UInt8(ascii: "["): depth += 1
                case UInt8(ascii: "}"):
                    depth -= 1
                case UInt8(ascii: "]"):
                    if depth == 0 {
                        if position > elementStart { ranges.append(elementStart..<position) }
                        return ranges
                    }
                    depth -= 1
                case UInt8(ascii: ","):
                    if depth == 0 {
                        ranges.append(elementStart..<position)
                        elementStart = position + 1
                    }
                default: break
                }
            }
            position += 1
        }
        return ranges
    }

    private static func firstIndex(of needle: [UInt8], in haystack: [UInt8]) -> Int? {
        guard haystack.count >= needle.count else { return nil }
        var index = 0
        while index <= haystack.count - needle.count {
            if haystack[index] == needle[0], haystack[index..<(index + needle.count)].elementsEqual(needle) {
                return index
            }
            index += 1
        }
        return nil
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
