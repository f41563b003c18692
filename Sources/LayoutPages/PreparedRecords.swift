import ByteTools
import FeedIngest
import Foundation
import ImageProbe
import TextMeasure
import WaterfallLayout

/// Prepared items as NDJSON (`feedlayout prepare` writes them, `feedlayout place` reads them): one object per item
/// with everything placement and the pages use, so that items prepared on many machines, in ranges, place into the
/// pages `feedlayout layout` writes, byte for byte.
///
/// A record: `{"schema": "feedlayout.prepared/1", "identity": "<digest of the options and fonts>", "index", "id",
/// "link", "span", "section", "photo": {url, width, height, sizeFrom, image?: {format, width, height,
/// orientation}, placeholder?: {color, thumbHash}}, "annotations": [{title, text} per layout, each block
/// {text, lines, height, width, truncated, deviceHeight, lineTexts} or null], "warnings": [{code, message, line?, column?}]}`.
/// Numbers are written so that they read back exactly.
package enum PreparedRecords {
    package static let schema = "feedlayout.prepared/1"

    /// The record of an item, with its newline.
    package static func write(_ prepared: PreparedItem, identity: String, into json: inout JSONWriter) {
        json.beginObject()
        json.field("schema", schema)
        json.field("identity", identity)
        json.field("index", prepared.item.index)
        json.field("id", prepared.item.id)
        json.field("link", prepared.item.link)
        json.key("span")
        switch prepared.item.layout.span {
        case .none: json.null()
        case .fullWidth: json.string("full")
        case .columns(let count): json.int(count)
        }
        json.field("section", prepared.item.layout.section)
        let photo = prepared.photo
        json.key("photo")
        json.beginObject()
        json.field("url", photo.url)
        json.field("width", photo.size.width)
        json.field("height", photo.size.height)
        json.field("sizeFrom", photo.sizeSource.rawValue)
        if let info = photo.info {
            json.key("image")
            json.beginObject()
            json.field("format", info.format.rawValue)
            json.field("width", info.width)
            json.field("height", info.height)
            json.field("orientation", info.orientation)
            json.endObject()
        }
        if let placeholder = photo.placeholder {
            json.key("placeholder")
            json.beginObject()
            json.field("color", placeholder.averageColor.hexString)
            json.field("thumbHash", Base64.encode(placeholder.thumbHash, alphabet: .standard, padded: true))
            json.endObject()
        }
        if let alt = photo.alt { json.field("alt", alt) }
        json.endObject()
        json.key("annotations")
        json.beginArray()
        for annotation in prepared.annotations {
            json.beginObject()
            for (name, block) in [("title" as StaticString, annotation.title), ("text", annotation.text)] {
                json.key(name)
                guard let block else {
                    json.null()
                    continue
                }
                json.beginObject()
                json.field("text", block.text)
                json.field("lines", block.measurement.lines)
                json.field("height", block.measurement.height)
                json.field("width", block.measurement.width)
                json.field("truncated", block.measurement.truncated)
                json.field("deviceHeight", block.deviceHeight)
                json.key("lineTexts")
                json.beginArray()
                for line in block.measurement.lineTexts { json.string(line) }
                json.endArray()
                json.endObject()
            }
            json.endObject()
        }
        json.endArray()
        json.key("warnings")
        Records.write(prepared.warnings, into: &json)
        json.endObject()
        json.appendRaw("\n")
    }

    /// Reads a record back.
    /// - Parameters:
    ///   - line: One line of the NDJSON.
    ///   - identity: The identity of the run that places it: a record prepared with other options or fonts is
    ///     refused.
    ///   - layouts: How many layouts (breakpoints) the run makes: each record must carry as many annotations.
    ///   - place: How errors name the line (`items.ndjson:12`).
    /// - Throws: `LayoutError.preparedItemsInvalid` naming the place and what is wrong.
    package static func read(_ line: some Collection<UInt8>, identity: String, layouts: Int, place: String)
        throws(LayoutError) -> PreparedItem
    {
        func invalid(_ reason: String) -> LayoutError {
            LayoutError(.preparedItemsInvalid, "\(place): \(reason)")
        }
        // FeedIngest's JSON parser: several times faster than JSONSerialization, and numbers keep their text, so
        // they read back exactly.
        let object: JSONValue
        do {
            object = try JSONValue.parse(Array(line))
        } catch {
            throw invalid("not JSON (\(error.reason) at byte \(error.offset)); feedlayout prepare writes one object per line")
        }
        guard case .object = object, object["schema"] == .string(schema) else {
            throw invalid("not a prepared item (\"schema\" is not \"\(schema)\")")
        }
        guard object["identity"] == .string(identity) else {
            // The caller's options to fix, as a cursor from other options is.
            throw LayoutError(
                .invalidOptions,
                "\(place): prepared with other layout options or fonts than these (its identity "
                    + "\(object["identity"]?.stringValue ?? "none"), this run's \(identity)): prepare and place with "
                    + "the same options, on machines with the same fonts")
        }
        func int(_ value: JSONValue?, _ name: String) throws(LayoutError) -> Int {
            guard case .number(let text) = value, let number = Int(text) else {
                throw invalid("\(name) is not a whole number")
            }
            return number
        }
        func double(_ value: JSONValue?, _ name: String) throws(LayoutError) -> Double {
            guard case .number(let text) = value, let number = Double(text) else {
                throw invalid("\(name) is not a number")
            }
            return number
        }
        func string(_ value: JSONValue?, _ name: String) throws(LayoutError) -> String? {
            switch value {
            case nil, .null?: return nil
            case .string(let text)?: return text
            default: throw invalid("\(name) is not a string")
            }
        }
        func bool(_ value: JSONValue?, _ name: String) throws(LayoutError) -> Bool {
            guard case .bool(let flag) = value else { throw invalid("\(name) is not true or false") }
            return flag
        }
        let index = try int(object["index"], "index")
        guard let id = try string(object["id"], "id") else { throw invalid("id is missing") }
        var hints = LayoutHints(section: try string(object["section"], "section"))
        switch object["span"] {
        case nil, .null?: break
        case .string("full")?: hints.span = .fullWidth
        case let value: hints.span = .columns(try int(value, "span"))
        }
        let item = FeedItem(index: index, id: id, link: try string(object["link"], "link"), layout: hints)

        guard let photoObject = object["photo"], case .object = photoObject else { throw invalid("photo is missing") }
        guard let source = photoObject["sizeFrom"]?.stringValue.flatMap(PhotoSizeSource.init(rawValue:)) else {
            throw invalid("photo.sizeFrom is not header, declared or fallback")
        }
        var info: ImageInfo?
        if let image = photoObject["image"] {
            guard let format = image["format"]?.stringValue.flatMap(ImageFormat.init(rawValue:)) else {
                throw invalid("photo.image.format is not an image format")
            }
            info = ImageInfo(
                format: format, width: try int(image["width"], "photo.image.width"),
                height: try int(image["height"], "photo.image.height"),
                orientation: try int(image["orientation"], "photo.image.orientation"))
        }
        var placeholder: ImagePlaceholder?
        if let painted = photoObject["placeholder"] {
            guard let color = try string(painted["color"], "photo.placeholder.color").flatMap(PlaceholderColor.init(hexString:)),
                let hash = try string(painted["thumbHash"], "photo.placeholder.thumbHash").flatMap({ Base64.decode($0.utf8, alphabet: .standard, padded: true) })
            else { throw invalid("photo.placeholder is not a colour and a base64 thumbHash") }
            placeholder = ImagePlaceholder(averageColor: color, thumbHash: hash)
        }
        var photo = ResolvedPhoto(
            url: try string(photoObject["url"], "photo.url"),
            size: Size(
                width: try double(photoObject["width"], "photo.width"),
                height: try double(photoObject["height"], "photo.height")),
            sizeSource: source, info: info, placeholder: placeholder)
        photo.alt = try string(photoObject["alt"], "photo.alt")

        guard let annotationValues = object["annotations"]?.arrayValue, annotationValues.count == layouts else {
            throw invalid("annotations has not one entry per layout (\(layouts)): prepare with the same --breakpoints")
        }
        var annotations: [PreparedAnnotation] = []
        for (position, annotation) in annotationValues.enumerated() {
            var blocks: [MeasuredText?] = []
            for name in ["title", "text"] {
                let field = "annotations[\(position)].\(name)"
                guard let block = annotation[name], case .object = block else {
                    guard annotation[name] == nil || annotation[name] == .null else {
                        throw invalid("\(field) is not an object or null")
                    }
                    blocks.append(nil)
                    continue
                }
                guard let text = try string(block["text"], field + ".text"),
                    let lineTexts = block["lineTexts"]?.arrayValue
                else { throw invalid("\(field) lacks its text or lineTexts") }
                var lines: [String] = []
                for line in lineTexts {
                    guard case .string(let text) = line else { throw invalid("\(field).lineTexts holds a non-string") }
                    lines.append(text)
                }
                let measurement = TextMeasurement(
                    lines: try int(block["lines"], field + ".lines"), height: try double(block["height"], field + ".height"),
                    width: try double(block["width"], field + ".width"),
                    truncated: try bool(block["truncated"], field + ".truncated"), lineTexts: lines)
                blocks.append(
                    MeasuredText(
                        text: text, measurement: measurement,
                        deviceHeight: try int(block["deviceHeight"], field + ".deviceHeight")))
            }
            annotations.append(PreparedAnnotation(title: blocks[0], text: blocks[1]))
        }
        guard let warningValues = object["warnings"]?.arrayValue else { throw invalid("warnings is not a list") }
        var warnings: [FeedWarning] = []
        for warning in warningValues {
            guard case .string(let code)? = warning["code"], case .string(let message)? = warning["message"] else {
                throw invalid("a warning lacks its code or message")
            }
            // Where in the feed it was found, for the warnings that say so.
            func place(_ name: String) throws(LayoutError) -> Int? {
                guard let value = warning[name], value != .null else { return nil }
                return try int(value, "warnings[].\(name)")
            }
            warnings.append(FeedWarning(code: code, message: message, line: try place("line"), column: try place("column")))
        }
        return PreparedItem(item: item, photo: photo, annotations: annotations, warnings: warnings)
    }
}

extension PlaceholderColor {
    /// Reads `#rrggbb` or `#rrggbbaa`, as ``hexString`` writes it.
    package init?(hexString: String) {
        let digits = Array(hexString.utf8.dropFirst())
        guard hexString.hasPrefix("#"), digits.count == 6 || digits.count == 8 else { return nil }
        var channels: [UInt8] = []
        for start in stride(from: 0, to: digits.count, by: 2) {
            guard let value = UInt8(String(decoding: digits[start..<start + 2], as: UTF8.self), radix: 16) else {
                return nil
            }
            channels.append(value)
        }
        self.init(red: channels[0], green: channels[1], blue: channels[2], alpha: channels.count == 4 ? channels[3] : 255)
    }
}
