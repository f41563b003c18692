/// Where a layout stands in its sections: the section bookkeeping the waterfall and the flow engines share, and
/// what a resume cursor carries of it (``WaterfallState/section``, ``FlowState/section``).
///
/// Positions are on the scroll axis: y positions vertically, x positions on the horizontal axis.
public struct SectionProgress: Sendable, Hashable {
    /// The index of the current section (the one the next item joins).
    public var index: Int
    /// Where the current section starts on the scroll axis (its header's top); `nil` for the implicit first
    /// section, which starts at the scroll axis' start inset.
    public var start: Int?
    /// Whether `beginSection` opened the current section. An implicit section (before any `beginSection`, or after
    /// `endSection`) is only ended by `beginSection` if it holds items.
    public var begun: Bool
    /// The current section's header length on the scroll axis (0: none).
    public var headerLength: Int
    /// The index of the current section's first item.
    public var firstIndex: Int
    /// The bounding box of the current section's cells so far; `nil` while it has none.
    public var itemBounds: DeviceRect? {
        get {
            guard boundsMaxX >= boundsMinX else { return nil }
            return DeviceRect(
                x: boundsMinX, y: boundsMinY, width: boundsMaxX - boundsMinX, height: boundsMaxY - boundsMinY)
        }
        set {
            if let rect = newValue {
                (boundsMinX, boundsMinY, boundsMaxX, boundsMaxY) = (rect.x, rect.y, rect.maxX, rect.maxY)
            } else {
                (boundsMinX, boundsMinY, boundsMaxX, boundsMaxY) = (Int.max, Int.max, Int.min, Int.min)
            }
        }
    }
    // The bounds as plain integers, empty when inverted: placing a cell grows them with four comparisons.
    private var boundsMinX = Int.max
    private var boundsMinY = Int.max
    private var boundsMaxX = Int.min
    private var boundsMaxY = Int.min

    /// A section's progress. The defaults are the implicit first section before any item, so a state that only
    /// knows its lanes (a layout without sections) keeps working.
    public init(
        index: Int = 0, start: Int? = nil, begun: Bool = false, headerLength: Int = 0, firstIndex: Int = 0,
        itemBounds: DeviceRect? = nil
    ) {
        self.index = index
        self.start = start
        self.begun = begun
        self.headerLength = headerLength
        self.firstIndex = firstIndex
        self.itemBounds = itemBounds
    }

    /// Grows the section's bounds to hold a cell.
    mutating func include(_ frame: DeviceRect) {
        boundsMinX = min(boundsMinX, frame.x)
        boundsMinY = min(boundsMinY, frame.y)
        boundsMaxX = max(boundsMaxX, frame.maxX)
        boundsMaxY = max(boundsMaxY, frame.maxY)
    }

    /// Whether ending the section means something: it holds items, or `beginSection` opened it.
    func isOpen(nextIndex: Int) -> Bool { begun || nextIndex > firstIndex }

    /// Where the section's items start on the scroll axis: after its header and the section's start inset.
    func itemsTop(in grid: some SectionGrid) -> Int {
        (start ?? grid.scrollStartInset) + headerLength + grid.sectionScrollStartInset
    }

    /// Whether a resumed state's section fields agree with each other and with the grid.
    ///
    /// Every field is range-checked before any arithmetic, so a hostile state cannot make ``itemsTop(in:)`` or the
    /// bounds overflow.
    ///
    /// - Parameters:
    ///   - nextIndex: The index of the state's next item (within 0...``WaterfallLimits/maximumCoordinate``).
    ///   - contentBottom: The state's content bottom (within the same range).
    ///   - grid: The grid the state is resumed in.
    /// - Returns: `false` when the fields contradict each other: a first item after the next one, more sections
    ///   than items, a section after the first without a start, a start before the start inset, a start or header
    ///   below the content bottom, or bounds without items or beyond the content.
    func isConsistent(nextIndex: Int, contentBottom: Int, in grid: some SectionGrid) -> Bool {
        // A section is opened by an item whose key differs, so there are never more sections than items (one more
        // while the opening item waits in a flow row).
        guard index >= 0, index <= nextIndex + 1, firstIndex >= 0, firstIndex <= nextIndex,
            headerLength >= 0, headerLength <= contentBottom
        else { return false }
        if let start {
            guard start >= grid.scrollStartInset, start <= contentBottom - headerLength else { return false }
        } else {
            guard index == 0, grid.scrollStartInset <= contentBottom - headerLength else { return false }
        }
        guard let bounds = itemBounds else { return true }
        // Bounds without items are impossible; items without bounds come from a state saved without its section
        // fields (the decoration then covers only the items placed after the resume). Cells never end past the
        // content bottom on the scroll axis.
        guard [bounds.x, bounds.y, bounds.width, bounds.height].allSatisfy(WaterfallLimits.isCoordinate) else {
            return false
        }
        let scrollEnd = grid.scrollsHorizontally ? bounds.maxX : bounds.maxY
        return scrollEnd <= contentBottom && nextIndex > firstIndex
    }

    /// Opens a section where the current one ends (at the start inset for the first), with an optional header.
    ///
    /// The caller ends an open section first (``isOpen(nextIndex:)``) and moves its lanes to ``itemsTop(in:)``.
    ///
    /// - Parameters:
    ///   - header: The header's length in CSS pixels, rounded up to a device pixel; 0 for none.
    ///   - grid: The layout's grid.
    ///   - contentBottom: The layout's lowest bottom so far, raised to the header's end.
    /// - Returns: The header's frame, or `nil` without a header.
    mutating func begin(header: Double, in grid: some SectionGrid, raising contentBottom: inout Int) -> DeviceRect? {
        let start = start ?? grid.scrollStartInset
        let headerLength = grid.deviceLengthRoundingUp(header)
        self.start = start
        begun = true
        self.headerLength = headerLength
        contentBottom = max(contentBottom, start + headerLength)
        return headerLength > 0 ? grid.band(at: start, length: headerLength) : nil
    }

    /// Ends the current section: its end inset goes after its cells (after its header and start inset when it has
    /// none), then the footer band; the next section starts right after, with no extra gap.
    ///
    /// The caller places any pending cells first and then moves its lanes to ``itemsTop(in:)``.
    ///
    /// - Parameters:
    ///   - footer: The footer's length in CSS pixels, rounded up to a device pixel; 0 for none.
    ///   - nextIndex: The index of the next item: the section holds the items before it.
    ///   - grid: The layout's grid.
    ///   - contentBottom: The layout's lowest bottom so far, raised to the section's end.
    /// - Returns: The section's frames.
    mutating func end(footer: Double, nextIndex: Int, in grid: some SectionGrid, raising contentBottom: inout Int)
        -> SectionFrames
    {
        let start = start ?? grid.scrollStartInset
        let itemsEnd = itemBounds.map { grid.scrollsHorizontally ? $0.maxX : $0.maxY } ?? itemsTop(in: grid)
        let footerStart = itemsEnd + grid.sectionScrollEndInset
        let footerLength = grid.deviceLengthRoundingUp(footer)
        let end = footerStart + footerLength
        let frames = SectionFrames(
            index: index, items: firstIndex..<nextIndex,
            header: headerLength > 0 ? grid.band(at: start, length: headerLength) : nil,
            footer: footerLength > 0 ? grid.band(at: footerStart, length: footerLength) : nil,
            decoration: itemBounds?.grown(by: grid.decorationOutset), start: start, end: end)
        self = SectionProgress(index: index + 1, start: end, firstIndex: nextIndex)
        contentBottom = max(contentBottom, end)
        return frames
    }
}

/// What the section bookkeeping needs of a grid: the waterfall's (either axis) or the flow's.
protocol SectionGrid {
    /// Where the scroll axis starts: the first section's start.
    var scrollStartInset: Int { get }
    /// The section inset between a section's header and its items on the scroll axis.
    var sectionScrollStartInset: Int { get }
    /// The section inset between a section's items and its footer on the scroll axis.
    var sectionScrollEndInset: Int { get }
    /// How far a section's decoration frame extends beyond its cells' bounding box.
    var decorationOutset: Int { get }
    /// Whether the scroll axis is x (the waterfall's horizontal axis).
    var scrollsHorizontally: Bool { get }
    /// The header or footer band at `start` on the scroll axis, `length` long.
    func band(at start: Int, length: Int) -> DeviceRect
    /// A length in CSS pixels in device pixels, rounded up.
    func deviceLengthRoundingUp(_ cssPixels: Double) -> Int
}

extension WaterfallGrid: SectionGrid {
    var scrollsHorizontally: Bool { axis == .horizontal }
}

extension FlowGrid: SectionGrid {
    // Flow rows always scroll down.
    var scrollStartInset: Int { insets.top }
    var sectionScrollStartInset: Int { sectionInsets.top }
    var sectionScrollEndInset: Int { sectionInsets.bottom }
    var scrollsHorizontally: Bool { false }
}
