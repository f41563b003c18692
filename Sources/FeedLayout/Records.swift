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
            "bottom", Double(page.items.map { horizontal ? $0.placed.frame.maxX : $0.placed.frame.maxY }.max() ?? 0) / scale)
        json.endObject()
        json.key("layout")
        writeGrid(grid, flow: page.flowGrid, into: &json)
        if !page.sections.isEmpty {
            json.key("sections")
            json.beginArray()
            for event in page.sections { write(event, scale: scale, into: &json) }
            json.endArray()
        }
        json.key("items")
        json.beginArray()
        for item in page.items { write(item, scale: scale, into: &json) }
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

    private static func writeOptional(_ rect: DeviceRect?, _ name: String, scale: Double, into json: inout JSONWriter) {
        json.key(name)
        if let rect { write(rect, scale: scale, into: &json) } else { json.null() }
    }

    private static func writeGrid(_ grid: WaterfallGrid, flow: FlowGrid?, into json: inout JSONWriter) {
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
        json.endObject()
    }

    private static func write(_ item: LaidOutItem, scale: Double, into json: inout JSONWriter) {
        let placed = item.placed
        json.beginObject()
        json.field("index", item.index)
        json.field("id", item.id)
        json.field("link", item.link)
        json.field("column", placed.column)
        json.field("columnSpan", placed.columnSpan)
        if let section = item.section { json.field("section", section) }
        json.key("frame")
        write(placed.frame, scale: scale, into: &json)
        json.key("photo")
        json.beginObject()
        json.key("frame")
        write(placed.photoFrame, scale: scale, into: &json)
        json.key("slot")
        write(placed.photoSlot, scale: scale, into: &json)
        json.field("url", item.photo.url)
        json.field("width", item.photo.size.width)
        json.field("height", item.photo.size.height)
        json.field("sizeFrom", item.photo.sizeSource.rawValue)
        if let info = item.photo.info {
            json.field("format", info.format.rawValue)
            json.field("orientation", info.orientation)
        }
        if let placeholder = item.photo.placeholder {
            json.key("placeholder")
            writePlaceholder(placeholder, into: &json)
        }
        json.endObject()
        json.key("annotation")
        json.beginObject()
        json.key("frame")
        write(placed.annotationFrame, scale: scale, into: &json)
        for (name, block) in [("title", item.title), ("text", item.text)] {
            json.key(name)
            guard let block else {
                json.null()
                continue
            }
            json.beginObject()
            json.key("frame")
            write(block.frame, scale: scale, into: &json)
            json.field("text", block.text)
            json.field("lines", block.measurement.lines)
            json.field("truncated", block.measurement.truncated)
            json.endObject()
        }
        json.endObject()
        json.key("warnings")
        write(item.warnings, into: &json)
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

    static func write(_ warnings: [ItemWarning], into json: inout JSONWriter) {
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

    /// An `ingest` record: one feed item.
    public static func write(_ item: FeedItem, into json: inout JSONWriter) {
        json.beginObject()
        json.field("index", item.index)
        json.field("id", item.id)
        json.field("title", item.title)
        json.field("text", item.text)
        json.field("link", item.link)
        json.field("author", item.author)
        json.field("published", item.published)
        json.key("image")
        if let image = item.image { write(image, into: &json) } else { json.null() }
        json.key("images")
        json.beginArray()
        for image in item.images { write(image, into: &json) }
        json.endArray()
        // Only when the feed uses the layout extension, so ordinary records stay as they were.
        if let span = item.layout.span { json.field("span", spanText(span)) }
        if let section = item.layout.section { json.field("section", section) }
        json.key("warnings")
        write(item.warnings.map(ItemWarning.init), into: &json)
        json.endObject()
    }

    private static func spanText(_ span: SpanHint) -> String {
        switch span {
        case .columns(let count): String(count)
        case .fullWidth: "full"
        }
    }

    private static func write(_ image: FeedImage, into json: inout JSONWriter) {
        json.beginObject()
        json.field("url", image.url)
        if let width = image.width { json.field("width", width) }
        if let height = image.height { json.field("height", height) }
        if let type = image.type { json.field("type", type) }
        json.field("origin", image.origin)
        json.endObject()
    }

    /// A `probe` record: one image, or the error that kept it from being read.
    public static func writeProbe(source: String, result: Result<ImageInfo, ImageProbeError>, into json: inout JSONWriter) {
        writeProbe(source: source, result: result, decoding: nil, placeholder: nil, into: &json)
    }

    /// A `probe` record with what `--verify` and `--placeholders` found.
    ///
    /// A failed decode keeps the header fields, sets `decodable` to false and adds the `error` object, so
    /// the record says both what the header claims and why the pixels are unusable. A placeholder that
    /// could not be built is `null`, with the reason among the warnings (GIF, WebP and BMP have no decoder).
    /// - Parameters:
    ///   - source: The input as given.
    ///   - result: The header, or why it could not be read.
    ///   - decoding: The `--verify` outcome, when asked for.
    ///   - placeholder: The `--placeholders` outcome, when asked for.
    ///   - json: Where the record goes.
    public static func writeProbe(
        source: String, result: Result<ImageInfo, ImageProbeError>,
        decoding: Result<PixelDecodeReport, ImageProbeError>?, placeholder: Result<ImagePlaceholder, ImageProbeError>?,
        into json: inout JSONWriter
    ) {
        json.beginObject()
        json.field("source", source)
        switch result {
        case .success(let info):
            json.field("format", info.format.rawValue)
            json.field("width", info.width)
            json.field("height", info.height)
            json.field("orientation", info.orientation)
            json.field("displayWidth", info.displayWidth)
            json.field("displayHeight", info.displayHeight)
            json.field("bytesRead", info.bytesRead)
            json.field("progressive", info.isProgressive)
            json.field("interlaced", info.isInterlaced)
            json.field("animated", info.isAnimated)
            json.field("cmyk", info.isCMYK)
            json.field("bitDepth", info.bitDepth)
            if info.isAppleOptimizedPNG { json.field("appleOptimizedPNG", true) }
            var warnings = info.warnings
            if let decoding {
                switch decoding {
                case .success(let report):
                    json.field("decodable", true)
                    json.field("scans", report.scanCount)
                case .failure(let error) where isUnverifiable(error):
                    json.key("decodable")
                    json.null()
                    warnings.append("not verified: \(error.reason)")
                case .failure:
                    json.field("decodable", false)
                }
            }
            if let placeholder {
                json.key("placeholder")
                switch placeholder {
                case .success(let value): writePlaceholder(value, into: &json)
                case .failure(let error):
                    json.null()
                    warnings.append("no placeholder: \(error.reason)")
                }
            }
            json.key("warnings")
            json.beginArray()
            for warning in warnings { json.string(warning) }
            json.endArray()
            if case .failure(let error) = decoding, !isUnverifiable(error) { writeProbeError(error, into: &json) }
        case .failure(let error):
            writeProbeError(error, into: &json)
        }
        json.endObject()
    }

    /// Whether a decode failed only because no decoder handles the format (GIF, WebP, BMP): the image is not
    /// known to be broken, so `decodable` is `null` rather than `false`, and the input does not count as failed.
    public static func isUnverifiable(_ error: ImageProbeError) -> Bool {
        error.code == .unknownFormat
    }

    private static func writeProbeError(_ error: ImageProbeError, into json: inout JSONWriter) {
        json.key("error")
        json.beginObject()
        json.field("code", error.code.description)
        json.field("message", error.message)
        if let offset = error.offset { json.field("offset", offset) }
        json.endObject()
    }

    /// `{"color": "#rrggbb", "thumbHash": "base64"}`: what a client paints before the photo arrives.
    static func writePlaceholder(_ placeholder: ImagePlaceholder, into json: inout JSONWriter) {
        json.beginObject()
        json.field("color", placeholder.averageColor.hexString)
        json.field("thumbHash", placeholder.thumbHashBase64)
        json.endObject()
    }

    /// A `measure` record: one text.
    public static func write(_ measurement: TextMeasurement, into json: inout JSONWriter) {
        json.beginObject()
        json.field("lines", measurement.lines)
        json.field("height", measurement.height)
        json.field("width", measurement.width)
        json.field("truncated", measurement.truncated)
        json.key("lineTexts")
        json.beginArray()
        for line in measurement.lineTexts { json.string(line) }
        json.endArray()
        json.endObject()
    }
}
