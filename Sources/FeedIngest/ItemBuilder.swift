import ByteTools

/// The text fields an item can carry, by meaning rather than by element name.
enum ItemField: Int, CaseIterable {
    case title, mediaTitle, link, guid, atomID, dcIdentifier
    case description, summary, contentEncoded, atomContent, mediaDescription
    case author, dcCreator, atomAuthorName, mediaCredit, itunesAuthor
    case pubDate, published, issued, dcDate, created, updated, modified
    /// FeedLayout's own extension (`urn:feedlayout:1`): `<fl:span>` and `<fl:section>`.
    case layoutSpan, layoutSection

    /// The field's bit in a set of fields (there are fewer than 32).
    var bit: UInt32 { 1 << UInt32(rawValue) }

    /// Whether the field is text a card shows (read as plain text or markup), not a value kept as written.
    var isDisplayText: Bool {
        switch self {
        case .title, .mediaTitle, .description, .summary, .contentEncoded, .atomContent, .mediaDescription: true
        default: false
        }
    }
}

/// How a captured field's text must be read.
enum TextKind {
    /// Plain text: never run through the HTML parser ("a < b" stays as it is).
    case plain
    /// Escaped HTML (RSS description, Atom `type="html"`).
    case html
    /// Text that is HTML only if it looks like it (RSS titles): "Fish <3" and "<Feed>" stay text,
    /// "<b>Bold</b>" does not. feedparser makes the same guess (`_looks_like_html`).
    case maybeHTML
    /// Inline XHTML (Atom `type="xhtml"`); the markup is rebuilt from the XML events.
    case xhtml
}

/// An image reference as declared, before resolution (resolution waits for the item's end, where
/// the finisher has the allowed folders and its caches).
struct RawImage {
    var origin: String
    var url: String
    var width: String?
    var height: String?
    var type: String?
    var medium: String?
    var isDefault = false
    var base: String?
    var line: Int?
    /// Alternative text: an `<img alt>`, a JSON Feed attachment's title, or the `media:description` /
    /// `media:title` inside a Media RSS element (the description wins: ``altDescription``, ``altTitle``).
    var alt: String?
    var altDescription: String?
    var altTitle: String?
}

/// A field's text as captured (where it is in its item's ``ItemBuilder/text``), how to read it, and the line its
/// element starts on.
struct CapturedField {
    let field: ItemField
    var range: Range<Int>
    var kind: TextKind
    var line: Int?
}

/// Collects one item's raw data while the parser is inside it.
struct ItemBuilder {
    /// The fields set, in the order first set: an item has a handful of the 25 kinds, so a short list
    /// (one allocation) rather than three arrays indexed by field (three allocations per item).
    private(set) var captured: [CapturedField] = []
    /// The captured fields' bytes, one after another: one allocation per item rather than one per field, made
    /// on the parser's task and freed on the finisher's.
    private(set) var text: [UInt8] = []
    /// One bit per `ItemField` in `captured`: finishing asks for some twenty fields an item mostly lacks, and a
    /// scan of the list for each cost a retain and a release per element passed.
    private var capturedMask: UInt32 = 0
    var images: [RawImage] = []
    var warnings: [FeedWarning] = []
    var suppressedWarnings = 0
    /// The `xml:base` in effect on the item element.
    var base: String?
    /// Fields whose element had another `xml:base` in effect than the item (its own, or one of a
    /// wrapper): rare, so a list that stays empty (and unallocated) for most items.
    var fieldBases: [(field: ItemField, base: String?)] = []
    /// The field whose text arrives base64-encoded (Atom 0.3 `mode="base64"`): decoded when it is set.
    var base64Field: ItemField?
    /// RSS 1.0 `rdf:about`, an id of last resort before the hash.
    var about: String?
    /// The link from Atom `<link rel="alternate" href>`, when there is one.
    var alternateLink: String?
    /// RSS `<guid isPermaLink>`: true unless it says "false" (RSS 2.0's default).
    var guidIsPermaLink = true

    static let maximumWarnings = 50
    var repairSummaries = RepairSummaries()

    mutating func recordRepair(_ repair: InputSanitizer.Repair) {
        if warnings.count >= Self.maximumWarnings && !repairSummaries.has(repair.kind) {
            suppressedWarnings += repair.count
            return
        }
        repairSummaries.record(repair, into: &warnings)
    }

    /// Sets a field's text unless an earlier element already gave it one.
    /// - Parameters:
    ///   - base: the `xml:base` in effect on the field's element: the base of a relative `<link>` and
    ///     of the `<img>` in its HTML.
    mutating func set(_ field: ItemField, _ bytes: [UInt8], kind: TextKind, line: Int? = nil, base: String? = nil) {
        bytes.withUnsafeBufferPointer { set(field, $0, kind: kind, line: line, base: base) }
    }

    /// Sets a field's text, as ``set(_:_:kind:line:base:)-([UInt8],_,_,_,_)``, from bytes the caller keeps.
    mutating func set(
        _ field: ItemField, _ bytes: UnsafeBufferPointer<UInt8>, kind: TextKind, line: Int? = nil, base: String? = nil
    ) {
        if base64Field == field {
            base64Field = nil
            if let decoded = Base64.decodeLeniently(Array(bytes)) {
                decoded.withUnsafeBufferPointer { set(field, $0, kind: kind, line: line, base: base) }
                return
            }
        }
        // The first occurrence wins, as in feedparser; an empty one does not block a later one.
        let position = position(of: field)
        if let position, text[captured[position].range].contains(where: { !Self.isSpace($0) }) { return }
        // Room for a small item's fields at once (an RSS item's six or seven come to a few hundred bytes).
        if text.isEmpty { text.reserveCapacity(max(bytes.count, 512)) }
        let start = text.count
        text.append(contentsOf: bytes)
        let value = CapturedField(field: field, range: start..<text.count, kind: kind, line: line)
        if let position {
            captured[position] = value
        } else {
            if captured.isEmpty { captured.reserveCapacity(8) }
            captured.append(value)
            capturedMask |= field.bit
        }
        if !fieldBases.isEmpty { fieldBases.removeAll { $0.field == field } }
        if base != self.base { fieldBases.append((field, base)) }
    }

    /// A field's capture, if its element was seen.
    func captured(_ field: ItemField) -> CapturedField? {
        position(of: field).map { captured[$0] }
    }

    /// Calls `body` with a captured field's bytes, in place.
    func withBytes<Result>(of field: CapturedField, _ body: (UnsafeBufferPointer<UInt8>) -> Result) -> Result {
        text.withUnsafeBufferPointer { body(UnsafeBufferPointer(rebasing: $0[field.range])) }
    }

    private func position(of field: ItemField) -> Int? {
        guard capturedMask & field.bit != 0 else { return nil }
        for index in captured.indices where captured[index].field == field { return index }
        return nil
    }

    /// The `xml:base` in effect on a field's element.
    func base(of field: ItemField) -> String? {
        fieldBases.last(where: { $0.field == field }).map(\.base) ?? base
    }

    mutating func warn(_ warning: FeedWarning) {
        Self.add(warning, to: &warnings, suppressed: &suppressedWarnings)
    }

    /// Adds a warning to an item's list, or counts it as dropped once the list is full.
    static func add(_ warning: FeedWarning, to warnings: inout [FeedWarning], suppressed: inout Int) {
        guard warnings.count < maximumWarnings else {
            suppressed += 1
            return
        }
        warnings.append(warning)
    }

    static func isSpace(_ byte: UInt8) -> Bool { byte == 0x20 || byte == 0x09 || byte == 0x0A || byte == 0x0D }
}

/// An item's warnings while it is finished: those of the builder, then the finisher's, under the same limit.
struct ItemWarnings {
    var list: [FeedWarning]
    var suppressed: Int

    mutating func add(_ warning: FeedWarning) {
        ItemBuilder.add(warning, to: &list, suppressed: &suppressed)
    }
}

/// Turns an `ItemBuilder` into a `FeedItem`: text conversion, dates, ids, URL resolution and the
/// image choice.
struct ItemFinisher {
    let resolver: URLResolver
    let converter: HTMLTextConverter
    let options: FeedIngestOptions

    /// Builds the record.
    /// - Parameters:
    ///   - builder: the raw item.
    ///   - index: its position in the feed.
    /// - Returns: the finished item.
    func finish(_ builder: borrowing ItemBuilder, index: Int) -> FeedItem {
        // Only the warnings change while finishing: kept apart, so that the builder is read in place rather
        // than copied (a copy retains and releases a dozen references).
        var warnings = ItemWarnings(list: builder.warnings, suppressed: builder.suppressedWarnings)
        // With no image element at all, the photo will be looked for in the caption's HTML: the caption read for its
        // text gives its images in the same pass, kept here, rather than a second conversion of the same markup.
        let captionImagesNeeded = !builder.images.contains(where: isImage)
        var convertedCaption: (field: ItemField, images: [HTMLImageReference])?
        func plain(_ field: ItemField) -> String? {
            guard let captured = builder.captured(field) else { return nil }
            let collect = captionImagesNeeded && Self.htmlFields.contains(field)
            func converted(_ bytes: UnsafeBufferPointer<UInt8>) -> String {
                let result = converter.convert(bytes, collectImages: collect)
                if collect { convertedCaption = (field, result.images) }
                return result.text
            }
            let text = builder.withBytes(of: captured) { bytes in
                switch captured.kind {
                case .plain: HTMLTextConverter.collapseWhitespace(bytes)
                case .html, .xhtml: converted(bytes)
                case .maybeHTML:
                    HTMLTextConverter.looksLikeHTML(bytes)
                        ? converted(bytes) : HTMLTextConverter.collapseWhitespace(bytes)
                }
            }
            return text.isEmpty ? nil : text
        }
        func raw(_ field: ItemField) -> String? {
            guard let captured = builder.captured(field) else { return nil }
            let text = builder.withBytes(of: captured) { HTMLTextConverter.collapseWhitespace($0) }
            return text.isEmpty ? nil : text
        }

        let title = (plain(.title) ?? plain(.mediaTitle)).map { truncateText($0, limit: options.maxTextLength) }
        // With no <link>, the item's URL is its permalink: RSS 2.0's guid unless isPermaLink="false",
        // else an Atom id. Only an http(s) one: "item-7" or "tag:…" is an id, not a link (feedparser
        // takes any permalink guid, and never an Atom id).
        let guid = raw(.guid)
        func webAddress(_ text: String?) -> String? { text.flatMap { URLResolver.isHTTP($0) ? $0 : nil } }
        let permalink = (builder.guidIsPermaLink ? webAddress(guid) : nil) ?? webAddress(raw(.atomID))
        let link =
            raw(.link).map { resolver.resolveLink($0, base: builder.base(of: .link)) } ?? builder.alternateLink
            ?? permalink

        var text: String?
        var captionImages: [HTMLImageReference] = []
        for field in Self.captionFields {
            if let candidate = plain(field) {
                text = truncateText(candidate, limit: options.maxTextLength)
                break
            }
        }

        let author = authorName(
            raw(.author) ?? raw(.dcCreator) ?? raw(.atomAuthorName) ?? raw(.mediaCredit) ?? raw(.itunesAuthor))

        // The first date field with text, its whitespace collapsed as any raw field's, read on its bytes: the text
        // itself is needed only when it is not a date.
        var published: String?
        var unreadDate: String?
        for field in Self.dateFields {
            guard let captured = builder.captured(field) else { continue }
            // The common case, an RFC 822 date with nothing to collapse, is read where it was captured.
            let inPlace = builder.withBytes(of: captured) { bytes in
                HTMLTextConverter.isCollapsed(bytes) ? FeedDate.parseRFC822(bytes).map(FeedDate.format) : nil
            }
            if let inPlace {
                published = inPlace
                break
            }
            let date = builder.withBytes(of: captured) { HTMLTextConverter.collapsedWhitespaceBytes($0) }
            guard !date.isEmpty else { continue }
            published = FeedDate.iso8601(from: date)
            if published == nil {
                let dateText = String(decoding: date, as: UTF8.self)
                unreadDate = dateText
                warnings.add(
                    FeedWarning(
                        code: "invalidDate", message: "unparseable date '\(dateText.prefix(80))'; published is null",
                        line: captured.line))
            }
            break
        }

        // Images declared by elements; caption <img> only when there are none.
        var candidates: [Candidate] = []
        for rawImage in builder.images where isImage(rawImage) {
            guard let candidate = resolve(rawImage, warnings: &warnings) else { continue }
            candidates.append(candidate)
        }
        if candidates.isEmpty {
            var captionBase: String?
            for field in Self.htmlFields {
                guard let captured = builder.captured(field), captured.kind != .plain else { continue }
                if let convertedCaption, convertedCaption.field == field {
                    captionImages = convertedCaption.images
                } else {
                    captionImages = builder.withBytes(of: captured) {
                        converter.convert($0, collectImages: true).images
                    }
                }
                captionBase = builder.base(of: field)
                if !captionImages.isEmpty { break }
            }
            for reference in captionImages {
                var rawImage = RawImage(
                    origin: "html:img", url: reference.source, width: reference.width, height: reference.height,
                    base: captionBase)
                rawImage.alt = reference.alt
                guard let candidate = resolve(rawImage, warnings: &warnings) else { continue }
                candidates.append(candidate)
            }
        }
        let chosen = Self.choice(candidates)

        let id =
            guid ?? raw(.atomID) ?? raw(.dcIdentifier) ?? link ?? builder.about
            ?? Self.stableHash(title: title, date: published ?? unreadDate, text: text)

        if warnings.suppressed > 0 {
            warnings.list.append(
                FeedWarning(
                    code: "tooManyWarnings",
                    message: "\(warnings.suppressed) more warnings for this item were dropped"))
        }
        let hints = layoutHints(
            span: raw(.layoutSpan), section: raw(.layoutSection), builder: builder, warnings: &warnings)
        return FeedItem(
            index: index, id: id, title: title, text: text, link: link, author: author, published: published,
            image: chosen.image, imageFallbacks: chosen.fallbacks, images: candidates.map(\.image), layout: hints,
            warnings: warnings.list)
    }

    /// Reads the layout extension's values; a span that is neither a column count nor `full` is dropped with a
    /// warning (the item still gets one column).
    private func layoutHints(
        span: String?, section: String?, builder: ItemBuilder, warnings: inout ItemWarnings
    ) -> LayoutHints {
        var hints = LayoutHints(section: section.map { truncateText($0, limit: options.maxTextLength) })
        if let span {
            if let parsed = SpanHint(span) {
                hints.span = parsed
            } else {
                warnings.add(
                    FeedWarning(
                        code: "invalidSpan",
                        message:
                            "fl:span '\(span.prefix(40))' is neither a column count (1, 2, …) nor 'full'; the item takes one column",
                        line: builder.captured(.layoutSpan)?.line))
            }
        }
        return hints
    }

    /// "jane@example.com (Jane Doe)" → "Jane Doe", as feedparser's `author_detail.name`.
    func authorName(_ author: String?) -> String? {
        guard let author else { return nil }
        // On UTF-8 bytes ('@', '(' and ')' are ASCII): a Character walk cost 12,000 instructions per item.
        let bytes = author.utf8
        // The common name without an address is answered on its contiguous bytes (a generic walk cost 360).
        let hasAddress =
            bytes.withContiguousStorageIfAvailable { $0.contains(UInt8(ascii: "@")) }
            ?? bytes.contains(UInt8(ascii: "@"))
        if hasAddress, let open = bytes.firstIndex(of: UInt8(ascii: "(")),
            let close = bytes.lastIndex(of: UInt8(ascii: ")")), open < close
        {
            let name = String(decoding: bytes[bytes.index(after: open)..<close], as: UTF8.self)
                .trimmingASCIIWhitespace()
            if !name.isEmpty { return name }
        }
        return author
    }

    /// The caption's fields, the summary first (that is what a card shows), then the full content.
    private static let captionFields: [ItemField] = [
        .description, .summary, .contentEncoded, .atomContent, .mediaDescription,
    ]
    /// The date fields, in the order the published date is taken from.
    private static let dateFields: [ItemField] = [
        .pubDate, .published, .issued, .dcDate, .created, .updated, .modified,
    ]
    /// Where caption images are looked for when no element declared one.
    private static let htmlFields: [ItemField] = [.contentEncoded, .atomContent, .description, .summary]

    private static let imageExtensions: Set<String> = [
        "jpg", "jpeg", "jpe", "png", "gif", "webp", "avif", "heic", "heif", "bmp", "tif", "tiff", "svg", "jxl",
    ]
    private static let nonImageExtensions: Set<String> = [
        "mp4", "m4v", "mov", "webm", "mkv", "avi", "mp3", "m4a", "aac", "ogg", "oga", "wav", "flac", "pdf", "zip",
    ]

    static func pathExtension(_ url: String) -> String {
        var url = url
        // On the UTF-8 bytes in place, from the end of the path back to its last dot or slash.
        return url.withUTF8 { bytes in
            var index = URLResolver.queryOrFragmentStart(bytes) ?? bytes.count
            let end = index
            while index > 0 {
                index -= 1
                switch bytes[index] {
                case UInt8(ascii: "."):
                    return String(decoding: UnsafeBufferPointer(rebasing: bytes[(index + 1)..<end]), as: UTF8.self)
                        .lowercased()
                case UInt8(ascii: "/"): return ""
                default: continue
                }
            }
            return ""
        }
    }

    /// Whether a declared reference is an image: medium, then MIME type, then extension.
    func isImage(_ image: RawImage) -> Bool {
        if let medium = image.medium, !medium.isEmpty { return medium.equalsASCIIIgnoringCase("image") }
        if let type = image.type, !type.isEmpty { return type.hasASCIIPrefixIgnoringCase("image/") }
        let pathExtension = Self.pathExtension(image.url)
        switch image.origin {
        case "media:content":
            // Photo feeds often omit both; only a clearly non-image file is refused.
            return !Self.nonImageExtensions.contains(pathExtension)
        case "enclosure", "atom:link":
            return Self.imageExtensions.contains(pathExtension)
        default:
            return true
        }
    }

    /// An image of the item with what it was declared as, and whether it can be used (a refused
    /// local path is kept by reference, but an image that can be read wins the choice over it).
    struct Candidate {
        var image: FeedImage
        /// Its place in the choice order (see ``ranked(_:)``); nil for an origin that is never chosen.
        var group: Int?
        var usable = true
    }

    /// The image and whether it is usable (not refused), or nil when the reference is empty or `data:`.
    ///
    /// The base is the `xml:base` in effect on the element, else the feed document's own location (XML
    /// Base, RFC 3986 section 5.1): never the item's `<link>`, which is the address of a web page, not
    /// of the feed.
    private func resolve(_ raw: RawImage, warnings: inout ItemWarnings) -> Candidate? {
        let url = raw.url.trimmingASCIIWhitespace()
        guard !url.isEmpty, !url.hasASCIIPrefixIgnoringCase("data:") else { return nil }
        let resolved = resolver.resolveImage(url, base: raw.base)
        if let refusal = resolved.refusal {
            // The item keeps its image reference (unread: no local path), so that a layout can
            // still use the declared size; the warning says why it was not read.
            warnings.add(FeedWarning(code: "refusedPath", message: refusal, line: raw.line))
        }
        let image = FeedImage(
            url: resolved.url, localPath: resolved.localPath,
            width: size(raw.width, name: "width", raw: raw, warnings: &warnings),
            height: size(raw.height, name: "height", raw: raw, warnings: &warnings),
            type: raw.type.map { $0.trimmingASCIIWhitespace() }.flatMap { $0.isEmpty ? nil : $0 },
            origin: raw.origin, alt: alternativeText(raw))
        return Candidate(
            image: image, group: Self.group(origin: raw.origin, isDefault: raw.isDefault),
            usable: resolved.refusal == nil)
    }

    /// The image's alternative text, whitespace collapsed and cut as titles are; nil when it has none.
    private func alternativeText(_ raw: RawImage) -> String? {
        guard let text = raw.altDescription ?? raw.altTitle ?? raw.alt else { return nil }
        let collapsed = HTMLTextConverter.collapseWhitespace(Array(text.utf8))
        return collapsed.isEmpty ? nil : truncateText(collapsed, limit: options.maxTextLength)
    }

    private func size(_ text: String?, name: String, raw: RawImage, warnings: inout ItemWarnings) -> Int? {
        guard let text = text?.trimmingASCIIWhitespace(), !text.isEmpty else { return nil }
        if let value = lenientInteger(text), value > 0 { return value }
        warnings.add(
            FeedWarning(
                code: "invalidSize", message: "\(raw.origin) \(name) '\(text.prefix(40))' is not a size; ignored",
                line: raw.line))
        return nil
    }

    /// Where an image of this origin comes in the choice order (see ``ranked(_:)``); nil for one never chosen.
    static func group(origin: String, isDefault: Bool) -> Int? {
        switch origin {
        case "media:content": isDefault ? 0 : 1
        case _ where origin.hasPrefix("json:"): 2
        case "media:thumbnail": 3
        case "enclosure", "atom:link": 4
        case "itunes:image": 5
        case "html:img": 6
        default: nil
        }
    }

    /// The item's image and its fallbacks, from its candidates (see ``ranked(_:)``).
    static func choice(_ candidates: [Candidate]) -> (image: FeedImage?, fallbacks: [FeedImage]) {
        // Most items declare one image: nothing to rank.
        if candidates.count == 1 { return (candidates[0].group == nil ? nil : candidates[0].image, []) }
        let ranked = ranked(candidates)
        let chosen = ranked.first(where: { $0.usable }) ?? ranked.first
        return (chosen?.image, ranked.filter { $0.usable && $0.index != chosen?.index }.map { $0.image })
    }

    /// The candidates in the choice order: media:content (isDefault, else largest), JSON Feed's
    /// image, media:thumbnail (largest), image enclosure / Atom enclosure link (first), itunes:image,
    /// caption `<img>` (first); equals keep the item's order. The item's image is the first usable
    /// one, so that a refused `media:content` does not hide a readable thumbnail; a refused one is
    /// chosen only when nothing else is left. The usable ones after it are its fallbacks.
    static func ranked(_ candidates: [Candidate]) -> [(index: Int, image: FeedImage, usable: Bool)] {
        func area(_ image: FeedImage) -> Int { (image.width ?? 0) * (image.height ?? image.width.map { _ in 1 } ?? 0) }
        let ranked = candidates.enumerated().compactMap { index, candidate in
            candidate.group.map { (group: $0, index: index, candidate: candidate) }
        }
        .sorted { first, second in
            if first.group != second.group { return first.group < second.group }
            // Media RSS content and thumbnails: the largest first.
            if first.group == 1 || first.group == 3 {
                let (firstArea, secondArea) = (area(first.candidate.image), area(second.candidate.image))
                if firstArea != secondArea { return firstArea > secondArea }
            }
            return first.index < second.index
        }
        return ranked.map { ($0.index, $0.candidate.image, $0.candidate.usable) }
    }

    /// `urn:feedlayout:` + FNV-1a 64 of title, date and caption: stable across runs and machines
    /// (Swift's `hashValue` is seeded per process, so it cannot be used).
    static func stableHash(title: String?, date: String?, text: String?) -> String {
        var hash: UInt64 = 0xcbf2_9ce4_8422_2325
        for part in [title ?? "", date ?? "", text ?? ""] {
            for byte in part.utf8 {
                hash ^= UInt64(byte)
                hash = hash &* 0x100_0000_01b3
            }
            hash ^= 0x1F
            hash = hash &* 0x100_0000_01b3
        }
        let hex = String(hash, radix: 16)
        return "urn:feedlayout:" + String(repeating: "0", count: 16 - hex.count) + hex
    }
}

/// One warning per kind of input repair, counting its occurrences and pointing at the first:
/// a windows-1252 caption has many invalid bytes, and one warning says it better than twenty.
struct RepairSummaries {
    private var entries:
        [(kind: InputSanitizer.Repair.Kind, warningIndex: Int, count: Int, first: InputSanitizer.Repair)] = []

    func has(_ kind: InputSanitizer.Repair.Kind) -> Bool { entries.contains { $0.kind == kind } }

    mutating func record(_ repair: InputSanitizer.Repair, into warnings: inout [FeedWarning]) {
        if let position = entries.firstIndex(where: { $0.kind == repair.kind }) {
            entries[position].count += repair.count
            let entry = entries[position]
            warnings[entry.warningIndex] = Self.warning(entry.first, count: entry.count)
        } else {
            entries.append((repair.kind, warnings.count, repair.count, repair))
            warnings.append(Self.warning(repair, count: repair.count))
        }
    }

    static func warning(_ first: InputSanitizer.Repair, count: Int) -> FeedWarning {
        let code: String
        let what: String
        switch first.kind {
        case .invalidUTF8:
            code = "invalidUTF8"
            what =
                count == 1
                ? "1 byte was not valid UTF-8 and was read as windows-1252"
                : "\(count) bytes were not valid UTF-8 and were read as windows-1252"
        case .controlCharacter:
            code = "controlCharacters"
            what =
                count == 1
                ? "1 control character XML forbids was dropped"
                : "\(count) control characters XML forbids were dropped"
        case .attributeValueCut:
            code = "attributeTruncated"
            what =
                count == 1
                ? "1 attribute value longer than 1 MiB was cut"
                : "\(count) attribute values longer than 1 MiB were cut"
        case .bareAmpersand:
            code = "unescapedAmpersand"
            what =
                count == 1
                ? "1 '&' that starts no reference was read as text"
                : "\(count) '&' that start no reference were read as text"
        }
        return FeedWarning(code: code, message: what, line: first.line, column: first.column)
    }
}
