import FeedIngest
import WaterfallLayout

/// One laid-out pin: its frames and what a client renders in them.
public struct LaidOutItem: Sendable {
    public var index: Int
    public var id: String
    public var link: String?
    public var placed: PlacedItem
    public var photo: ResolvedPhoto
    /// The title block, placed at the top of the annotation frame.
    public var title: MeasuredText?
    /// The caption block, below the title (and the title-caption gap).
    public var text: MeasuredText?
    public var warnings: [FeedWarning]
    /// The index of the section it belongs to, once the feed has marked sections; `nil` otherwise.
    public var section: Int?

    public init(
        index: Int, id: String, link: String?, placed: PlacedItem, photo: ResolvedPhoto, title: MeasuredText?,
        text: MeasuredText?, warnings: [FeedWarning], section: Int? = nil
    ) {
        self.section = section
        self.index = index
        self.id = id
        self.link = link
        self.placed = placed
        self.photo = photo
        self.title = title
        self.text = text
        self.warnings = warnings
    }
}

/// A page: a contiguous run of items in feed order, and what the next page needs.
public struct LayoutPage: Sendable {
    /// Which layout of the run the page belongs to: 0, or the breakpoint's position in `--breakpoints`.
    public var layoutIndex: Int
    /// That layout's grid (in flow mode, a one-lane grid with the flow's container, insets and scale).
    public var grid: WaterfallGrid
    /// The flow rows' grid, in flow mode.
    public var flowGrid: FlowGrid?
    /// The fonts the annotations were measured with.
    public var fonts: LayoutFonts
    public var index: Int
    public var items: [LaidOutItem]
    /// Sections that start or end with this page's items, in order.
    public var sections: [SectionEvent]
    /// Column heights in device pixels after the page's last item (flow mode: the next row's top; the
    /// horizontal axis: each row's right end).
    public var columnHeights: [Int]
    /// The layout's extent so far on the scroll axis in device pixels, end inset included.
    public var contentHeight: Int
    /// The cursor for the next page; `nil` on the last page.
    public var cursor: String?
    /// How balanced and how well ordered the page is.
    public var quality: LayoutQuality
    /// The order measures over every page up to and including this one.
    public var totals: LayoutQualityTotals

    public init(
        layoutIndex: Int = 0, grid: WaterfallGrid, flowGrid: FlowGrid? = nil, fonts: LayoutFonts, index: Int,
        items: [LaidOutItem],
        sections: [SectionEvent] = [], columnHeights: [Int], contentHeight: Int, cursor: String?,
        quality: LayoutQuality, totals: LayoutQualityTotals
    ) {
        self.layoutIndex = layoutIndex
        self.grid = grid
        self.flowGrid = flowGrid
        self.fonts = fonts
        self.index = index
        self.items = items
        self.sections = sections
        self.columnHeights = columnHeights
        self.contentHeight = contentHeight
        self.cursor = cursor
        self.quality = quality
        self.totals = totals
    }
}
