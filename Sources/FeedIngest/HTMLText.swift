internal import CFeedLayoutShims
internal import CLibXML2

/// An `<img>` found in caption HTML, before URL resolution.
struct HTMLImageReference: Equatable {
    /// The best source: `data-src` (and other lazy-load attributes), else `src`, else the largest
    /// `srcset` candidate. Never a `data:` URI.
    var source: String
    var width: String?
    var height: String?
    /// The `alt` attribute, as written (nil when absent).
    var alt: String? = nil
}

/// What an HTML element means for the text: decided from the name's bytes, without making a
/// `String` of it (a caption has dozens of elements, and a `String` switch compares one by one).
enum ElementRole {
    /// `script`, `style`, `noscript`, `template`: no text of theirs is shown.
    case skipped
    /// `img`: a possible image, and a word break.
    case image
    /// Block elements and `br`: words must not run together across them ("a<br>b" is "a b").
    case breaking
    /// Everything else ("a<b>c</b>" is "ac").
    case inline

    /// Whether a space separates the text before and after the element.
    var breaksText: Bool { self == .image || self == .breaking }

    init(_ node: xmlNodePtr) {
        guard let name = node.pointee.name else {
            self = .inline
            return
        }
        self = Self(name: name)
    }

    /// Classifies a NUL-terminated element name, ASCII case-insensitively.
    init(name: UnsafePointer<xmlChar>) {
        // The name's first eight bytes, lowercased, packed little-endian; the two longer names
        // that matter are checked whole.
        var key: UInt64 = 0
        var length = 0
        while name[length] != 0 {
            if length == 10 {
                self = .inline
                return
            }
            if length < 8 {
                let byte = name[length]
                let lowered = byte >= 0x41 && byte <= 0x5A ? byte | 0x20 : byte
                key |= UInt64(lowered) << (8 * UInt64(length))
            }
            length += 1
        }
        if length > 8 {
            self =
                Self.equalsLowercased(name, "blockquote") || Self.equalsLowercased(name, "figcaption")
                ? .breaking : .inline
            return
        }
        switch key {
        case Self.script, Self.style, Self.noscript, Self.template: self = .skipped
        case Self.img: self = .image
        case Self.p, Self.div, Self.br, Self.li, Self.ul, Self.ol, Self.dl, Self.dt, Self.dd, Self.tr, Self.td,
            Self.th, Self.table, Self.h1, Self.h2, Self.h3, Self.h4, Self.h5, Self.h6, Self.pre, Self.figure,
            Self.hr, Self.section, Self.article, Self.header, Self.footer, Self.aside, Self.nav, Self.main,
            Self.address:
            self = .breaking
        default: self = .inline
        }
    }

    private static func pack(_ name: StaticString) -> UInt64 {
        var key: UInt64 = 0
        let bytes = UnsafeBufferPointer(start: name.utf8Start, count: name.utf8CodeUnitCount)
        for (index, byte) in bytes.prefix(8).enumerated() { key |= UInt64(byte) << (8 * UInt64(index)) }
        return key
    }

    private static func equalsLowercased(_ name: UnsafePointer<xmlChar>, _ expected: StaticString) -> Bool {
        let bytes = UnsafeBufferPointer(start: expected.utf8Start, count: expected.utf8CodeUnitCount)
        for (index, byte) in bytes.enumerated() {
            let actual = name[index]
            if (actual >= 0x41 && actual <= 0x5A ? actual | 0x20 : actual) != byte { return false }
        }
        return name[bytes.count] == 0
    }

    private static let script = pack("script"), style = pack("style"), noscript = pack("noscript")
    private static let template = pack("template"), img = pack("img")
    private static let p = pack("p"), div = pack("div"), br = pack("br"), li = pack("li"), ul = pack("ul")
    private static let ol = pack("ol"), dl = pack("dl"), dt = pack("dt"), dd = pack("dd"), tr = pack("tr")
    private static let td = pack("td"), th = pack("th"), table = pack("table"), h1 = pack("h1"), h2 = pack("h2")
    private static let h3 = pack("h3"), h4 = pack("h4"), h5 = pack("h5"), h6 = pack("h6"), pre = pack("pre")
    private static let figure = pack("figure"), hr = pack("hr"), section = pack("section")
    private static let article = pack("article"), header = pack("header"), footer = pack("footer")
    private static let aside = pack("aside"), nav = pack("nav"), main = pack("main"), address = pack("address")
}

/// Turns caption HTML into plain text and finds its images, with libxml2's HTML parser.
///
/// One converter per reader: it keeps one HTML parser context and reuses it for every item. The
/// parser runs in SAX mode: text and images are taken from its events as they come, so no
/// document tree is built and freed per caption (that was half the cost of a caption).
final class HTMLTextConverter {
    private let context: htmlParserCtxtPtr?
    /// The tree-building context of ``convertWithTree(_:collectImages:)``, made on first use.
    private var treeContext: htmlParserCtxtPtr?

    // The conversion in progress, filled by the SAX callbacks.
    private var textBytes: [UInt8] = []
    private var images: [HTMLImageReference] = []
    private var collectingImages = false
    /// How deep inside a `script` / `style` / `noscript` / `template` the parser is (0: outside).
    private var skippedDepth = 0
    /// Open elements. Text outside every element (a stray "<" before the first one) has no place in
    /// libxml2's tree, which drops it; so does this reader.
    private var openElements = 0
    /// The simple reader's buffers, kept from caption to caption.
    private var simpleScratch = SimpleHTML.Scratch()

    init() {
        context = fl_xml_html_context_create()
        guard let sax = context?.pointee.sax else { return }
        // libxml2 leaves the handler's `_private` alone and htmlCtxtReset keeps the handler.
        sax.pointee._private = Unmanaged.passUnretained(self).toOpaque()
        sax.pointee.startElement = Self.startElementCallback
        sax.pointee.endElement = Self.endElementCallback
        sax.pointee.characters = Self.charactersCallback
        sax.pointee.cdataBlock = Self.charactersCallback
        sax.pointee.comment = nil
        sax.pointee.processingInstruction = nil
    }

    deinit {
        if let context { htmlFreeParserCtxt(context) }
        if let treeContext { htmlFreeParserCtxt(treeContext) }
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
        html.withUnsafeBufferPointer { convert($0, collectImages: collectImages) }
    }

    /// Converts `html` in place (see ``convert(_:collectImages:)-([UInt8],_)``).
    func convert(_ html: UnsafeBufferPointer<UInt8>, collectImages: Bool) -> Result {
        // Most titles and many captions have no markup at all: skip the parser for them.
        if !html.contains(where: { $0 == UInt8(ascii: "<") || $0 == UInt8(ascii: "&") }) {
            return Result(text: Self.collapseWhitespace(html), images: [])
        }
        if let simple = SimpleHTML.read(html, collectImages: collectImages, scratch: &simpleScratch) {
            return simple
        }
        guard let context, !html.isEmpty else {
            return Result(text: Self.collapseWhitespace(html), images: [])
        }
        textBytes.removeAll(keepingCapacity: true)
        textBytes.reserveCapacity(html.count)
        images = []
        collectingImages = collectImages
        skippedDepth = 0
        openElements = 0
        let document = html.withMemoryRebound(to: CChar.self) { chars in
            fl_xml_html_read(context, chars.baseAddress, Int32(clamping: chars.count))
        }
        // The document node alone (the default startDocument handler still makes one).
        if let document { xmlFreeDoc(document) }
        return Result(text: Self.collapseWhitespace(textBytes), images: images)
    }

    // MARK: SAX events

    /// An element starts: a word break before block elements, an image, or a skipped subtree.
    /// (libxml2 reports implied elements and closes auto-closed ones, so events always pair up.)
    private func startElement(
        _ name: UnsafePointer<xmlChar>, _ attributes: UnsafeMutablePointer<UnsafePointer<xmlChar>?>?
    ) {
        openElements += 1
        if skippedDepth > 0 {
            skippedDepth += 1
            return
        }
        switch ElementRole(name: name) {
        case .skipped:
            skippedDepth = 1
        case .image:
            if collectingImages, let image = Self.imageReference(Self.attributes(attributes)) { images.append(image) }
        case .breaking:
            textBytes.append(0x20)
        case .inline:
            break
        }
    }

    private func endElement(_ name: UnsafePointer<xmlChar>) {
        openElements -= 1
        if skippedDepth > 0 {
            skippedDepth -= 1
            return
        }
        if ElementRole(name: name).breaksText { textBytes.append(0x20) }
    }

    private func characters(_ bytes: UnsafePointer<xmlChar>, _ count: Int) {
        guard skippedDepth == 0, openElements > 0 else { return }
        textBytes.append(contentsOf: UnsafeBufferPointer(start: bytes, count: count))
    }

    /// The converter behind a parser context, without retaining it (it owns the context).
    @inline(__always)
    private static func withConverter(_ context: UnsafeMutableRawPointer?, _ body: (HTMLTextConverter) -> Void) {
        guard let context else { return }
        let parser = context.assumingMemoryBound(to: xmlParserCtxt.self)
        guard let opaque = parser.pointee.sax?.pointee._private else { return }
        Unmanaged<HTMLTextConverter>.fromOpaque(opaque)._withUnsafeGuaranteedRef(body)
    }

    private static let startElementCallback: startElementSAXFunc = { context, name, attributes in
        guard let name else { return }
        withConverter(context) { $0.startElement(name, attributes) }
    }

    private static let endElementCallback: endElementSAXFunc = { context, name in
        guard let name else { return }
        withConverter(context) { $0.endElement(name) }
    }

    private static let charactersCallback: charactersSAXFunc = { context, bytes, count in
        guard let bytes, count > 0 else { return }
        withConverter(context) { $0.characters(bytes, Int(count)) }
    }

    /// The SAX attribute list (name, value, name, value, …, NULL) by lowercased name; an attribute
    /// without a value is empty, as in libxml2's tree.
    private static func attributes(_ list: UnsafeMutablePointer<UnsafePointer<xmlChar>?>?) -> HTMLAttributes {
        var result = HTMLAttributes()
        guard let list else { return result }
        var index = 0
        while let name = list[index] {
            result.set(String(cString: name).lowercased(), list[index + 1].map { String(cString: $0) } ?? "")
            index += 2
        }
        return result
    }

    // MARK: The tree walk

    /// The same conversion by walking the document tree libxml2 builds: how captions were read before
    /// the SAX path, kept as the reference the SAX path is tested against.
    func convertWithTree(_ html: [UInt8], collectImages: Bool) -> Result {
        if !html.contains(UInt8(ascii: "<")) && !html.contains(UInt8(ascii: "&")) {
            return Result(text: Self.collapseWhitespace(html), images: [])
        }
        if treeContext == nil { treeContext = fl_xml_html_context_create() }
        guard let context = treeContext, !html.isEmpty else {
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
                switch ElementRole(current) {
                case .skipped:
                    descend = false
                case .image:
                    if collectImages, let image = Self.imageReference(Self.attributes(current)) { images.append(image) }
                case .breaking:
                    textBytes.append(0x20)
                case .inline:
                    break
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
                if here.pointee.type == XML_ELEMENT_NODE, ElementRole(here).breaksText {
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

    private static func attributes(_ node: xmlNodePtr) -> HTMLAttributes {
        var result = HTMLAttributes()
        var attribute = node.pointee.properties
        while let current = attribute {
            if let name = current.pointee.name {
                var value = ""
                var child = current.pointee.children
                while let text = child {
                    if let content = text.pointee.content { value += String(cString: content) }
                    child = text.pointee.next
                }
                result.set(String(cString: name).lowercased(), value)
            }
            attribute = current.pointee.next
        }
        return result
    }

    /// The `<img>`'s source, or nil when it has none or is a tracking pixel, an avatar or an icon.
    static func imageReference(_ attributes: HTMLAttributes) -> HTMLImageReference? {
        func usable(_ value: String?) -> String? {
            guard let value = value?.trimmingASCIIWhitespace(), !value.isEmpty else { return nil }
            // The byte test turns away most sources without lowercasing them; the Character test decides the rest.
            return value.hasASCIIPrefixIgnoringCase("data:") && value.lowercased().hasPrefix("data:") ? nil : value
        }
        let lazy = lazyLoadAttributes.lazy.compactMap { usable(attributes[$0]) }.first
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
        return HTMLImageReference(source: source, width: width, height: height, alt: attributes["alt"])
    }

    /// Where lazy-loading scripts keep an `<img>`'s real source, in the order they are read.
    private static let lazyLoadAttributes = [
        "data-src", "data-lazy-src", "data-original", "data-orig-file", "data-lazy",
    ]

    /// Known tracking and decoration hosts and paths; avatars are a person, not the photo.
    static func isTrackerOrAvatar(source: String, className: String) -> Bool {
        lowercased(source, containsAnyOf: trackerMarkers) || lowercased(className, containsAnyOf: classMarkers)
    }

    private static let trackerMarkers: [StaticString] = [
        "feeds.feedburner.com/~r/", "feeds.feedburner.com/~ff/", "/~ff/", "pixel.wp.com",
        "stats.wordpress.com", "doubleclick.net", "/pixel.gif", "/pixel.png", "/tracking",
        "/beacon", "gravatar.com/avatar", "/avatar", "/avatars/", "spacer.gif", "blank.gif",
        "/emoji/", "feedsportal.com",
    ]

    private static let classMarkers: [StaticString] = ["avatar", "emoji", "wp-smiley"]

    /// `text.lowercased().contains(marker)` for any of `markers` (lowercase printable ASCII), as bytes with ASCII
    /// letters folded when `text` is ASCII.
    ///
    /// `String.contains(_: String)` matches whole Characters and builds a search table per call: with one `<img>` per
    /// item, 40 % of ingesting an Atom feed of small items. Lowercasing each source and testing it for ASCII once per
    /// marker were still 1.4 % of ingesting an RSS 1.0 feed of small items (`perf`). In ASCII text a byte match is a
    /// Character match (only CR LF is one Character of two scalars, and no marker holds either); other text keeps
    /// `String`'s own search, so a combining mark after a marker still means what it meant.
    static func lowercased(_ text: String, containsAnyOf markers: [StaticString]) -> Bool {
        var copy = text
        let found = copy.withUTF8 { bytes -> Bool? in
            guard bytes.allSatisfy({ $0 < 0x80 }) else { return nil }
            return markers.contains { marker in
                containsFolded(bytes, UnsafeBufferPointer(start: marker.utf8Start, count: marker.utf8CodeUnitCount))
            }
        }
        if let found { return found }
        let lowered = text.lowercased()
        return markers.contains { lowered.contains($0.description) }
    }

    /// Whether ASCII `bytes`, with A-Z as a-z, hold `needle` (lowercase).
    private static func containsFolded(_ bytes: UnsafeBufferPointer<UInt8>, _ needle: UnsafeBufferPointer<UInt8>)
        -> Bool
    {
        guard let first = needle.first else { return true }
        guard needle.count <= bytes.count else { return false }
        @inline(__always) func folded(_ byte: UInt8) -> UInt8 { byte &- 0x41 < 26 ? byte | 0x20 : byte }
        var start = 0
        while start <= bytes.count - needle.count {
            if folded(bytes[start]) == first {
                var offset = 1
                while offset < needle.count && folded(bytes[start + offset]) == needle[offset] { offset += 1 }
                if offset == needle.count { return true }
            }
            start += 1
        }
        return false
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
        bytes.withUnsafeBufferPointer { looksLikeHTML($0) }
    }

    static func looksLikeHTML(_ bytes: UnsafeBufferPointer<UInt8>) -> Bool {
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
        bytes.withUnsafeBufferPointer { collapseWhitespace($0) }
    }

    static func collapseWhitespace(_ input: UnsafeBufferPointer<UInt8>) -> String {
        // Most fields (URLs, ids, names, one-line titles) are already collapsed: taken as they are.
        if isCollapsed(input) { return String(decoding: input, as: UTF8.self) }
        // Built in place: runs of other bytes are copied whole (most text has one space per word).
        return String(unsafeUninitializedCapacity: input.count) { collapseWhitespace(input, into: $0) }
    }

    /// Whether collapsing would leave `input` as it is: no space at either end, no two spaces in a row, and no
    /// other whitespace or no-break space (checked broadly: no byte below 0x20 and no 0xC2 lead byte at all).
    /// Eight bytes at a time.
    static func isCollapsed(_ input: UnsafeBufferPointer<UInt8>) -> Bool {
        let count = input.count
        guard count > 0 else { return true }
        guard input[0] != 0x20, input[count - 1] != 0x20 else { return false }
        let base = UnsafeRawPointer(input.baseAddress!)
        // Whether the byte before the current word or byte was a space.
        var afterSpace = false
        var index = 0
        while index &+ 8 <= count {
            let word = ByteWord.load(base, at: index)
            guard !ByteWord.hasByte(below: 0x20, in: word), !ByteWord.hasByte(0xC2, in: word) else { return false }
            let spaces = ByteWord.positions(of: 0x20, in: word)
            // Two spaces in a row: within the word, or the previous word's last byte and this one's first.
            guard spaces & (spaces << 8) == 0, !(afterSpace && spaces & 0x80 != 0) else { return false }
            afterSpace = spaces >> 63 != 0
            index &+= 8
        }
        if index < count && count >= 8 {
            // The rest as the last eight bytes, overlapping bytes already checked: the pair across `index` lies
            // inside this word, so only pairs within it need checking.
            let word = ByteWord.load(base, at: count &- 8)
            guard !ByteWord.hasByte(below: 0x20, in: word), !ByteWord.hasByte(0xC2, in: word) else { return false }
            let spaces = ByteWord.positions(of: 0x20, in: word)
            return spaces & (spaces << 8) == 0
        }
        while index < count {
            let byte = input[index]
            guard byte >= 0x20, byte != 0xC2, !(afterSpace && byte == 0x20) else { return false }
            afterSpace = byte == 0x20
            index &+= 1
        }
        return true
    }

    /// The collapsed text as bytes, for a value that is read rather than kept (a date).
    static func collapsedWhitespaceBytes(_ input: UnsafeBufferPointer<UInt8>) -> [UInt8] {
        // Through a stack buffer and a copy: `Array(unsafeUninitializedCapacity:)` is not specialized, and asked
        // the runtime, with a dynamic cast, what storage an array of bytes needs (more than the date's parsing).
        withUnsafeTemporaryAllocation(of: UInt8.self, capacity: input.count) { output in
            Array(UnsafeBufferPointer(rebasing: output[..<collapseWhitespace(input, into: output)]))
        }
    }

    /// Writes the collapsed text of `input` into `output` (at least as large) and returns its length.
    private static func collapseWhitespace(
        _ input: UnsafeBufferPointer<UInt8>, into output: UnsafeMutableBufferPointer<UInt8>
    ) -> Int {
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
            // Then eight bytes at a time while none is a space, a control or a
            // no-break space's lead byte (0xC2): words are copied whole.
            let source = UnsafeRawPointer(input.baseAddress!)
            let target = UnsafeMutableRawPointer(output.baseAddress!)
            while index &+ 8 <= count {
                let word = ByteWord.load(source, at: index)
                guard !ByteWord.hasByte(below: 0x21, in: word), !ByteWord.hasByte(0xC2, in: word) else { break }
                target.storeBytes(of: word.littleEndian, toByteOffset: written, as: UInt64.self)
                written &+= 8
                index &+= 8
            }
        }
        return written
    }
}

/// Reads a declared pixel size leniently: "800", " 800px ", "800.0" and "1024.5" are 800, 800,
/// 800 and 1024; "auto", "100%", "50em" and "" are nil (a percentage or a font-relative size is
/// not a pixel count).
func lenientInteger(_ text: String) -> Int? {
    // On the UTF-8 bytes in place: called for every declared image width and height.
    var text = text
    return text.withUTF8 { bytes in
        func isSpace(_ byte: UInt8) -> Bool { byte == 0x20 || byte == 0x09 || byte == 0x0A || byte == 0x0D }
        func isDigit(_ byte: UInt8) -> Bool { byte >= 0x30 && byte <= 0x39 }
        var index = 0
        while index < bytes.count && isSpace(bytes[index]) { index += 1 }
        var value = 0
        var digits = 0
        while index < bytes.count, isDigit(bytes[index]) {
            if digits < 9 { value = value * 10 + Int(bytes[index] - 0x30) }
            digits += 1
            index += 1
        }
        guard digits > 0 else { return nil }
        if index < bytes.count && bytes[index] == UInt8(ascii: ".") {
            index += 1
            while index < bytes.count, isDigit(bytes[index]) { index += 1 }
        }
        // What follows, without its surrounding whitespace, must be nothing or the unit "px" (any case).
        while index < bytes.count && isSpace(bytes[index]) { index += 1 }
        var end = bytes.count
        while end > index && isSpace(bytes[end - 1]) { end -= 1 }
        let unit = UnsafeBufferPointer(rebasing: bytes[index..<end])
        return unit.isEmpty || unit.equalsASCIIIgnoringCase("px") ? value : nil
    }
}

extension UnsafeBufferPointer<UInt8> {
    /// Whether these bytes spell `ascii` (ASCII letters in any case).
    func equalsASCIIIgnoringCase(_ ascii: StaticString) -> Bool {
        count == ascii.utf8CodeUnitCount && hasASCIIPrefixIgnoringCase(ascii)
    }

    /// Whether these bytes start with `ascii` (ASCII letters in any case).
    func hasASCIIPrefixIgnoringCase(_ ascii: StaticString) -> Bool {
        let length = ascii.utf8CodeUnitCount
        guard count >= length else { return false }
        let expected = ascii.utf8Start
        for index in 0..<length {
            var byte = self[index]
            if byte >= UInt8(ascii: "A") && byte <= UInt8(ascii: "Z") { byte |= 0x20 }
            if byte != expected[index] { return false }
        }
        return true
    }
}

extension String {
    /// Whether the string is `ascii` in any letter case (the lowercase ASCII of a keyword or MIME type), compared
    /// on its bytes rather than through a `lowercased()` copy.
    func equalsASCIIIgnoringCase(_ ascii: StaticString) -> Bool {
        var text = self
        return text.withUTF8 { $0.equalsASCIIIgnoringCase(ascii) }
    }

    /// Whether the string starts with `ascii` in any letter case.
    func hasASCIIPrefixIgnoringCase(_ ascii: StaticString) -> Bool {
        var text = self
        return text.withUTF8 { $0.hasASCIIPrefixIgnoringCase(ascii) }
    }
}

extension String {
    /// The string without leading and trailing ASCII whitespace (no Foundation needed).
    func trimmingASCIIWhitespace() -> String {
        // On UTF-8 bytes: walking Characters (grapheme breaking) cost more than the rest of an
        // image reference's resolution.
        let isSpace: (UInt8) -> Bool = { $0 == 0x20 || $0 == 0x09 || $0 == 0x0A || $0 == 0x0D }
        let bytes = utf8
        // Most values have nothing to trim: their two ends say so (read on the contiguous bytes, which the
        // view's `last` is not).
        let untrimmed = bytes.withContiguousStorageIfAvailable { utf8 in
            guard let head = utf8.first, let tail = utf8.last else { return false }
            return !isSpace(head) && !isSpace(tail)
        }
        if untrimmed == true { return self }
        guard let first = bytes.firstIndex(where: { !isSpace($0) }) else { return "" }
        let last = bytes.lastIndex(where: { !isSpace($0) })!
        if first == bytes.startIndex && last == bytes.index(before: bytes.endIndex) { return self }
        return String(decoding: bytes[first...last], as: UTF8.self)
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

/// The text of simple, well-nested caption HTML, read without libxml2: the common case of a feed's
/// captions ("<p><a href=…>Jane</a> posted a photo:</p> <p><a href=…><img src=…></a></p>"), where
/// parsing accounted for a third of an ingest.
///
/// It gives the same text as libxml2's HTML parser, and declines (returns nil) for anything where the
/// parser's recovery could make a difference: only `p`, `div`, `br`, `img` and common inline elements,
/// properly nested (`p` and inline elements hold only inline content), quoted or plain attribute
/// values, the entities `&amp; &lt; &gt; &quot; &nbsp;` and numeric references to ordinary characters,
/// valid UTF-8 without control characters. Everything else goes to libxml2. (The agreement is tested
/// on the fixtures, the fuzz corpus and generated markup: `HTMLSAXAgreementTests`.)
enum SimpleHTML {
    fileprivate enum Kind {
        case inline, paragraph, division, lineBreak, image
    }

    /// Buffers a caller keeps from one text to the next: three allocations fewer per caption.
    struct Scratch {
        fileprivate var output: [UInt8] = []
        fileprivate var stack: [Kind] = []
        fileprivate var names: [UInt64] = []
        /// The attributes of the `<img>` being read, when images are collected.
        fileprivate var attributes: [AttributeSpan] = []
    }

    /// Where an attribute's name and value are in the input.
    fileprivate struct AttributeSpan {
        var name: Range<Int>
        var value: Range<Int>?
    }

    static func text(_ html: [UInt8]) -> String? {
        var scratch = Scratch()
        return html.withUnsafeBufferPointer { read($0, collectImages: false, scratch: &scratch)?.text }
    }

    /// The text and, when asked, the images of `html`, as ``HTMLTextConverter/convert(_:collectImages:)-([UInt8],_)``
    /// gives them; nil when the markup is not simple.
    static func read(_ html: UnsafeBufferPointer<UInt8>, collectImages: Bool, scratch: inout Scratch)
        -> HTMLTextConverter.Result?
    {
        scratch.output.removeAll(keepingCapacity: true)
        scratch.stack.removeAll(keepingCapacity: true)
        scratch.names.removeAll(keepingCapacity: true)
        var images: [HTMLImageReference]? = collectImages ? [] : nil
        guard
            let text = text(
                html, output: &scratch.output, stack: &scratch.stack, names: &scratch.names,
                attributes: &scratch.attributes, images: &images)
        else { return nil }
        return HTMLTextConverter.Result(text: text, images: images ?? [])
    }

    /// - Parameters:
    ///   - output: the text so far (empty at the start).
    ///   - stack: open elements (empty at the start); `inlineDepth` counts those inside which only inline content
    ///     may follow.
    ///   - names: the open elements' packed names.
    ///   - attributes: room for an `<img>`'s attributes.
    ///   - images: the images so far, or nil when they are not collected.
    private static func text(
        _ input: UnsafeBufferPointer<UInt8>, output: inout [UInt8], stack: inout [Kind], names: inout [UInt64],
        attributes: inout [AttributeSpan], images: inout [HTMLImageReference]?
    ) -> String? {
        output.reserveCapacity(input.count)
        var inlineDepth = 0
        var index = 0
        let count = input.count
        while index < count {
            let byte = input[index]
            switch byte {
            case UInt8(ascii: "<"):
                attributes.removeAll(keepingCapacity: true)
                guard let tag = parseTag(input, from: index + 1, attributes: &attributes, keepingImages: images != nil)
                else { return nil }
                index = tag.end
                if tag.isEnd {
                    if tag.kind == .image { continue }
                    // A "</p>" with no paragraph open (its paragraph was closed by the next "<p>"): the parser
                    // drops it. Unless text came before the first tag: the parser put that text in a paragraph
                    // of its own, which this closes.
                    if tag.name == p && !names.contains(p) {
                        let textBeforeFirstTag = input.prefix { $0 != UInt8(ascii: "<") }.contains { !isSpace($0) }
                        guard !textBeforeFirstTag else { return nil }
                        continue
                    }
                    guard let top = names.last, top == tag.name, let kind = stack.last else { return nil }
                    names.removeLast()
                    stack.removeLast()
                    if kind != .division { inlineDepth -= 1 }
                    if kind != .inline { output.append(0x20) }
                    continue
                }
                switch tag.kind {
                case .image:
                    if images != nil {
                        guard let values = imageAttributes(input, attributes) else { return nil }
                        if let reference = HTMLTextConverter.imageReference(values) { images!.append(reference) }
                    }
                    output.append(0x20)
                case .lineBreak:
                    output.append(0x20)
                case .paragraph, .division:
                    // "<p>" closes a paragraph that is open with nothing inside it still open, as the parser's
                    // auto-close does ("<p>a<p>b"): the paragraph ends, a new one starts.
                    if tag.name == p, inlineDepth == 1, names.last == p {
                        names.removeLast()
                        stack.removeLast()
                        inlineDepth = 0
                        output.append(0x20)
                    }
                    guard inlineDepth == 0 else { return nil }
                    output.append(0x20)
                    if tag.isSelfClosing {
                        output.append(0x20)
                    } else {
                        stack.append(tag.kind)
                        names.append(tag.name)
                        if tag.kind == .paragraph { inlineDepth += 1 }
                    }
                case .inline:
                    // `<a>` inside `<a>` is closed by the parser: not simple.
                    if tag.name == anchor && names.contains(anchor) { return nil }
                    if !tag.isSelfClosing {
                        stack.append(.inline)
                        names.append(tag.name)
                        inlineDepth += 1
                    }
                }
            case UInt8(ascii: "&"):
                guard let end = appendReference(input, from: index, into: &output) else { return nil }
                index = end
            case 0x00..<0x20 where byte != 0x09 && byte != 0x0A && byte != 0x0D:
                return nil
            default:
                // A run of text up to the next markup, copied at once: ASCII (tabs and newlines included)
                // and valid UTF-8 sequences; eight bytes at a time while they are printable ASCII.
                var end = InputSanitizer.endOfPlainTextWords(input, from: index, to: count)
                while end < count {
                    let next = input[end]
                    if next < 0x80 {
                        guard next >= 0x20 || next == 0x09 || next == 0x0A || next == 0x0D,
                            next != UInt8(ascii: "<"), next != UInt8(ascii: "&")
                        else { break }
                        end += 1
                    } else {
                        guard let length = InputSanitizer.validSequenceLength(input, at: end, rejectingC1: true)
                        else { return nil }
                        end += length
                    }
                }
                output.append(contentsOf: UnsafeBufferPointer(rebasing: input[index..<end]))
                index = end
            }
        }
        guard stack.isEmpty else { return nil }
        return HTMLTextConverter.collapseWhitespace(output)
    }

    private struct Tag {
        var name: UInt64
        var kind: Kind
        var isEnd: Bool
        var isSelfClosing: Bool
        var end: Int
    }

    private static let anchor = pack("a")
    private static let amp = pack("amp"), lt = pack("lt"), gt = pack("gt"), quot = pack("quot"), nbsp = pack("nbsp")
    private static let p = pack("p"), div = pack("div"), br = pack("br"), img = pack("img")
    // Inline elements libxml2 keeps whitespace around (its allowPCData list).
    private static let b = pack("b"), i = pack("i"), em = pack("em"), strong = pack("strong"), span = pack("span")
    private static let u = pack("u"), small = pack("small"), big = pack("big"), code = pack("code")
    private static let cite = pack("cite"), font = pack("font"), tt = pack("tt"), q = pack("q")

    /// The kind of a known element (by its packed, lowercased name); nil for any other.
    private static func kind(of name: UInt64) -> Kind? {
        switch name {
        case p: .paragraph
        case div: .division
        case br: .lineBreak
        case img: .image
        case anchor, b, i, em, strong, span, u, small, big, code, cite, font, tt, q: .inline
        default: nil
        }
    }

    private static func pack(_ name: String) -> UInt64 {
        var key: UInt64 = 0
        for (index, byte) in name.utf8.enumerated() { key |= UInt64(byte) << (8 * UInt64(index)) }
        return key
    }

    private static func isLetter(_ byte: UInt8) -> Bool { (byte | 0x20) >= 0x61 && (byte | 0x20) <= 0x7A }
    private static func isDigit(_ byte: UInt8) -> Bool { byte >= 0x30 && byte <= 0x39 }
    private static func isSpace(_ byte: UInt8) -> Bool { byte == 0x20 || byte == 0x09 || byte == 0x0A || byte == 0x0D }

    /// A start or end tag of a known element, from just after its `<`; an `<img>`'s attributes go to `attributes`
    /// when `keepingImages`.
    private static func parseTag(
        _ input: UnsafeBufferPointer<UInt8>, from start: Int, attributes: inout [AttributeSpan], keepingImages: Bool
    ) -> Tag? {
        var index = start
        let count = input.count
        let isEnd = index < count && input[index] == UInt8(ascii: "/")
        if isEnd { index += 1 }
        guard index < count, isLetter(input[index]) else { return nil }
        var name: UInt64 = 0
        var length = 0
        while index < count, isLetter(input[index]) || isDigit(input[index]) {
            guard length < 8 else { return nil }
            name |= UInt64(input[index] | 0x20) << (8 * UInt64(length))
            length += 1
            index += 1
        }
        guard let kind = kind(of: name) else { return nil }
        if isEnd {
            // Void elements have no end tag: "</img>" (as XHTML rebuilt from XML events writes an empty `<img/>`) is
            // ignored by the parser, and so here; "</br>" is left to the parser.
            guard kind != .lineBreak else { return nil }
            while index < count, isSpace(input[index]) { index += 1 }
            guard index < count, input[index] == UInt8(ascii: ">") else { return nil }
            return Tag(name: name, kind: kind, isEnd: true, isSelfClosing: false, end: index + 1)
        }
        while true {
            let afterName = index
            while index < count, isSpace(input[index]) { index += 1 }
            guard index < count else { return nil }
            if input[index] == UInt8(ascii: ">") {
                return Tag(name: name, kind: kind, isEnd: false, isSelfClosing: false, end: index + 1)
            }
            if input[index] == UInt8(ascii: "/") {
                guard index + 1 < count, input[index + 1] == UInt8(ascii: ">") else { return nil }
                return Tag(name: name, kind: kind, isEnd: false, isSelfClosing: true, end: index + 2)
            }
            // An attribute: a name separated from what came before, then maybe "= value".
            guard index > afterName, isLetter(input[index]) else { return nil }
            let nameStart = index
            while index < count,
                isLetter(input[index]) || isDigit(input[index]) || input[index] == UInt8(ascii: "-")
                    || input[index] == UInt8(ascii: "_") || input[index] == UInt8(ascii: ":")
            {
                index += 1
            }
            let keep = keepingImages && kind == .image
            var probe = index
            while probe < count, isSpace(input[probe]) { probe += 1 }
            guard probe < count, input[probe] == UInt8(ascii: "=") else {
                if keep { attributes.append(AttributeSpan(name: nameStart..<index, value: nil)) }
                continue
            }
            let nameEnd = index
            index = probe + 1
            while index < count, isSpace(input[index]) { index += 1 }
            guard index < count else { return nil }
            let quote = input[index]
            if quote == UInt8(ascii: "\"") || quote == UInt8(ascii: "'") {
                index += 1
                let valueStart = index
                // Eight bytes at a time up to the quote or a control character (a link's URL is most of a tag).
                index = ByteWord.endOfUnmarkedWords(UnsafeRawPointer(input.baseAddress!), from: index, to: count) {
                    ByteWord.bytes(equalTo: quote, in: $0) | ByteWord.bytes(below: 0x20, in: $0)
                }
                while index < count, input[index] != quote {
                    // The value is not text; it only has to end (and hold nothing the parser would stop at).
                    guard input[index] >= 0x20 || isSpace(input[index]) else { return nil }
                    index += 1
                }
                guard index < count else { return nil }
                if keep { attributes.append(AttributeSpan(name: nameStart..<nameEnd, value: valueStart..<index)) }
                index += 1
            } else {
                let valueStart = index
                while index < count,
                    isLetter(input[index]) || isDigit(input[index]) || input[index] == UInt8(ascii: "-")
                        || input[index] == UInt8(ascii: "_") || input[index] == UInt8(ascii: ".")
                {
                    index += 1
                }
                guard index > valueStart else { return nil }
                // The parser reads an unquoted value up to a space or ">": "x/>" would be the value "x/".
                guard index < count, isSpace(input[index]) || input[index] == UInt8(ascii: ">") else { return nil }
                if keep { attributes.append(AttributeSpan(name: nameStart..<nameEnd, value: valueStart..<index)) }
            }
        }
    }

    /// An `<img>`'s attributes as libxml2 reports them: names lowercased, the first of a repeated name kept, values
    /// with their references decoded. Nil when a value holds what only the parser should read (a control character,
    /// invalid UTF-8, a reference other than the simple ones).
    private static func imageAttributes(_ input: UnsafeBufferPointer<UInt8>, _ spans: [AttributeSpan])
        -> HTMLAttributes?
    {
        var attributes = HTMLAttributes()
        var value: [UInt8] = []
        for span in spans {
            let name = String(decoding: input[span.name].lazy.map { $0 | (isLetter($0) ? 0x20 : 0) }, as: UTF8.self)
            guard attributes[name] == nil else { continue }
            value.removeAll(keepingCapacity: true)
            if let range = span.value {
                var index = range.lowerBound
                while index < range.upperBound {
                    let byte = input[index]
                    if byte == UInt8(ascii: "&") {
                        guard let end = appendReference(input, from: index, into: &value), end <= range.upperBound
                        else { return nil }
                        index = end
                    } else if byte < 0x20 || byte == 0x7F {
                        return nil
                    } else if byte < 0x80 {
                        value.append(byte)
                        index += 1
                    } else {
                        guard let length = InputSanitizer.validSequenceLength(input, at: index, rejectingC1: true),
                            index + length <= range.upperBound
                        else { return nil }
                        value.append(contentsOf: UnsafeBufferPointer(rebasing: input[index..<(index + length)]))
                        index += length
                    }
                }
            }
            attributes.set(name, String(decoding: value, as: UTF8.self))
        }
        return attributes
    }

    /// Decodes `&amp; &lt; &gt; &quot; &nbsp;` or a numeric reference to an ordinary character.
    /// - Returns: the index after the reference, or nil when it is anything else.
    private static func appendReference(
        _ input: UnsafeBufferPointer<UInt8>, from start: Int, into output: inout [UInt8]
    ) -> Int? {
        let count = input.count
        var index = start + 1
        guard index < count else { return nil }
        if input[index] == UInt8(ascii: "#") {
            index += 1
            var value: UInt32 = 0
            var digits = 0
            let isHex = index < count && (input[index] | 0x20) == UInt8(ascii: "x")
            if isHex { index += 1 }
            while index < count, digits < 7 {
                let byte = input[index]
                let digit: UInt32
                if isDigit(byte) {
                    digit = UInt32(byte - 0x30)
                } else if isHex, (byte | 0x20) >= 0x61, (byte | 0x20) <= 0x66 {
                    digit = UInt32((byte | 0x20) - 0x61 + 10)
                } else {
                    break
                }
                value = value * (isHex ? 16 : 10) + digit
                digits += 1
                index += 1
            }
            guard digits > 0, index < count, input[index] == UInt8(ascii: ";") else { return nil }
            // Ordinary characters only: not controls, C1 (which browsers read as windows-1252),
            // surrogates or non-characters.
            let ordinary =
                value == 0x09 || value == 0x0A || (value >= 0x20 && value < 0x7F) || (value >= 0xA0 && value < 0xD800)
                || (value >= 0xE000 && value < 0xFFFE) || (value >= 0x10000 && value <= 0x10FFFF)
            guard ordinary, let scalar = Unicode.Scalar(value) else { return nil }
            output.append(contentsOf: Array(String(Character(scalar)).utf8))
            return index + 1
        }
        var nameEnd = index
        while nameEnd < count, nameEnd - index < 5, isLetter(input[nameEnd]) { nameEnd += 1 }
        guard nameEnd < count, input[nameEnd] == UInt8(ascii: ";") else { return nil }
        var name: UInt64 = 0
        for position in index..<nameEnd { name |= UInt64(input[position]) << (8 * UInt64(position - index)) }
        switch name {
        case amp: output.append(UInt8(ascii: "&"))
        case lt: output.append(UInt8(ascii: "<"))
        case gt: output.append(UInt8(ascii: ">"))
        case quot: output.append(UInt8(ascii: "\""))
        case nbsp: output.append(contentsOf: [0xC2, 0xA0])
        default: return nil
        }
        return nameEnd + 1
    }
}

/// An element's attributes by lowercased name, in document order: the few an `<img>` has are found by comparing
/// names, not by hashing each (a dictionary's hashing was an eighth of finishing the items of an RSS 1.0 feed whose
/// every caption holds an `<img>`).
struct HTMLAttributes {
    private var pairs: [(name: String, value: String)] = []

    /// The value of the attribute named `name` (lowercase), if any.
    subscript(name: String) -> String? { pairs.first { $0.name == name }?.value }

    /// Gives `name` the value `value`, replacing the one it had.
    mutating func set(_ name: String, _ value: String) {
        if let index = pairs.firstIndex(where: { $0.name == name }) {
            pairs[index].value = value
        } else {
            pairs.append((name, value))
        }
    }
}
