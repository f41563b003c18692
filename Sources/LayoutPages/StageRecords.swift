import FeedIngest
import ImageProbe
import TextMeasure
import WaterfallLayout

/// The records of `ingest`, `probe` and `measure`, one JSON object per line (NDJSON): the other half of DESIGN.md's
/// CLI contract, beside the pages.
extension Records {
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
        let chosenStart = json.position
        if let image = item.image { write(image, into: &json) } else { json.null() }
        let chosen = chosenStart..<json.position
        json.key("images")
        json.beginArray()
        // The chosen image is nearly always one of the candidates: its bytes are copied rather than encoded twice.
        let chosenImage = item.image
        for image in item.images {
            if let chosenImage, writesTheSame(image, chosenImage), json.repeatValue(chosen) { continue }
            write(image, into: &json)
        }
        json.endArray()
        // Only when the feed uses the layout extension, so ordinary records stay as they were.
        if let span = item.layout.span { json.field("span", spanText(span)) }
        if let section = item.layout.section { json.field("section", section) }
        json.key("warnings")
        write(item.warnings, into: &json)
        json.endObject()
    }

    private static func spanText(_ span: SpanHint) -> String {
        switch span {
        case .columns(let count): String(count)
        case .fullWidth: "full"
        }
    }

    /// Whether two images have the same record (every field ``write(_:into:)`` writes is equal).
    private static func writesTheSame(_ first: borrowing FeedImage, _ second: borrowing FeedImage) -> Bool {
        first.url == second.url && first.width == second.width && first.height == second.height
            && first.type == second.type && first.origin == second.origin && first.alt == second.alt
    }

    private static func write(_ image: FeedImage, into json: inout JSONWriter) {
        json.beginObject()
        json.field("url", image.url)
        if let width = image.width { json.field("width", width) }
        if let height = image.height { json.field("height", height) }
        if let type = image.type { json.field("type", type) }
        json.field("origin", image.origin)
        if let alt = image.alt { json.field("alt", alt) }
        json.endObject()
    }

    /// A `probe` record: one image, or the error that kept it from being read.
    public static func writeProbe(
        source: String, result: Result<ImageInfo, ImageProbeError>, into json: inout JSONWriter
    ) {
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
