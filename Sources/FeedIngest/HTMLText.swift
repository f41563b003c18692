internal import CFeedLayoutShims
internal import CLibXML2

/// An `<img>` found in caption HTML, before URL resolution.
struct HTMLImageReference: Equatable {
    /// The best source: `data-src` (and other lazy-load attributes), else `src`, else the largest
    /// `srcset` candidate. Never a `data:` URI.
    var source: String
    var width: String?
    var height: String?
}

/// Turns caption HTML into plain text and finds its images, with libxml2's HTML parser.
///
/// One converter per reader: it keeps one HTML parser context and reuses it for every item.
final class HTMLTextConverter {
    private let context: htmlParserCtxtPtr?

    init() {
        context = fl_xml_html_context_create()
    }

    deinit {
        if let context { htmlFreeParserCtxt(context) }
    }

    /// The text and images of an HTML fragment.
    struct Result {
        var text: String
        var images: [HTMLImageReference]
    }

    /// Converts `html` (UTF-8 bytes): tags dropped, entities decoded, `script`/`style` skipped,
    /// whitespace (including no-break spaces) collapsed to single spaces, ends trimmed.
    /// - Parameters:
    ///   - html: the markup.
    ///   - collectImages: whether to look for `<img>` (only needed when no other image exists).
    /// - Returns: the text and, if asked, the plausible images in document order.
    func convert(_ html: [UInt8], collectImages: Bool) -> Result {
        // Most titles and many captions have no markup at all: skip the parser for them.
        if !html.contains(UInt8(ascii: "<")) && !html.contains(UInt8(ascii: "&")) {
            return Result(text: Self.collapseWhitespace(html), images: [])
        }
        guard let context, !html.isEmpty else {
            return Result(text: Self.collapseWhitespace(html), images: [])
        }
        let document = html.withUnsafeBufferPointer { buffer in
            buffer.withMemoryRebound(to: CChar.self) { chars in
                fl_xml_html_read(context, chars.baseAddress, Int32(clamping: chars.count))
            }
        }
        guard let document else { return Result(text: Self.collapseWhitespace(html), images: []) }
        defer { xmlFreeDoc(document) }
        var textBytes: [UInt8] = []
        textBytes.reserveCapacity(html.count)
        var images: [HTMLImageReference] = []
        var node = document.pointee.children
        while let current = node {
            var descend = true
            switch current.pointee.type {
            case XML_TEXT_NODE, XML_CDATA_SECTION_NODE:
                if let content = current.pointee.content {
                    textBytes.append(contentsOf: UnsafeBufferPointer(start: content, count: Int(xmlStrlen(content))))
                }
            case XML_ELEMENT_NODE:
                let name = Self.lowercasedName(current)
                if name == "script" || name == "style" || name == "noscript" || name == "template" {
                    descend = false
                } else if name == "img" {
                    if collectImages, let image = Self.imageReference(current) { images.append(image) }
                } else if Self.breaksText(name) {
                    textBytes.append(0x20)
                }
            default:
                break
            }
            if descend, let child = current.pointee.children, current.pointee.type == XML_ELEMENT_NODE {
                node = child
                continue
            }
            // Next sibling, or climb until an ancestor has one; block ends also break text.
            var climbing: xmlNodePtr? = current
            node = nil
            while let here = climbing {
                if here.pointee.type == XML_ELEMENT_NODE, Self.breaksText(Self.lowercasedName(here)) {
                    textBytes.append(0x20)
                }
                if let sibling = here.pointee.next {
                    node = sibling
                    break
                }
                let parent = here.pointee.parent
                climbing =
                    (parent == nil || UnsafeMutableRawPointer(parent!) == UnsafeMutableRawPointer(document))
                    ? nil : parent
            }
        }
        return Result(text: Self.collapseWhitespace(textBytes), images: images)
    }

    private static func lowercasedName(_ node: xmlNodePtr) -> String {
        guard let name = node.pointee.name else { return "" }
        return String(cString: name).lowercased()
    }

    /// Elements after which words must not run together ("a<br>b" is "a b", "a<b>c</b>" is "ac").
    private static func breaksText(_ name: String) -> Bool {
        switch name {
        case "p", "div", "br", "li", "ul", "ol", "dl", "dt", "dd", "tr", "td", "th", "table",
            "h1", "h2", "h3", "h4", "h5", "h6", "blockquote", "pre", "figure", "figcaption", "hr",
            "section", "article", "header", "footer", "aside", "nav", "main", "address", "img":
            return true
        default:
            return false
        }
    }

    private static func attributes(_ node: xmlNodePtr) -> [String: String] {
        var result: [String: String] = [:]
        var attribute = node.pointee.properties
        while let current = attribute {
            if let name = current.pointee.name {
                var value = ""
                var child = current.pointee.children
                while let text = child {
                    if let content = text.pointee.content { value += String(cString: content) }
                    child = text.pointee.next
                }
                result[String(cString: name).lowercased()] = value
            }
            attribute = current.pointee.next
        }
        return result
    }

    /// The `<img>`'s source, or nil when it has none or is a tracking pixel, an avatar or an icon.
    static func imageReference(_ node: xmlNodePtr) -> HTMLImageReference? {
        let attributes = attributes(node)
        func usable(_ value: String?) -> String? {
            guard let value = value?.trimmingASCIIWhitespace(), !value.isEmpty else { return nil }
            return value.lowercased().hasPrefix("data:") ? nil : value
        }
        let lazy = ["data-src", "data-lazy-src", "data-original", "data-orig-file", "data-lazy"]
            .lazy.compactMap { usable(attributes[$0]) }.first
        let srcset = (attributes["data-srcset"] ?? attributes["srcset"]).flatMap(largestSrcsetCandidate)
        guard let source = lazy ?? usable(attributes["src"]) ?? srcset.flatMap({ usable($0) }) else {
            return nil
        }
        let width = attributes["width"]
        let height = attributes["height"]
        if let width, let height, let w = lenientInteger(width), let h = lenientInteger(height), w <= 2 || h <= 2 {
            return nil  // 1×1 (or 2×2) tracking pixel
        }
        if isTrackerOrAvatar(source: source, className: attributes["class"] ?? "") { return nil }
        return HTMLImageReference(source: source, width: width, height: height)
    }

    /// Known tracking and decoration hosts and paths; avatars are a person, not the photo.
    static func isTrackerOrAvatar(source: String, className: String) -> Bool {
        let lowered = source.lowercased()
        let markers = [
            "feeds.feedburner.com/~r/", "feeds.feedburner.com/~ff/", "/~ff/", "pixel.wp.com",
            "stats.wordpress.com", "doubleclick.net", "/pixel.gif", "/pixel.png", "/tracking",
            "/beacon", "gravatar.com/avatar", "/avatar", "/avatars/", "spacer.gif", "blank.gif",
            "/emoji/", "feedsportal.com",
        ]
        if markers.contains(where: { lowered.contains($0) }) { return true }
        let classes = className.lowercased()
        return classes.contains("avatar") || classes.contains("emoji") || classes.contains("wp-smiley")
    }

    /// The candidate with the largest `w` (or `x`) descriptor in a `srcset`.
    static func largestSrcsetCandidate(_ srcset: String) -> String? {
        var best: (url: String, size: Double)?
        for candidate in srcset.split(separator: ",") {
            let fields = candidate.split(whereSeparator: { $0 == " " || $0 == "\t" || $0 == "\n" })
            guard let url = fields.first else { continue }
            var size = 1.0
            if fields.count > 1, let descriptor = fields.last, let unit = descriptor.last,
                unit == "w" || unit == "x", let value = Double(descriptor.dropLast())
            {
                size = value
            }
            if best == nil || size > best!.size { best = (String(url), size) }
        }
        return best?.url
    }

    /// HTML element names, for guessing whether a title is markup (as feedparser's list).
    private static let htmlElementNames: Set<String> = [
        "a", "abbr", "acronym", "address", "area", "article", "aside", "b", "big", "blockquote", "br", "button",
        "caption", "center", "cite", "code", "col", "dd", "del", "dfn", "div", "dl", "dt", "em", "figure",
        "figcaption", "font", "h1", "h2", "h3", "h4", "h5", "h6", "hr", "i", "img", "ins", "kbd", "li", "mark", "ol",
        "p", "pre", "q", "s", "samp", "small", "span", "strike", "strong", "sub", "sup", "table", "tbody", "td",
        "th", "thead", "tr", "tt", "u", "ul", "var",
    ]

    /// Whether text contains a known HTML tag or an entity reference.
    static func looksLikeHTML(_ bytes: [UInt8]) -> Bool {
        var index = 0
        while index < bytes.count {
            let byte = bytes[index]
            if byte == UInt8(ascii: "<") {
                var start = index + 1
                if start < bytes.count && bytes[start] == UInt8(ascii: "/") { start += 1 }
                var end = start
                while end < bytes.count,
                    (bytes[end] | 0x20) >= 0x61 && (bytes[end] | 0x20) <= 0x7A
                        || (bytes[end] >= 0x30 && bytes[end] <= 0x39)
                {
                    end += 1
                }
                if end > start, end < bytes.count, [0x20, 0x3E, 0x2F, 0x09, 0x0A].contains(bytes[end]),
                    htmlElementNames.contains(String(decoding: bytes[start..<end], as: UTF8.self).lowercased())
                {
                    return true
                }
            } else if byte == UInt8(ascii: "&") {
                var end = index + 1
                while end < bytes.count, end - index < 12,
                    (bytes[end] | 0x20) >= 0x61 && (bytes[end] | 0x20) <= 0x7A
                        || (bytes[end] >= 0x30 && bytes[end] <= 0x39) || bytes[end] == UInt8(ascii: "#")
                {
                    end += 1
                }
                if end > index + 1, end < bytes.count, bytes[end] == UInt8(ascii: ";") { return true }
            }
            index += 1
        }
        return false
    }

    /// Collapses runs of ASCII whitespace and U+00A0 into one space and trims the ends.
    static func collapseWhitespace(_ bytes: [UInt8]) -> String {
        bytes.withUnsafeBufferPointer { input in
            // Built in place: runs of other bytes are copied whole (most text has one space per word).
            String(unsafeUninitializedCapacity: input.count, initializingUTF8With: { (output: UnsafeMutableBufferPointer<UInt8>) -> Int in
                var written = 0
                var pendingSpace = false
                var index = 0
                let count = input.count
                while index < count {
                    let byte = input[index]
                    if byte == 0x20 || byte == 0x09 || byte == 0x0A || byte == 0x0D || byte == 0x0C {
                        pendingSpace = true
                        index += 1
                        continue
                    }
                    if byte == 0xC2, index + 1 < count, input[index + 1] == 0xA0 {
                        pendingSpace = true
                        index += 2
                        continue
                    }
                    if pendingSpace && written > 0 {
                        output[written] = 0x20
                        written += 1
                    }
                    pendingSpace = false
                    output[written] = byte
                    written += 1
                    index += 1
                }
                return written
            })
        }
    }
}

/// Reads a declared pixel size leniently: "800", " 800px ", "800.0" and "1024.5" are 800, 800,
/// 800 and 1024; "auto", "100%", "50em" and "" are nil (a percentage or a font-relative size is
/// not a pixel count).
func lenientInteger(_ text: String) -> Int? {
    let bytes = Array(text.utf8)
    var index = 0
    func isSpace(_ byte: UInt8) -> Bool { byte == 0x20 || byte == 0x09 || byte == 0x0A || byte == 0x0D }
    while index < bytes.count && isSpace(bytes[index]) { index += 1 }
    var value = 0
    var digits = 0
    while index < bytes.count, bytes[index] >= 0x30 && bytes[index] <= 0x39 {
        if digits < 9 { value = value * 10 + Int(bytes[index] - 0x30) }
        digits += 1
        index += 1
    }
    guard digits > 0 else { return nil }
    if index < bytes.count && bytes[index] == UInt8(ascii: ".") {
        index += 1
        while index < bytes.count, bytes[index] >= 0x30 && bytes[index] <= 0x39 { index += 1 }
    }
    let unit = String(decoding: bytes[index...], as: UTF8.self).trimmingASCIIWhitespace().lowercased()
    return unit.isEmpty || unit == "px" ? value : nil
}

extension String {
    /// The string without leading and trailing ASCII whitespace (no Foundation needed).
    func trimmingASCIIWhitespace() -> String {
        let isSpace: (Character) -> Bool = { $0 == " " || $0 == "\t" || $0 == "\n" || $0 == "\r" || $0 == "\r\n" }
        guard let first = firstIndex(where: { !isSpace($0) }), let last = lastIndex(where: { !isSpace($0) }) else {
            return ""
        }
        return String(self[first...last])
    }
}

/// Cuts `text` to at most `limit` characters, at a word boundary when one is near, adding "…".
func truncateText(_ text: String, limit: Int) -> String {
    // A character is at least one UTF-8 byte: most captions are shorter than the limit in bytes,
    // and counting characters (grapheme breaking) is the expensive part.
    guard limit > 0, text.utf8.count > limit, text.count > limit else { return text }
    var cut = text.index(text.startIndex, offsetBy: max(0, limit - 1))
    if text[cut] == " " {
        // The cut falls on a space: the words before it fit whole.
    } else if let space = text[..<cut].lastIndex(of: " "),
        text.distance(from: space, to: cut) <= max(1, limit / 3)
    {
        cut = space
    }
    return String(text[..<cut]) + "…"
}
