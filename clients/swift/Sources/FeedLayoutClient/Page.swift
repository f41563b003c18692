import Foundation

/// One page of a precomputed layout, `feedlayout.page/1` (`schemas/feedlayout.page-1.schema.json`): what
/// `feedlayout layout` writes as `page-NNNN.json` and `feedlayout serve` answers at `/v1/layouts/{id}/pages/{n}`.
///
/// Lengths are CSS pixels (points on iOS): whole device pixels divided by `layout.scale`.
///
/// Decoding follows the schema: every required member must be there (a required member that may be `null` must be
/// there too, as `null`), optional members are optionals, and members the client does not know are ignored (a
/// photo's are kept, see ``Photo/otherMembers``). A page whose `schema` is not `feedlayout.page/1` (another major
/// version, whose format this client cannot know) is refused with ``UnsupportedPageSchema``. Encoding writes the
/// same members back: decoding a page and encoding it again gives the same JSON values.
public struct Page: Codable, Hashable, Sendable {
    /// The only schema this client reads; a page's `schema` names its format's major version.
    public static let schemaName = "feedlayout.page/1"

    /// The feed the page belongs to; only when one run lays out several feeds.
    public var feed: String?
    /// The page's index, item count and range, and its extent on the scroll axis.
    public var page: PageRange
    /// The grid the pins were placed on.
    public var layout: Grid
    /// Sections that start or end with this page's pins, in order; `nil` when there are none.
    public var sections: [SectionEvent]?
    /// The page's pins, in feed order.
    public var items: [Item]
    /// Each column's height after the page (the top of its next pin); horizontal axis: each row's right end; flow:
    /// one value, the next row's top.
    public var columnHeights: [Double]
    /// The layout's extent on the scroll axis so far, bottom inset included.
    public var contentHeight: Double
    public var quality: Quality
    /// The cursor that continues after this page (`/v1/pages?cursor=`); `nil` on the last page.
    public var cursor: String?

    public init(
        feed: String? = nil, page: PageRange, layout: Grid, sections: [SectionEvent]? = nil, items: [Item],
        columnHeights: [Double], contentHeight: Double, quality: Quality, cursor: String?
    ) {
        self.feed = feed
        self.page = page
        self.layout = layout
        self.sections = sections
        self.items = items
        self.columnHeights = columnHeights
        self.contentHeight = contentHeight
        self.quality = quality
        self.cursor = cursor
    }

    /// Decodes a page from its JSON bytes.
    public init(json: Data) throws {
        self = try JSONDecoder().decode(Page.self, from: json)
    }

    enum CodingKeys: String, CodingKey {
        case schema, feed, page, layout, sections, items, columnHeights, contentHeight, quality, cursor
    }

    public init(from decoder: any Decoder) throws {
        let container = try decoder.container(keyedBy: CodingKeys.self)
        let schema = try container.decode(String.self, forKey: .schema)
        guard schema == Self.schemaName else { throw UnsupportedPageSchema(found: schema) }
        feed = try container.decodeIfPresent(String.self, forKey: .feed)
        page = try container.decode(PageRange.self, forKey: .page)
        layout = try container.decode(Grid.self, forKey: .layout)
        sections = try container.decodeIfPresent([SectionEvent].self, forKey: .sections)
        items = try container.decode([Item].self, forKey: .items)
        columnHeights = try container.decode([Double].self, forKey: .columnHeights)
        contentHeight = try container.decode(Double.self, forKey: .contentHeight)
        quality = try container.decode(Quality.self, forKey: .quality)
        cursor = try container.decode(String?.self, forKey: .cursor)
    }

    public func encode(to encoder: any Encoder) throws {
        var container = encoder.container(keyedBy: CodingKeys.self)
        try container.encode(Self.schemaName, forKey: .schema)
        try container.encodeIfPresent(feed, forKey: .feed)
        try container.encode(page, forKey: .page)
        try container.encode(layout, forKey: .layout)
        try container.encodeIfPresent(sections, forKey: .sections)
        try container.encode(items, forKey: .items)
        try container.encode(columnHeights, forKey: .columnHeights)
        try container.encode(contentHeight, forKey: .contentHeight)
        try container.encode(quality, forKey: .quality)
        try container.encode(cursor, forKey: .cursor)
    }
}

/// A page of a format this client does not read: `schema` is not `feedlayout.page/1`.
public struct UnsupportedPageSchema: Error, CustomStringConvertible, LocalizedError, Hashable, Sendable {
    /// The page's `schema` member.
    public var found: String

    public var description: String {
        "the page is \(found), a format this client does not read: FeedLayoutClient reads \(Page.schemaName) "
            + "(a new major version changes the page format incompatibly; use a FeedLayoutClient that reads it)"
    }
    public var errorDescription: String? { description }
}

/// `page`: the page's place in the layout.
public struct PageRange: Codable, Hashable, Sendable {
    /// The page's index, from 0.
    public var index: Int
    public var itemCount: Int
    /// The index of the page's first pin; `nil` for a page without pins.
    public var firstItem: Int?
    public var lastItem: Int?
    /// The first pin's start on the scroll axis (y; x on the horizontal axis).
    public var top: Double
    /// The furthest end of the page's pins on the scroll axis.
    public var bottom: Double

    public init(index: Int, itemCount: Int, firstItem: Int?, lastItem: Int?, top: Double, bottom: Double) {
        self.index = index
        self.itemCount = itemCount
        self.firstItem = firstItem
        self.lastItem = lastItem
        self.top = top
        self.bottom = bottom
    }

    enum CodingKeys: String, CodingKey { case index, itemCount, firstItem, lastItem, top, bottom }

    public init(from decoder: any Decoder) throws {
        let container = try decoder.container(keyedBy: CodingKeys.self)
        index = try container.decode(Int.self, forKey: .index)
        itemCount = try container.decode(Int.self, forKey: .itemCount)
        firstItem = try container.decode(Int?.self, forKey: .firstItem)
        lastItem = try container.decode(Int?.self, forKey: .lastItem)
        top = try container.decode(Double.self, forKey: .top)
        bottom = try container.decode(Double.self, forKey: .bottom)
    }

    public func encode(to encoder: any Encoder) throws {
        var container = encoder.container(keyedBy: CodingKeys.self)
        try container.encode(index, forKey: .index)
        try container.encode(itemCount, forKey: .itemCount)
        try container.encode(firstItem, forKey: .firstItem)
        try container.encode(lastItem, forKey: .lastItem)
        try container.encode(top, forKey: .top)
        try container.encode(bottom, forKey: .bottom)
    }
}

/// `layout`: the grid. A waterfall (no `mode`) has columns, a column width, a direction and a placement, and with
/// `axis` horizontal also a `height`; a flow layout (`mode` flow) has a row photo height, an alignment, a follow
/// mode and an item gap.
public struct Grid: Codable, Hashable, Sendable {
    /// `layout.mode`: present only for flow layouts.
    public enum Mode: String, Codable, Hashable, Sendable {
        /// Rows of pins as wide as their photos.
        case flow
    }

    /// `layout.axis`: present only for the horizontal waterfall.
    public enum Axis: String, Codable, Hashable, Sendable {
        /// `columns` are rows, positions grow to the right, and the page's top/bottom, column heights and content
        /// height are x extents.
        case horizontal
    }

    /// The container's width.
    public var width: Double
    public var columns: Int?
    public var columnWidth: Double?
    public var contentWidth: Double?
    /// Device pixels per CSS pixel.
    public var scale: Double
    public var direction: Direction?
    public var placement: Placement?
    public var mode: Mode?
    public var axis: Axis?
    /// Horizontal axis: the container's height.
    public var height: Double?
    /// Flow: the height every photo is fitted to.
    public var rowPhotoHeight: Double?
    public var alignment: Alignment?
    public var follow: Bool?
    /// Flow: the gap between two pins of a row.
    public var itemGap: Double?
    /// The font files the title and caption were measured with.
    public var fonts: Fonts

    /// Whether pins scroll vertically (every layout but the horizontal waterfall).
    public var scrollsVertically: Bool { axis == nil }

    public init(
        width: Double, columns: Int? = nil, columnWidth: Double? = nil, contentWidth: Double? = nil, scale: Double,
        direction: Direction? = nil, placement: Placement? = nil, mode: Mode? = nil, axis: Axis? = nil,
        height: Double? = nil, rowPhotoHeight: Double? = nil, alignment: Alignment? = nil, follow: Bool? = nil,
        itemGap: Double? = nil, fonts: Fonts
    ) {
        self.width = width
        self.columns = columns
        self.columnWidth = columnWidth
        self.contentWidth = contentWidth
        self.scale = scale
        self.direction = direction
        self.placement = placement
        self.mode = mode
        self.axis = axis
        self.height = height
        self.rowPhotoHeight = rowPhotoHeight
        self.alignment = alignment
        self.follow = follow
        self.itemGap = itemGap
        self.fonts = fonts
    }

    enum CodingKeys: String, CodingKey {
        case width, columns, columnWidth, contentWidth, scale, direction, placement, mode, axis, height
        case rowPhotoHeight, alignment, follow, itemGap, fonts
    }

    public init(from decoder: any Decoder) throws {
        let container = try decoder.container(keyedBy: CodingKeys.self)
        mode = try container.decodeIfPresent(Mode.self, forKey: .mode)
        axis = try container.decodeIfPresent(Axis.self, forKey: .axis)
        width = try container.decode(Double.self, forKey: .width)
        scale = try container.decode(Double.self, forKey: .scale)
        fonts = try container.decode(Fonts.self, forKey: .fonts)
        height = try container.decodeIfPresent(Double.self, forKey: .height)
        if mode == .flow {
            rowPhotoHeight = try container.decode(Double.self, forKey: .rowPhotoHeight)
            alignment = try container.decode(Alignment.self, forKey: .alignment)
            follow = try container.decode(Bool.self, forKey: .follow)
            itemGap = try container.decode(Double.self, forKey: .itemGap)
            columns = try container.decodeIfPresent(Int.self, forKey: .columns)
            columnWidth = try container.decodeIfPresent(Double.self, forKey: .columnWidth)
            contentWidth = try container.decodeIfPresent(Double.self, forKey: .contentWidth)
            direction = try container.decodeIfPresent(Direction.self, forKey: .direction)
            placement = try container.decodeIfPresent(Placement.self, forKey: .placement)
        } else {
            columns = try container.decode(Int.self, forKey: .columns)
            columnWidth = try container.decode(Double.self, forKey: .columnWidth)
            contentWidth = try container.decode(Double.self, forKey: .contentWidth)
            direction = try container.decode(Direction.self, forKey: .direction)
            placement = try container.decode(Placement.self, forKey: .placement)
            rowPhotoHeight = try container.decodeIfPresent(Double.self, forKey: .rowPhotoHeight)
            alignment = try container.decodeIfPresent(Alignment.self, forKey: .alignment)
            follow = try container.decodeIfPresent(Bool.self, forKey: .follow)
            itemGap = try container.decodeIfPresent(Double.self, forKey: .itemGap)
        }
        guard scale > 0, scale.isFinite else {
            throw DecodingError.dataCorruptedError(
                forKey: .scale, in: container, debugDescription: "layout.scale is \(scale); it must be above 0")
        }
    }

    public func encode(to encoder: any Encoder) throws {
        var container = encoder.container(keyedBy: CodingKeys.self)
        try container.encodeIfPresent(mode, forKey: .mode)
        try container.encodeIfPresent(axis, forKey: .axis)
        try container.encodeIfPresent(height, forKey: .height)
        try container.encode(width, forKey: .width)
        try container.encodeIfPresent(columns, forKey: .columns)
        try container.encodeIfPresent(columnWidth, forKey: .columnWidth)
        try container.encodeIfPresent(contentWidth, forKey: .contentWidth)
        try container.encodeIfPresent(rowPhotoHeight, forKey: .rowPhotoHeight)
        try container.encodeIfPresent(alignment, forKey: .alignment)
        try container.encodeIfPresent(follow, forKey: .follow)
        try container.encodeIfPresent(itemGap, forKey: .itemGap)
        try container.encode(scale, forKey: .scale)
        try container.encodeIfPresent(direction, forKey: .direction)
        try container.encodeIfPresent(placement, forKey: .placement)
        try container.encode(fonts, forKey: .fonts)
    }
}

/// `layout.fonts`: the font files the title and the caption were measured with, each list in the order a
/// character looks for its glyph (the primary font, then the fallbacks). Load the same files to render the text
/// exactly as measured.
public struct Fonts: Codable, Hashable, Sendable {
    public var title: [FontFile]
    public var caption: [FontFile]

    public init(title: [FontFile], caption: [FontFile]) {
        self.title = title
        self.caption = caption
    }
}

/// One font file of ``Fonts``.
public struct FontFile: Codable, Hashable, Sendable {
    /// The family name the font file declares.
    public var family: String
    /// The style name the font file declares, e.g. Regular or Bold.
    public var style: String
    /// The file's name, without its folder (the service serves it at `/v1/layouts/{id}/fonts/{file}`).
    public var file: String
    /// The face inside a collection (.ttc); 0 for a single font file.
    public var faceIndex: Int
    /// `sha256:` and 64 hex digits: changes whenever the font does.
    public var digest: String

    public init(family: String, style: String, file: String, faceIndex: Int, digest: String) {
        self.family = family
        self.style = style
        self.file = file
        self.faceIndex = faceIndex
        self.digest = digest
    }
}

/// A rectangle in CSS pixels.
public struct Rect: Codable, Hashable, Sendable, CustomStringConvertible {
    public var x: Double
    public var y: Double
    public var width: Double
    public var height: Double

    public init(x: Double, y: Double, width: Double, height: Double) {
        self.x = x
        self.y = y
        self.width = width
        self.height = height
    }

    public var maxX: Double { x + width }
    public var maxY: Double { y + height }
    public var description: String { "(\(x), \(y), \(width) × \(height))" }
}

/// One entry of `sections`: a section that starts or ends with the page's pins.
public struct SectionEvent: Codable, Hashable, Sendable {
    /// `event`. Strict: an unknown event fails decoding (it would change where sections are).
    public enum Kind: String, Codable, Hashable, Sendable {
        case start, end
    }

    public var event: Kind
    /// The section's index.
    public var index: Int
    /// start: the section's key as the feed gives it.
    public var key: String?
    /// Where the section starts on the scroll axis (its header's top).
    public var start: Double
    /// end: where it ends (its footer's bottom); the next section starts here.
    public var end: Double?
    /// end: the section's first and last pin (`nil` for a section without pins).
    public var firstItem: Int?
    public var lastItem: Int?
    public var header: Rect?
    /// end: the footer's frame.
    public var footer: Rect?
    /// end: the bounding box of the section's pins grown by the decoration outset; `nil` when it holds none.
    public var decoration: Rect?

    public init(
        event: Kind, index: Int, key: String? = nil, start: Double, end: Double? = nil, firstItem: Int? = nil,
        lastItem: Int? = nil, header: Rect?, footer: Rect? = nil, decoration: Rect? = nil
    ) {
        self.event = event
        self.index = index
        self.key = key
        self.start = start
        self.end = end
        self.firstItem = firstItem
        self.lastItem = lastItem
        self.header = header
        self.footer = footer
        self.decoration = decoration
    }

    enum CodingKeys: String, CodingKey {
        case event, index, key, start, end, firstItem, lastItem, header, footer, decoration
    }

    public init(from decoder: any Decoder) throws {
        let container = try decoder.container(keyedBy: CodingKeys.self)
        event = try container.decode(Kind.self, forKey: .event)
        index = try container.decode(Int.self, forKey: .index)
        start = try container.decode(Double.self, forKey: .start)
        header = try container.decode(Rect?.self, forKey: .header)
        switch event {
        case .start:
            key = try container.decode(String.self, forKey: .key)
            end = try container.decodeIfPresent(Double.self, forKey: .end)
            firstItem = try container.decodeIfPresent(Int.self, forKey: .firstItem)
            lastItem = try container.decodeIfPresent(Int.self, forKey: .lastItem)
            footer = try container.decodeIfPresent(Rect.self, forKey: .footer)
            decoration = try container.decodeIfPresent(Rect.self, forKey: .decoration)
        case .end:
            key = try container.decodeIfPresent(String.self, forKey: .key)
            end = try container.decode(Double.self, forKey: .end)
            firstItem = try container.decode(Int?.self, forKey: .firstItem)
            lastItem = try container.decode(Int?.self, forKey: .lastItem)
            footer = try container.decode(Rect?.self, forKey: .footer)
            decoration = try container.decode(Rect?.self, forKey: .decoration)
        }
    }

    public func encode(to encoder: any Encoder) throws {
        var container = encoder.container(keyedBy: CodingKeys.self)
        try container.encode(event, forKey: .event)
        try container.encode(index, forKey: .index)
        try container.encodeIfPresent(key, forKey: .key)
        try container.encode(start, forKey: .start)
        try container.encode(header, forKey: .header)
        switch event {
        case .start:
            try container.encodeIfPresent(end, forKey: .end)
            try container.encodeIfPresent(firstItem, forKey: .firstItem)
            try container.encodeIfPresent(lastItem, forKey: .lastItem)
            try container.encodeIfPresent(footer, forKey: .footer)
            try container.encodeIfPresent(decoration, forKey: .decoration)
        case .end:
            try container.encode(end, forKey: .end)
            try container.encode(firstItem, forKey: .firstItem)
            try container.encode(lastItem, forKey: .lastItem)
            try container.encode(footer, forKey: .footer)
            try container.encode(decoration, forKey: .decoration)
        }
    }
}

/// One pin: its cell, photo, title and caption, all placed.
public struct Item: Codable, Hashable, Sendable {
    /// The pin's index in the feed, from 0.
    public var index: Int
    /// The feed's id for the item (a feed may repeat one: `index` is what identifies a pin in a layout).
    public var id: String
    /// The item's identity across versions of the feed (16 hex digits, a digest of `id`): the pin to look for
    /// after switching to a newer layout. `nil` in pages written before keys existed.
    public var key: String?
    public var link: String?
    /// The first column (row, on the horizontal axis) the pin takes.
    public var column: Int
    public var columnSpan: Int
    /// The pin's section index, once the feed has marked sections.
    public var section: Int?
    /// The whole cell.
    public var frame: Rect
    public var photo: Photo
    public var annotation: Annotation
    /// What went wrong with this item.
    public var warnings: [Warning]

    public init(
        index: Int, id: String, key: String? = nil, link: String?, column: Int, columnSpan: Int, section: Int? = nil,
        frame: Rect, photo: Photo, annotation: Annotation, warnings: [Warning] = []
    ) {
        self.index = index
        self.id = id
        self.key = key
        self.link = link
        self.column = column
        self.columnSpan = columnSpan
        self.section = section
        self.frame = frame
        self.photo = photo
        self.annotation = annotation
        self.warnings = warnings
    }

    enum CodingKeys: String, CodingKey {
        case index, id, key, link, column, columnSpan, section, frame, photo, annotation, warnings
    }

    public init(from decoder: any Decoder) throws {
        let container = try decoder.container(keyedBy: CodingKeys.self)
        index = try container.decode(Int.self, forKey: .index)
        id = try container.decode(String.self, forKey: .id)
        key = try container.decodeIfPresent(String.self, forKey: .key)
        link = try container.decode(String?.self, forKey: .link)
        column = try container.decode(Int.self, forKey: .column)
        columnSpan = try container.decode(Int.self, forKey: .columnSpan)
        section = try container.decodeIfPresent(Int.self, forKey: .section)
        frame = try container.decode(Rect.self, forKey: .frame)
        photo = try container.decode(Photo.self, forKey: .photo)
        annotation = try container.decode(Annotation.self, forKey: .annotation)
        warnings = try container.decode([Warning].self, forKey: .warnings)
    }

    public func encode(to encoder: any Encoder) throws {
        var container = encoder.container(keyedBy: CodingKeys.self)
        try container.encode(index, forKey: .index)
        try container.encode(id, forKey: .id)
        try container.encodeIfPresent(key, forKey: .key)
        try container.encode(link, forKey: .link)
        try container.encode(column, forKey: .column)
        try container.encode(columnSpan, forKey: .columnSpan)
        try container.encodeIfPresent(section, forKey: .section)
        try container.encode(frame, forKey: .frame)
        try container.encode(photo, forKey: .photo)
        try container.encode(annotation, forKey: .annotation)
        try container.encode(warnings, forKey: .warnings)
    }
}

/// `photo`: the fitted photo and the slot reserved for it.
public struct Photo: Codable, Hashable, Sendable {
    /// The fitted photo.
    public var frame: Rect
    /// The slot reserved for it (they differ with photo height limits).
    public var slot: Rect
    /// The photo's URL as the feed gives it, resolved (a relative path under the service's image root is served
    /// at `/files/`); `nil` when the item has no photo.
    public var url: String?
    /// The display size used.
    public var width: Double
    public var height: Double
    public var sizeFrom: SizeSource
    public var format: PhotoFormat?
    /// The EXIF orientation, 1 to 8.
    public var orientation: Int?
    /// With the `placeholders` option: an average colour and a ThumbHash to show while the photo loads.
    public var placeholder: Placeholder?
    /// The photo's alternative text, when the feed gives one.
    public var alt: String?
    /// Members this client does not know (the schema lets a photo carry more), kept so that they are written back.
    public var otherMembers: [String: JSONValue]

    public init(
        frame: Rect, slot: Rect, url: String?, width: Double, height: Double, sizeFrom: SizeSource,
        format: PhotoFormat? = nil, orientation: Int? = nil, placeholder: Placeholder? = nil, alt: String? = nil,
        otherMembers: [String: JSONValue] = [:]
    ) {
        self.frame = frame
        self.slot = slot
        self.url = url
        self.width = width
        self.height = height
        self.sizeFrom = sizeFrom
        self.format = format
        self.orientation = orientation
        self.placeholder = placeholder
        self.alt = alt
        self.otherMembers = otherMembers
    }

    enum CodingKeys: String, CodingKey, CaseIterable {
        case frame, slot, url, width, height, sizeFrom, format, orientation, placeholder, alt
    }

    public init(from decoder: any Decoder) throws {
        let container = try decoder.container(keyedBy: CodingKeys.self)
        frame = try container.decode(Rect.self, forKey: .frame)
        slot = try container.decode(Rect.self, forKey: .slot)
        url = try container.decode(String?.self, forKey: .url)
        width = try container.decode(Double.self, forKey: .width)
        height = try container.decode(Double.self, forKey: .height)
        sizeFrom = try container.decode(SizeSource.self, forKey: .sizeFrom)
        format = try container.decodeIfPresent(PhotoFormat.self, forKey: .format)
        orientation = try container.decodeIfPresent(Int.self, forKey: .orientation)
        placeholder = try container.decodeIfPresent(Placeholder.self, forKey: .placeholder)
        alt = try container.decodeIfPresent(String.self, forKey: .alt)
        let known = Set(CodingKeys.allCases.map(\.rawValue))
        let all = try decoder.container(keyedBy: AnyCodingKey.self)
        var others: [String: JSONValue] = [:]
        for key in all.allKeys where !known.contains(key.stringValue) {
            others[key.stringValue] = try all.decode(JSONValue.self, forKey: key)
        }
        otherMembers = others
    }

    public func encode(to encoder: any Encoder) throws {
        var container = encoder.container(keyedBy: CodingKeys.self)
        try container.encode(frame, forKey: .frame)
        try container.encode(slot, forKey: .slot)
        try container.encode(url, forKey: .url)
        try container.encode(width, forKey: .width)
        try container.encode(height, forKey: .height)
        try container.encode(sizeFrom, forKey: .sizeFrom)
        try container.encodeIfPresent(format, forKey: .format)
        try container.encodeIfPresent(orientation, forKey: .orientation)
        try container.encodeIfPresent(placeholder, forKey: .placeholder)
        try container.encodeIfPresent(alt, forKey: .alt)
        var others = encoder.container(keyedBy: AnyCodingKey.self)
        for (name, value) in otherMembers.sorted(by: { $0.key < $1.key }) {
            try others.encode(value, forKey: AnyCodingKey(name))
        }
    }
}

/// `photo.placeholder` (the `placeholders` option): what to show while the photo loads.
public struct Placeholder: Codable, Hashable, Sendable {
    /// The photo's average colour, `#RRGGBB`.
    public var color: String
    /// The photo's ThumbHash, base64.
    public var thumbHash: String

    public init(color: String, thumbHash: String) {
        self.color = color
        self.thumbHash = thumbHash
    }
}

/// `annotation`: the title and the caption under (or beside) the photo.
public struct Annotation: Codable, Hashable, Sendable {
    public var frame: Rect
    /// The title block; `nil` when the item has none.
    public var title: TextBlock?
    /// The caption block; `nil` when the item has none.
    public var text: TextBlock?

    public init(frame: Rect, title: TextBlock?, text: TextBlock?) {
        self.frame = frame
        self.title = title
        self.text = text
    }

    enum CodingKeys: String, CodingKey { case frame, title, text }

    public init(from decoder: any Decoder) throws {
        let container = try decoder.container(keyedBy: CodingKeys.self)
        frame = try container.decode(Rect.self, forKey: .frame)
        title = try container.decode(TextBlock?.self, forKey: .title)
        text = try container.decode(TextBlock?.self, forKey: .text)
    }

    public func encode(to encoder: any Encoder) throws {
        var container = encoder.container(keyedBy: CodingKeys.self)
        try container.encode(frame, forKey: .frame)
        try container.encode(title, forKey: .title)
        try container.encode(text, forKey: .text)
    }
}

/// A measured text: where it goes, what it says, and how many lines it takes.
public struct TextBlock: Codable, Hashable, Sendable {
    public var frame: Rect
    public var text: String
    public var lines: Int
    /// Whether the text was cut to the line limit (the last line ends with an ellipsis).
    public var truncated: Bool

    public init(frame: Rect, text: String, lines: Int, truncated: Bool) {
        self.frame = frame
        self.text = text
        self.lines = lines
        self.truncated = truncated
    }
}

/// Something that went wrong with an item.
public struct Warning: Codable, Hashable, Sendable {
    /// camelCase, e.g. `imageNotFound`.
    public var code: String
    public var message: String
    /// Where in the feed, when known (from 1).
    public var line: Int?
    public var column: Int?

    public init(code: String, message: String, line: Int? = nil, column: Int? = nil) {
        self.code = code
        self.message = message
        self.line = line
        self.column = column
    }
}

/// `quality`: how balanced the columns are and how far reading order strays from feed order.
public struct Quality: Codable, Hashable, Sendable {
    /// Tallest minus shortest column after the page.
    public var columnImbalance: Double
    /// Area under the columns, below the tallest (px²).
    public var whitespaceArea: Double
    /// Within the page.
    public var orderInversions: Int
    public var largestDisplacement: Int
    /// Over all pages so far.
    public var soFar: QualitySoFar

    public init(
        columnImbalance: Double, whitespaceArea: Double, orderInversions: Int, largestDisplacement: Int,
        soFar: QualitySoFar
    ) {
        self.columnImbalance = columnImbalance
        self.whitespaceArea = whitespaceArea
        self.orderInversions = orderInversions
        self.largestDisplacement = largestDisplacement
        self.soFar = soFar
    }
}

/// `quality.soFar`.
public struct QualitySoFar: Codable, Hashable, Sendable {
    public var orderInversions: Int
    public var largestDisplacement: Int

    public init(orderInversions: Int, largestDisplacement: Int) {
        self.orderInversions = orderInversions
        self.largestDisplacement = largestDisplacement
    }
}
