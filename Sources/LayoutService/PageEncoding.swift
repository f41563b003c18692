import FeedIngest
import FeedLayout
import TextMeasure
import WaterfallLayout

/// A page as the service stores and serves it: the bytes `feedlayout layout` writes for it (compact JSON and a
/// newline), their gzip form, an entity tag, and each pin's place and JSON for viewport queries.
enum PageEncoding {
    static func write(for page: LayoutPage) -> LayoutStore.PageWrite {
        var json = JSONWriter(indentWidth: 0, reservingCapacity: 1 << 16)
        Records.write(page, into: &json)
        json.appendRaw("\n")
        let bytes = json.takeBytes()
        let scale = page.grid.scale
        var pins: [(LayoutStore.PinRecord, [UInt8])] = []
        pins.reserveCapacity(page.items.count)
        var warnings: [String: Int] = [:]
        for item in page.items {
            var pin = JSONWriter(indentWidth: 0, reservingCapacity: 1024)
            Records.write(item, scale: scale, into: &pin)
            let frame = item.placed.frame
            pins.append(
                (
                    LayoutStore.PinRecord(
                        itemIndex: item.index, column: item.placed.column, columnSpan: item.placed.columnSpan,
                        x: frame.x, y: frame.y, width: frame.width, height: frame.height), pin.takeBytes()
                ))
            if page.layoutIndex == 0 {
                for warning in item.warnings { warnings[warning.code, default: 0] += 1 }
            }
        }
        return LayoutStore.PageWrite(
            layoutIndex: page.layoutIndex, pageIndex: page.index,
            page: LayoutStore.StoredPage(json: bytes, gzip: Gzip.compress(bytes), entityTag: entityTag(of: bytes)),
            cursor: page.cursor, contentHeight: Double(page.contentHeight) / scale, pins: pins,
            itemCount: page.layoutIndex == 0 ? page.items.count : 0, warnings: warnings)
    }

    /// A strong entity tag for a page: the start of its SHA-256, quoted. The gzipped form's tag adds `.gz`, as the
    /// two are different representations.
    static func entityTag(of bytes: [UInt8]) -> String {
        "\"" + SHA256.hexDigest(bytes).prefix(24) + "\""
    }
}
