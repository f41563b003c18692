/// How the cells of a flow row sit in it.
public enum FlowAlignment: String, Sendable, Hashable, CaseIterable {
    /// Left to right from the left edge, one item gap apart.
    case start
    /// Left to right in feed order, the row pushed against the right edge.
    case end
    /// Filled from the right: the first item at the right edge, the next to its left (the aligned flow layout's
    /// "data end").
    case dataEnd
    /// The row centred; an odd leftover pixel goes to the right margin.
    case center
    /// The free space spread over the row's gaps so that it spans the whole width; cell widths never change, so an
    /// annotation measured at the cell's content width stays valid. A section's last row (and a row of one cell)
    /// stays start-aligned, as the last line of a justified paragraph does.
    case justified
}

/// Everything that decides where the flow engine's cells go. Lengths are CSS pixels.
///
/// The flow (tag) layout puts cells of variable width into rows, like words in a line: each cell's photo is
/// fitted to `photoHeight`, so a cell is `p + photo width + p` wide (capped at the row width) and
/// `p + photoHeight + spacing + annotation + p` tall. A row takes cells until the next does not fit, and is then
/// aligned. The row is as tall as its tallest cell; the next row starts `rowGap` below it.
public struct FlowConfiguration: Sendable, Hashable {
    /// The width of the whole container, insets included.
    public var containerWidth: Double
    public var insets: Insets
    /// The horizontal gap between two cells of a row (the least gap when justified).
    public var itemGap: Double
    /// The vertical gap between rows (and between stacked cells in follow mode).
    public var rowGap: Double
    /// Padding inside a cell, around the photo and the annotation.
    public var cellPadding: Double
    /// The gap between the photo and the annotation below it; only used when the annotation has a height.
    public var annotationSpacing: Double
    /// The height every photo is fitted to; a photo too wide for the row is shrunk to the row width and centred
    /// in its slot, which stays this tall.
    public var photoHeight: Double
    public var alignment: FlowAlignment
    /// The aligned flow layout's follow mode: after a section's first row, a cell does not wait for a new row
    /// with a common top; it tucks under the lane whose bottom is highest (see ``FlowEngine``).
    public var follow: Bool
    /// Insets around every section's rows. Left and right narrow the rows of every section alike; top and bottom
    /// go after a section's header and before its footer.
    public var sectionInsets: Insets
    /// How far a section's decoration frame extends beyond its cells' bounding box.
    public var decorationOutset: Double
    /// Device pixels per CSS pixel. Every output value is a whole number of device pixels.
    public var scale: Double

    public init(
        containerWidth: Double,
        insets: Insets = Insets(),
        itemGap: Double = 0,
        rowGap: Double = 0,
        cellPadding: Double = 0,
        annotationSpacing: Double = 0,
        photoHeight: Double,
        alignment: FlowAlignment = .start,
        follow: Bool = false,
        sectionInsets: Insets = Insets(),
        decorationOutset: Double = 0,
        scale: Double = 1
    ) {
        self.containerWidth = containerWidth
        self.insets = insets
        self.itemGap = itemGap
        self.rowGap = rowGap
        self.cellPadding = cellPadding
        self.annotationSpacing = annotationSpacing
        self.photoHeight = photoHeight
        self.alignment = alignment
        self.follow = follow
        self.sectionInsets = sectionInsets
        self.decorationOutset = decorationOutset
        self.scale = scale
    }
}

/// The resolved geometry of a flow configuration, in whole device pixels.
public struct FlowGrid: Sendable, Hashable {
    public let scale: Double
    public let containerWidth: Int
    public let insets: DeviceInsets
    public let sectionInsets: DeviceInsets
    public let itemGap: Int
    public let rowGap: Int
    public let cellPadding: Int
    public let annotationSpacing: Int
    public let photoHeight: Int
    public let alignment: FlowAlignment
    public let follow: Bool
    public let decorationOutset: Int
    /// The left and right edges of the rows (container and section insets taken off).
    public let rowStart: Int
    public let rowEnd: Int

    /// The width the rows have.
    public var rowWidth: Int { rowEnd - rowStart }
    /// The widest content a cell can have: a full row less the padding.
    public var maximumContentWidth: Int { rowWidth - 2 * cellPadding }

    /// Resolves and checks a configuration.
    ///
    /// - Throws: `WaterfallConfigurationError` naming the option when a length or the scale is outside its bounds
    ///   (``WaterfallLimits``), when the photo height is 0, or when the insets and padding leave no room for content.
    public init(_ configuration: FlowConfiguration) throws(WaterfallConfigurationError) {
        try WaterfallLimits.checkScale(configuration.scale)
        let scale = configuration.scale
        func device(_ value: Double, _ option: String) throws(WaterfallConfigurationError) -> Int {
            try WaterfallLimits.deviceLength(value, scale: scale, option: option)
        }
        func deviceInsets(_ insets: Insets, _ option: String) throws(WaterfallConfigurationError) -> DeviceInsets {
            DeviceInsets(
                top: try device(insets.top, option), left: try device(insets.left, option),
                bottom: try device(insets.bottom, option), right: try device(insets.right, option))
        }
        self.scale = scale
        containerWidth = try device(configuration.containerWidth, "width")
        insets = try deviceInsets(configuration.insets, "inset")
        sectionInsets = try deviceInsets(configuration.sectionInsets, "section-inset")
        itemGap = try device(configuration.itemGap, "gutter")
        rowGap = try device(configuration.rowGap, "row-gap")
        cellPadding = try device(configuration.cellPadding, "cell-padding")
        annotationSpacing = try device(configuration.annotationSpacing, "annotation-spacing")
        photoHeight = try device(configuration.photoHeight, "row-photo-height")
        guard photoHeight > 0 else {
            throw WaterfallConfigurationError(option: "row-photo-height", message: "must be at least one device pixel")
        }
        alignment = configuration.alignment
        follow = configuration.follow
        decorationOutset = try device(configuration.decorationOutset, "decoration-outset")
        rowStart = insets.left + sectionInsets.left
        rowEnd = containerWidth - insets.right - sectionInsets.right
        guard rowEnd - rowStart > 2 * cellPadding else {
            throw WaterfallConfigurationError(
                option: rowEnd > rowStart ? "cell-padding" : "width",
                message: "\(configuration.containerWidth) px less the insets leave no room for a cell's content")
        }
    }

    /// Converts a length in CSS pixels to device pixels, rounding up: text must fit in the height it is given.
    public func deviceLengthRoundingUp(_ cssPixels: Double) -> Int {
        WaterfallLimits.deviceLengthRoundingUp(cssPixels, scale: scale)
    }

    /// A full-width band between the container insets: where section headers and footers go.
    public func band(at top: Int, length: Int) -> DeviceRect {
        DeviceRect(x: insets.left, y: top, width: containerWidth - insets.left - insets.right, height: length)
    }
}

/// A stretch of the row width in follow mode, and how far down it is taken.
public struct FollowSegment: Sendable, Hashable {
    public var x: Int
    public var width: Int
    /// The top of the next cell that covers any of this stretch: the lowest bottom above it plus the row gap.
    public var bottom: Int

    public init(x: Int, width: Int, bottom: Int) {
        self.x = x
        self.width = width
        self.bottom = bottom
    }
}

/// Everything the flow engine needs to go on after a row boundary: what a resume cursor carries.
///
/// A flow state only exists between rows (in follow mode, after a section's first row, between any two cells):
/// the cells of a row are placed only when the row is complete, so ``FlowEngine/state`` is the state before the
/// open row, and resuming from it places again every item from ``nextIndex`` on, the open row's included.
public struct FlowState: Sendable, Hashable {
    /// The index of the first item not yet returned.
    public var nextIndex: Int
    /// The top of the next row.
    public var rowTop: Int
    /// The lowest bottom so far of a cell, header or ended section (the top inset when nothing is placed).
    public var contentBottom: Int
    /// The current section: its index, start, header, first item and the bounds of its cells.
    public var section: SectionProgress
    /// Follow mode, once the section's first row is placed: the row width cut at the first row's cell edges, left
    /// to right, and how far down each stretch is taken. Empty otherwise.
    public var followSegments: [FollowSegment]
    /// The follow lanes: for each cell of the first row, in feed order, the index of its segment.
    public var followLanes: [Int]

    public init(
        nextIndex: Int, rowTop: Int, contentBottom: Int, section: SectionProgress = SectionProgress(),
        followSegments: [FollowSegment] = [], followLanes: [Int] = []
    ) {
        self.nextIndex = nextIndex
        self.rowTop = rowTop
        self.contentBottom = contentBottom
        self.section = section
        self.followSegments = followSegments
        self.followLanes = followLanes
    }
}

/// The flow (tag) engine: rows of variable-width cells, aligned start, end, data-end, centre or justified, with
/// sections and the aligned flow layout's follow mode.
///
/// Rows are complete only when the next item does not fit, so ``place(_:)`` returns cells in batches: nothing
/// while the open row fills, then the whole row (in feed order) when an item starts the next one. ``finish()``
/// returns the last row. Every cell's ``PlacedItem/column`` is its position in its row, in feed order (follow mode:
/// the lane it tucked under, that is the position of the first-row cell it went below); ``PlacedItem/columnSpan``
/// is 1.
///
/// Follow mode (the article's `isFollow`): a section's first row is laid out and aligned as usual. Its cells then
/// become lanes, and the row width is cut into segments at their edges. Each later cell goes under a lane: at the
/// lane's left edge (its right edge with `dataEnd`), moved back inside the row if it is wider than the room left;
/// its top is the lowest bottom of every segment it covers plus the row gap, so it can never overlap a cell above.
/// Of all lanes the one giving the highest top wins, ties to the first in feed order: with cells as wide as their
/// lanes, that is the article's "under the cell whose bottom is highest". Cells are placed at once, one per
/// `place`. ``breakRow()`` and section boundaries end follow mode; the next cells start a new first row.
///
/// Like ``WaterfallEngine`` it is a value: copy it to branch, or save its ``state`` (between rows) and resume.
public struct FlowEngine: Sendable {
    public let grid: FlowGrid
    /// The state at the last row boundary (see ``FlowState``).
    public private(set) var state: FlowState
    /// The open row's cells, waiting for a cell that does not fit.
    private var row: [Cell] = []
    /// The open row's width: its cells and the gaps between them.
    private var rowWidth = 0

    /// One cell with frames relative to its own origin.
    private struct Cell {
        var index: Int
        var width: Int
        var height: Int
        var slot: DeviceRect
        var photo: DeviceRect
        var annotation: DeviceRect

        func placed(x: Int, y: Int, column: Int) -> PlacedItem {
            func moved(_ rect: DeviceRect) -> DeviceRect {
                DeviceRect(x: rect.x + x, y: rect.y + y, width: rect.width, height: rect.height)
            }
            return PlacedItem(
                index: index, column: column, columnSpan: 1,
                frame: DeviceRect(x: x, y: y, width: width, height: height),
                photoSlot: moved(slot), photoFrame: moved(photo), annotationFrame: moved(annotation))
        }
    }

    /// Starts an empty layout.
    ///
    /// - Throws: `WaterfallConfigurationError` when the configuration cannot be laid out.
    public init(configuration: FlowConfiguration) throws(WaterfallConfigurationError) {
        grid = try FlowGrid(configuration)
        state = FlowState(
            nextIndex: 0, rowTop: grid.insets.top + grid.sectionInsets.top, contentBottom: grid.insets.top)
    }

    /// Continues a layout from a state saved between rows.
    ///
    /// - Throws: `WaterfallConfigurationError` (option `resume`) when the configuration cannot be laid out or the
    ///   state does not belong to it.
    public init(configuration: FlowConfiguration, resumingFrom state: FlowState) throws(WaterfallConfigurationError) {
        let grid = try FlowGrid(configuration)
        func refuse(_ message: String) -> WaterfallConfigurationError {
            WaterfallConfigurationError(option: "resume", message: "the saved flow state \(message)")
        }
        // Ranges first: every sum below is then far inside `Int`.
        guard WaterfallLimits.isCoordinate(state.nextIndex) else {
            throw refuse("has next item \(state.nextIndex), outside 0...\(WaterfallLimits.maximumCoordinate)")
        }
        guard WaterfallLimits.isCoordinate(state.contentBottom), state.contentBottom >= grid.insets.top else {
            throw refuse(
                "has its content bottom at \(state.contentBottom), outside \(grid.insets.top)..."
                    + "\(WaterfallLimits.maximumCoordinate)")
        }
        guard state.section.isConsistent(nextIndex: state.nextIndex, contentBottom: state.contentBottom, in: grid)
        else {
            throw refuse("has an inconsistent section \(state.section.index)")
        }
        // The next row starts one row gap below a row's bottom, which is at most the content bottom.
        let itemsTop = state.section.itemsTop(in: grid)
        guard state.rowTop >= itemsTop, state.rowTop <= max(itemsTop, state.contentBottom + grid.rowGap) else {
            throw refuse(
                "has its next row outside its section's rows (row top \(state.rowTop), next item \(state.nextIndex))")
        }
        if !state.followSegments.isEmpty || !state.followLanes.isEmpty {
            var edge = grid.rowStart
            for segment in state.followSegments {
                guard grid.follow, segment.x == edge, segment.width > 0, segment.width <= grid.rowEnd - edge,
                    segment.bottom >= itemsTop, segment.bottom <= state.contentBottom + grid.rowGap
                else {
                    throw refuse("has follow segments that do not cut this configuration's rows")
                }
                edge += segment.width
            }
            guard edge == grid.rowEnd, !state.followLanes.isEmpty,
                Set(state.followLanes).count == state.followLanes.count,
                state.followLanes.allSatisfy({ state.followSegments.indices.contains($0) })
            else {
                throw refuse("has follow lanes that do not fit its segments")
            }
        }
        self.grid = grid
        self.state = state
    }

    /// The container's size so far in device pixels: the full width, and the lowest cell plus the bottom inset.
    /// Cells of the open row are not in it until the row is placed.
    public var contentSize: (width: Int, height: Int) {
        (grid.containerWidth, state.contentBottom + grid.insets.bottom)
    }

    /// The number of items given to ``place(_:)`` that wait in the open row.
    public var pendingCount: Int { row.count }

    /// The content width of the cell a photo gets: the photo's width at ``FlowConfiguration/photoHeight``, rounded
    /// to the nearest device pixel, at most a full row less the padding and at least one pixel. The pipeline
    /// measures the annotation at this width before placing the item.
    public func contentWidth(for photoSize: Size) -> Int {
        let ratio = photoSize.width / photoSize.height
        guard photoSize.width > 0, photoSize.height > 0, ratio.isFinite else { return 1 }
        let natural = Double(grid.photoHeight) * ratio
        guard natural < Double(grid.maximumContentWidth) else { return grid.maximumContentWidth }
        return max(1, Int(natural.rounded(.toNearestOrAwayFromZero)))
    }

    private func cell(for item: WaterfallItem, index: Int) -> Cell {
        let padding = grid.cellPadding
        let content = contentWidth(for: item.photoSize)
        let fitted = aspectFit(
            item.photoSize, inside: Rect(x: 0, y: 0, width: Double(content), height: Double(grid.photoHeight)))
        let photoWidth = min(content, Int(fitted.width.rounded(.toNearestOrAwayFromZero)))
        let photoHeight = min(grid.photoHeight, Int(fitted.height.rounded(.toNearestOrAwayFromZero)))
        let annotationHeight = grid.deviceLengthRoundingUp(item.annotationHeight)
        let annotationTop = padding + grid.photoHeight + (annotationHeight > 0 ? grid.annotationSpacing : 0)
        return Cell(
            index: index, width: content + 2 * padding, height: annotationTop + annotationHeight + padding,
            slot: DeviceRect(x: padding, y: padding, width: content, height: grid.photoHeight),
            photo: DeviceRect(
                x: padding + (content - photoWidth) / 2, y: padding + (grid.photoHeight - photoHeight) / 2,
                width: photoWidth, height: photoHeight),
            annotation: DeviceRect(x: padding, y: annotationTop, width: content, height: annotationHeight))
    }

    /// Takes the next item.
    ///
    /// - Parameter item: The item's photo size and annotation height (at ``contentWidth(for:)``); its span is
    ///   ignored.
    /// - Returns: The cells placed by this call, in feed order: nothing while the open row fills; the open row when
    ///   this item does not fit in it; in follow mode after a section's first row, this item.
    public mutating func place(_ item: WaterfallItem) -> [PlacedItem] {
        let cell = cell(for: item, index: state.nextIndex + row.count)
        if !state.followLanes.isEmpty { return [tuck(cell)] }
        if row.isEmpty || rowWidth + grid.itemGap + cell.width <= grid.rowWidth {
            rowWidth += (row.isEmpty ? 0 : grid.itemGap) + cell.width
            row.append(cell)
            return []
        }
        var placed = completeRow(isLast: false)
        if grid.follow {
            startFollowing(after: placed)
            placed.append(tuck(cell))
        } else {
            row = [cell]
            rowWidth = cell.width
        }
        return placed
    }

    /// Places the open row as the last of its paragraph (`justified` leaves it start-aligned) and, in follow mode,
    /// ends following: the next cell starts a new row below everything. Call it at the end of the feed.
    ///
    /// - Returns: The open row's cells, in feed order.
    @discardableResult
    public mutating func breakRow() -> [PlacedItem] {
        let placed = completeRow(isLast: true)
        if !state.followSegments.isEmpty {
            state.rowTop = state.followSegments.map(\.bottom).max()!
            state.followSegments = []
            state.followLanes = []
        }
        return placed
    }

    /// Places the last row: ``breakRow()``. (``endSection(footer:)`` does it too.)
    @discardableResult
    public mutating func finish() -> [PlacedItem] { breakRow() }

    /// The open row's cells at their aligned positions; the next row goes below it.
    private mutating func completeRow(isLast: Bool) -> [PlacedItem] {
        guard !row.isEmpty else { return [] }
        let count = row.count
        let free = grid.rowWidth - rowWidth
        var alignment = grid.alignment
        if alignment == .justified, isLast || count == 1 { alignment = .start }
        let top = state.rowTop
        var placed: [PlacedItem] = []
        placed.reserveCapacity(count)
        var x: Int
        switch alignment {
        case .start, .justified: x = grid.rowStart
        case .end: x = grid.rowStart + free
        case .center: x = grid.rowStart + free / 2
        case .dataEnd: x = grid.rowEnd
        }
        var rowHeight = 0
        for (position, cell) in row.enumerated() {
            let cellX: Int
            switch alignment {
            case .dataEnd:
                cellX = x - cell.width
                x = cellX - grid.itemGap
            case .justified:
                // The leftover spread over the gaps, rounded down cumulatively: the last cell ends at the edge.
                cellX = x + free * position / (count - 1)
                x += cell.width + grid.itemGap
            default:
                cellX = x
                x += cell.width + grid.itemGap
            }
            placed.append(cell.placed(x: cellX, y: top, column: position))
            rowHeight = max(rowHeight, cell.height)
        }
        for item in placed { include(item.frame) }
        state.rowTop = top + rowHeight + grid.rowGap
        state.nextIndex += count
        row = []
        rowWidth = 0
        return placed
    }

    private mutating func include(_ frame: DeviceRect) {
        state.section.include(frame)
        state.contentBottom = max(state.contentBottom, frame.maxY)
    }

    /// Follow mode: the first row's cells become lanes and cut the row width into segments.
    private mutating func startFollowing(after firstRow: [PlacedItem]) {
        let top = firstRow[0].frame.y
        var segments: [FollowSegment] = []
        var lanes = Array(repeating: 0, count: firstRow.count)
        var edge = grid.rowStart
        for item in firstRow.sorted(by: { $0.frame.x < $1.frame.x }) {
            if item.frame.x > edge { segments.append(FollowSegment(x: edge, width: item.frame.x - edge, bottom: top)) }
            lanes[item.column] = segments.count
            segments.append(
                FollowSegment(x: item.frame.x, width: item.frame.width, bottom: item.frame.maxY + grid.rowGap))
            edge = item.frame.maxX
        }
        if edge < grid.rowEnd { segments.append(FollowSegment(x: edge, width: grid.rowEnd - edge, bottom: top)) }
        state.followSegments = segments
        state.followLanes = lanes
    }

    /// Follow mode: the cell goes under the lane that lets it sit highest.
    private mutating func tuck(_ cell: Cell) -> PlacedItem {
        let (top, lane, x) = followPosition(width: cell.width)
        let bottom = top + cell.height + grid.rowGap
        var index = firstSegment(endingAfter: x)
        while index < state.followSegments.count, state.followSegments[index].x < x + cell.width {
            state.followSegments[index].bottom = bottom
            index += 1
        }
        let placed = cell.placed(x: x, y: top, column: lane)
        include(placed.frame)
        state.nextIndex += 1
        return placed
    }

    /// The highest top a cell of this width gets under any lane, the first lane in feed order on ties.
    private func followPosition(width: Int) -> (top: Int, lane: Int, x: Int) {
        let segments = state.followSegments
        var best = (top: Int.max, lane: 0, x: 0)
        for (lane, index) in state.followLanes.enumerated() {
            let segment = segments[index]
            let x =
                grid.alignment == .dataEnd
                ? max(grid.rowStart, segment.x + segment.width - width) : min(segment.x, grid.rowEnd - width)
            // The lowest bottom of the segments the cell would cover.
            var top = Int.min
            var covered = firstSegment(endingAfter: x)
            while covered < segments.count, segments[covered].x < x + width {
                top = max(top, segments[covered].bottom)
                covered += 1
            }
            if top < best.top { best = (top, lane, x) }
        }
        return best
    }

    /// The first segment that reaches past `x` (segments cut the row in order, so a binary search finds it).
    private func firstSegment(endingAfter x: Int) -> Int {
        var low = 0
        var high = state.followSegments.count
        while low < high {
            let middle = (low + high) / 2
            let segment = state.followSegments[middle]
            if segment.x + segment.width <= x { low = middle + 1 } else { high = middle }
        }
        return low
    }

    // MARK: Sections

    /// Starts a section: the open row is placed (as by ``breakRow()``), and if the current section holds items or
    /// was opened by `beginSection` it is ended as `endSection(footer: 0)` would end it. Then the header band, the
    /// section's top inset, and rows again.
    ///
    /// - Parameter header: The header's height in CSS pixels, rounded up to a device pixel; 0 for none.
    /// - Returns: The cells placed by closing the open row, and the header's frame (`nil` without a header).
    public mutating func beginSection(header: Double = 0) -> (items: [PlacedItem], header: DeviceRect?) {
        var placed: [PlacedItem] = []
        if !row.isEmpty || state.section.isOpen(nextIndex: state.nextIndex) {
            placed = endSection(footer: 0).items
        }
        let headerFrame = state.section.begin(header: header, in: grid, raising: &state.contentBottom)
        state.rowTop = state.section.itemsTop(in: grid)
        return (placed, headerFrame)
    }

    /// Ends the current section: the open row is placed as its last row, then the section's bottom inset and the
    /// footer band; the next section starts right after it.
    ///
    /// - Parameter footer: The footer's height in CSS pixels, rounded up; 0 for none.
    /// - Returns: The cells placed by closing the open row, and the section's frames.
    public mutating func endSection(footer: Double = 0) -> (items: [PlacedItem], section: SectionFrames) {
        let placed = breakRow()
        let frames = state.section.end(
            footer: footer, nextIndex: state.nextIndex, in: grid, raising: &state.contentBottom)
        state.rowTop = state.section.itemsTop(in: grid)
        return (placed, frames)
    }
}
