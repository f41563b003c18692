import FeedIngest
import ImageProbe
import TextMeasure
import WaterfallLayout

/// The JSON records of DESIGN.md's CLI contract, written with ``JSONWriter``.
///
/// Field names are camelCase and appear in a fixed order; lengths in pages are CSS pixels (device pixels divided
/// by the scale).
public enum Records {
    /// The schema name every page carries; it changes only with an incompatible change of the page format.
    public static let pageSchema = "feedlayout.page/1"

    /// A layout page.
    ///
    /// - Parameter feed: The feed the page belongs to, written as `feed` when one run lays out several feeds.
    public static func write(_ page: LayoutPage, feed: String? = nil, into json: inout JSONWriter) {
        var itemRanges: [Range<Int>] = []
        write(page, feed: feed, into: &json, itemRanges: &itemRanges)
    }

    /// A layout page, and where each of its items' JSON sits in the writer's bytes (appended to `itemRanges`, in
    /// order): the service answers viewport queries with those slices. The ranges are exact for a one-line writer
    /// (an indented one puts a line break before each item).
    public static func write(
        _ page: LayoutPage, feed: String? = nil, into json: inout JSONWriter, itemRanges: inout [Range<Int>]
    ) {
        let grid = page.grid
        let scale = grid.scale
        json.beginObject()
        json.field("schema", pageSchema)
        if let feed { json.field("feed", feed) }
        json.key("page")
        json.beginObject()
        json.field("index", page.index)
        json.field("itemCount", page.items.count)
        json.field("firstItem", page.items.first?.index)
        json.field("lastItem", page.items.last?.index)
        // On the scroll axis: y, or x on the horizontal axis.
        let horizontal = grid.axis == .horizontal
        let first = page.items.first?.placed.frame
        json.field("top", Double((horizontal ? first?.x : first?.y) ?? 0) / scale)
        json.field(
            "bottom",
            Double(page.items.map { horizontal ? $0.placed.frame.maxX : $0.placed.frame.maxY }.max() ?? 0) / scale)
        json.endObject()
        json.key("layout")
        writeGrid(grid, flow: page.flowGrid, fonts: page.fonts, into: &json)
        if !page.sections.isEmpty {
            json.key("sections")
            json.beginArray()
            for event in page.sections { write(event, scale: scale, into: &json) }
            json.endArray()
        }
        json.key("items")
        json.beginArray()
        itemRanges.reserveCapacity(itemRanges.count + page.items.count)
        // Read where they are: `for item in page.items` copied each item (its strings and arrays retained).
        page.items.withUnsafeBufferPointer { items in
            for position in items.indices {
                // After the comma that separates it from the item before.
                let start = json.position + (position > 0 ? 1 : 0)
                write(items, position, scale: scale, into: &json)
                itemRanges.append(start..<json.position)
            }
        }
        json.endArray()
        json.key("columnHeights")
        json.beginArray()
        for height in page.columnHeights { json.number(Double(height) / scale) }
        json.endArray()
        json.field("contentHeight", Double(page.contentHeight) / scale)
        json.key("quality")
        write(page.quality, totals: page.totals, scale: scale, into: &json)
        json.field("cursor", page.cursor)
        json.endObject()
    }

    /// The record a batch run writes in place of a feed's pages when the feed cannot be laid out at all.
    public static func writeFeedError(feed: String, error: LayoutError, into json: inout JSONWriter) {
        json.beginObject()
        json.field("feed", feed)
        json.key("error")
        json.beginObject()
        json.field("code", "\(error.code)")
        json.field("message", error.message)
        json.endObject()
        json.endObject()
    }

    private static func write(
        _ quality: LayoutQuality, totals: LayoutQualityTotals, scale: Double, into json: inout JSONWriter
    ) {
        json.beginObject()
        json.field("columnImbalance", Double(quality.columnImbalance) / scale)
        json.field("whitespaceArea", Double(quality.whitespaceArea) / (scale * scale))
        json.field("orderInversions", quality.orderInversions)
        json.field("largestDisplacement", quality.largestDisplacement)
        json.key("soFar")
        json.beginObject()
        json.field("orderInversions", totals.orderInversions)
        json.field("largestDisplacement", totals.largestDisplacement)
        json.endObject()
        json.endObject()
    }

    /// A section event: `start` with the feed's key and the header band; `end` with every frame of the section.
    private static func write(_ event: SectionEvent, scale: Double, into json: inout JSONWriter) {
        json.beginObject()
        switch event {
        case .start(let index, let key, let header, let start):
            json.field("event", "start")
            json.field("index", index)
            json.field("key", key)
            json.field("start", Double(start) / scale)
            writeOptional(header, "header", scale: scale, into: &json)
        case .end(let frames):
            json.field("event", "end")
            json.field("index", frames.index)
            json.field("firstItem", frames.items.isEmpty ? nil : frames.items.lowerBound)
            json.field("lastItem", frames.items.isEmpty ? nil : frames.items.upperBound - 1)
            json.field("start", Double(frames.start) / scale)
            json.field("end", Double(frames.end) / scale)
            writeOptional(frames.header, "header", scale: scale, into: &json)
            writeOptional(frames.footer, "footer", scale: scale, into: &json)
            writeOptional(frames.decoration, "decoration", scale: scale, into: &json)
        }
        json.endObject()
    }

    private static func writeOptional(_ rect: DeviceRect?, _ name: StaticString, scale: Double, into json: inout JSONWriter) {
        json.key(name)
        if let rect { write(rect, scale: scale, into: &json) } else { json.null() }
    }

    private static func writeGrid(_ grid: WaterfallGrid, flow: FlowGrid?, fonts: LayoutFonts, into json: inout JSONWriter) {
        let scale = grid.scale
        json.beginObject()
        // The mode and axis only when they are not the default waterfall, so existing pages stay as they were.
        if let flow {
            json.field("mode", "flow")
            json.field("width", Double(flow.containerWidth) / scale)
            json.field("rowPhotoHeight", Double(flow.photoHeight) / scale)
            json.field("alignment", flow.alignment.rawValue)
            json.field("follow", flow.follow)
            json.field("itemGap", Double(flow.itemGap) / scale)
            json.field("scale", scale)
            write(fonts, into: &json)
            json.endObject()
            return
        }
        if grid.axis == .horizontal {
            json.field("axis", "horizontal")
            json.field("height", Double(grid.containerHeight ?? 0) / scale)
        }
        json.field("width", Double(grid.containerWidth) / scale)
        json.field("columns", grid.columnCount)
        json.field("columnWidth", Double(grid.columnWidth) / scale)
        json.field("contentWidth", Double(grid.contentWidth) / scale)
        json.field("scale", scale)
        json.field("direction", grid.direction.rawValue)
        json.field("placement", grid.placement.rawValue)
        write(fonts, into: &json)
        json.endObject()
    }

    /// `fonts`: the title's and the caption's font files, each list in the order a character looks for its glyph.
    private static func write(_ fonts: LayoutFonts, into json: inout JSONWriter) {
        json.key("fonts")
        json.beginObject()
        write(fonts.title, as: "title", into: &json)
        write(fonts.caption, as: "caption", into: &json)
        json.endObject()
    }

    private static func write(_ faces: [FontFace], as block: StaticString, into json: inout JSONWriter) {
        json.key(block)
        json.beginArray()
        for face in faces {
            json.beginObject()
            json.field("family", face.family)
            json.field("style", face.style)
            json.field("file", face.fileName)
            json.field("faceIndex", face.faceIndex)
            json.field("digest", face.digest)
            json.endObject()
        }
        json.endArray()
    }

    /// A page's item `position`, read where it is.
    private static func write(
        _ items: UnsafeBufferPointer<LaidOutItem>, _ position: Int, scale: Double, into json: inout JSONWriter
    ) {
        let placed = items[position].placed
        json.beginObject()
        json.field("index", items[position].index)
        json.field("id", items[position].id)
        json.field("key", ItemKey.key(forID: items[position].id))
        json.field("link", items[position].link)
        json.field("column", placed.column)
        json.field("columnSpan", placed.columnSpan)
        if let section = items[position].section { json.field("section", section) }
        json.key("frame")
        write(placed.frame, scale: scale, into: &json)
        json.key("photo")
        json.beginObject()
        json.key("frame")
        write(placed.photoFrame, scale: scale, into: &json)
        json.key("slot")
        write(placed.photoSlot, scale: scale, into: &json)
        json.field("url", items[position].photo.url)
        json.field("width", items[position].photo.size.width)
        json.field("height", items[position].photo.size.height)
        json.field("sizeFrom", items[position].photo.sizeSource.rawValue)
        if let info = items[position].photo.info {
            json.field("format", info.format.rawValue)
            json.field("orientation", info.orientation)
        }
        if let placeholder = items[position].photo.placeholder {
            json.key("placeholder")
            writePlaceholder(placeholder, into: &json)
        }
        if let alt = items[position].photo.alt { json.field("alt", alt) }
        json.endObject()
        json.key("annotation")
        json.beginObject()
        json.key("frame")
        write(placed.annotationFrame, scale: scale, into: &json)
        // Two calls, not a loop over an array of the two: that array was built, copied into and freed per item.
        writeBlock(items[position].title, as: "title", scale: scale, into: &json)
        writeBlock(items[position].text, as: "text", scale: scale, into: &json)
        json.endObject()
        json.key("warnings")
        write(items[position].warnings, into: &json)
        json.endObject()
    }

    private static func writeBlock(
        _ block: MeasuredText?, as name: StaticString, scale: Double, into json: inout JSONWriter
    ) {
        json.key(name)
        guard let block else {
            json.null()
            return
        }
        json.beginObject()
        json.key("frame")
        write(block.frame, scale: scale, into: &json)
        json.field("text", block.text)
        json.field("lines", block.measurement.lines)
        json.field("truncated", block.measurement.truncated)
        json.endObject()
    }

    private static func write(_ rect: DeviceRect, scale: Double, into json: inout JSONWriter) {
        json.beginObject()
        json.field("x", Double(rect.x) / scale)
        json.field("y", Double(rect.y) / scale)
        json.field("width", Double(rect.width) / scale)
        json.field("height", Double(rect.height) / scale)
        json.endObject()
    }

    static func write(_ warnings: [FeedWarning], into json: inout JSONWriter) {
        json.beginArray()
        for warning in warnings {
            json.beginObject()
            json.field("code", warning.code)
            json.field("message", warning.message)
            if let line = warning.line { json.field("line", line) }
            if let column = warning.column { json.field("column", column) }
            json.endObject()
        }
        json.endArray()
    }
}
