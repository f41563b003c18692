/// How many columns an item takes.
public enum ColumnSpan: Sendable, Hashable {
    /// This many adjacent columns (clamped to the grid's column count).
    case columns(Int)
    /// The whole row: every column.
    case fullWidth

    public static let single = ColumnSpan.columns(1)
}

/// One pin as the engine sees it: how big its photo is, how tall its annotation is, how wide it is.
public struct WaterfallItem: Sendable, Hashable {
    /// The photo's display size (after EXIF orientation) or any size with its aspect ratio.
    public var photoSize: Size
    /// The annotation's height in CSS pixels at the item's content width (``WaterfallGrid/contentWidth(for:)``);
    /// 0 when the pin has no annotation.
    public var annotationHeight: Double
    public var span: ColumnSpan

    public init(photoSize: Size, annotationHeight: Double, span: ColumnSpan = .single) {
        self.photoSize = photoSize
        self.annotationHeight = annotationHeight
        self.span = span
    }
}

/// Where one pin went, in device pixels.
public struct PlacedItem: Sendable, Hashable {
    /// The item's position in feed order.
    public var index: Int
    /// The first column the item takes, in reading order (column 0 is the rightmost one right-to-left).
    public var column: Int
    /// How many columns it takes.
    public var columnSpan: Int
    /// The whole cell.
    public var frame: DeviceRect
    /// The slot reserved for the photo: the content width, and the photo's height clamped to the
    /// minimum and maximum photo heights.
    public var photoSlot: DeviceRect
    /// The photo itself: the aspect fit of the image into the slot, centred.
    public var photoFrame: DeviceRect
    /// The annotation below the photo; zero height when there is none.
    public var annotationFrame: DeviceRect

    public init(
        index: Int, column: Int, columnSpan: Int, frame: DeviceRect, photoSlot: DeviceRect, photoFrame: DeviceRect,
        annotationFrame: DeviceRect
    ) {
        self.index = index
        self.column = column
        self.columnSpan = columnSpan
        self.frame = frame
        self.photoSlot = photoSlot
        self.photoFrame = photoFrame
        self.annotationFrame = annotationFrame
    }
}

/// Everything the engine needs to go on placing items after a given one: what a resume cursor carries.
///
/// On the horizontal axis "height" and "bottom" are extents along the scroll axis: x positions.
public struct WaterfallState: Sendable, Hashable {
    /// The index the next placed item gets.
    public var nextIndex: Int
    /// Each column's height in device pixels: the top of the next item placed in it.
    public var columnHeights: [Int]
    /// Where the next item's search for a column starts: the next column of the `leftToRight` / `rightToLeft`
    /// round robin, or for `gridLanes` CSS Grid Lanes' auto-placement cursor (the column after the previous item's
    /// window, 0 past the last column); always 0 for `shortestFirst`.
    public var placementCursor: Int
    /// The lowest bottom so far of a cell, header or ended section, in device pixels (the insets' top when nothing
    /// is placed).
    public var contentBottom: Int
    /// The current section: its index, start, header, first item and the bounds of its cells.
    public var section: SectionProgress

    /// A state. The section defaults to the implicit first section, so a state that only knows the columns (a
    /// layout without sections) keeps working.
    public init(
        nextIndex: Int, columnHeights: [Int], contentBottom: Int, placementCursor: Int = 0,
        section: SectionProgress = SectionProgress()
    ) {
        self.nextIndex = nextIndex
        self.columnHeights = columnHeights
        self.contentBottom = contentBottom
        self.placementCursor = placementCursor
        self.section = section
    }
}

/// The frames of a finished section, in device pixels.
public struct SectionFrames: Sendable, Hashable {
    /// The section's position among the sections, from 0.
    public var index: Int
    /// The indices of the items it holds.
    public var items: Range<Int>
    /// The header band (full width between the container insets; full height horizontally); `nil` without one.
    public var header: DeviceRect?
    /// The footer band, after the items and the section's end inset; `nil` without one.
    public var footer: DeviceRect?
    /// The bounding box of the section's cells grown by the decoration outset on every side (the aligned flow
    /// layout's decoration view: a background behind the items, header and footer excluded); `nil` when the
    /// section holds no item. The outset may reach into the header, footer or insets: it is a background.
    public var decoration: DeviceRect?
    /// Where the section starts on the scroll axis (its header's top).
    public var start: Int
    /// Where it ends: its footer's bottom, or its items' bottom plus the section's end inset. The next section
    /// starts here, with no gap (CHTCollectionViewWaterfallLayout).
    public var end: Int

    public init(
        index: Int, items: Range<Int>, header: DeviceRect?, footer: DeviceRect?, decoration: DeviceRect?, start: Int,
        end: Int
    ) {
        self.index = index
        self.items = items
        self.header = header
        self.footer = footer
        self.decoration = decoration
        self.start = start
        self.end = end
    }
}

extension DeviceRect {
    /// The rectangle grown by `outset` on every side.
    func grown(by outset: Int) -> DeviceRect {
        DeviceRect(x: x - outset, y: y - outset, width: width + 2 * outset, height: height + 2 * outset)
    }

    /// The same rectangle with x and y exchanged.
    var transposed: DeviceRect { DeviceRect(x: y, y: x, width: height, height: width) }
}

/// The waterfall engine: each item goes into the currently shortest column, ties to the first column in
/// reading order (or the column the configured placement order and tolerance pick). An item spanning several
/// columns goes into the window of adjacent columns whose tallest column is lowest (the masonry.js rule), ties to
/// the first window in reading order, and every column of the window grows to its bottom.
///
/// Sections (``beginSection(header:)``, ``endSection(footer:)``) are full-width breaks with header and footer
/// bands, section insets and a decoration frame, as in CHTCollectionViewWaterfallLayout. On the horizontal axis
/// (``LayoutAxis``) the same rules run on rows and the layout grows to the right; frames are screen coordinates.
///
/// The engine is a value: copy it to branch a layout, or save its ``state`` and resume later with exactly the
/// same results, mid-section included. It knows nothing about feeds, images or fonts.
public struct WaterfallEngine: Sendable {
    public let grid: WaterfallGrid
    public private(set) var state: WaterfallState

    /// Starts an empty layout.
    ///
    /// - Throws: `WaterfallConfigurationError` when the configuration cannot be laid out.
    public init(configuration: WaterfallConfiguration) throws(WaterfallConfigurationError) {
        let grid = try WaterfallGrid(configuration)
        self.grid = grid
        state = WaterfallState(
            nextIndex: 0,
            columnHeights: Array(
                repeating: grid.scrollStartInset + grid.sectionScrollStartInset, count: grid.columnCount),
            contentBottom: grid.scrollStartInset,
            placementCursor: grid.placement == .rightToLeft ? grid.columnCount - 1 : 0)
    }

    /// Continues a layout from a saved state.
    ///
    /// - Throws: `WaterfallConfigurationError` when the configuration cannot be laid out or the state does not
    ///   belong to it (another column count, heights above the current section's items, section fields that
    ///   contradict each other).
    public init(configuration: WaterfallConfiguration, resumingFrom state: WaterfallState)
        throws(WaterfallConfigurationError)
    {
        let grid = try WaterfallGrid(configuration)
        func refuse(_ message: String) -> WaterfallConfigurationError {
            WaterfallConfigurationError(option: "resume", message: "the saved state \(message)")
        }
        let lanes = grid.axis == .vertical ? "columns" : "rows"
        guard state.columnHeights.count == grid.columnCount else {
            throw refuse("has \(state.columnHeights.count) \(lanes); this layout has \(grid.columnCount)")
        }
        guard (0..<grid.columnCount).contains(state.placementCursor) else {
            throw refuse("has placement cursor \(state.placementCursor), outside 0..<\(grid.columnCount)")
        }
        // Ranges first: every sum below is then far inside `Int`.
        guard WaterfallLimits.isCoordinate(state.nextIndex) else {
            throw refuse("has next item \(state.nextIndex), outside 0...\(WaterfallLimits.maximumCoordinate)")
        }
        guard WaterfallLimits.isCoordinate(state.contentBottom), state.contentBottom >= grid.scrollStartInset else {
            throw refuse(
                "has its content bottom at \(state.contentBottom), outside \(grid.scrollStartInset)..."
                    + "\(WaterfallLimits.maximumCoordinate)")
        }
        guard state.section.isConsistent(nextIndex: state.nextIndex, contentBottom: state.contentBottom, in: grid)
        else {
            throw refuse(
                "has an inconsistent section \(state.section.index) (start "
                    + "\(state.section.start.map(String.init) ?? "top"), first item \(state.section.firstIndex), "
                    + "next item \(state.nextIndex))")
        }
        // A lane is at its section's items' top, or one row gap below a cell, which ends at most at the content
        // bottom.
        let itemsTop = state.section.itemsTop(in: grid)
        let highest = max(itemsTop, state.contentBottom + grid.rowGap)
        guard state.columnHeights.allSatisfy({ $0 >= itemsTop && $0 <= highest }) else {
            throw refuse("has \(lanes) heights outside \(itemsTop)...\(highest), where its content lies")
        }
        self.grid = grid
        self.state = state
    }

    /// The first column of the window an item of `span` columns goes to next.
    ///
    /// One-column items follow the placement order: the shortest column (or the first in reading order within the
    /// order tolerance of it), or the round robin. Wider items take the window whose tallest column is lowest.
    /// `gridLanes` applies its one rule to every span (``PlacementOrder/gridLanes``).
    public func nextColumn(span: Int = 1) -> Int {
        let heights = state.columnHeights
        switch (grid.placement, span) {
        case (.gridLanes, _):
            return gridLanesColumn(span: span)
        case (.leftToRight, 1), (.rightToLeft, 1):
            return state.placementCursor
        case (.shortestFirst, 1) where grid.orderTolerance == 0:
            // The common case, in one pass: the first column of the smallest height.
            var best = 0
            for column in 1..<heights.count where heights[column] < heights[best] { best = column }
            return best
        case (.shortestFirst, 1):
            let limit = heights.min()! + grid.orderTolerance
            return heights.firstIndex { $0 <= limit }!
        default:
            var best = 0
            var bestTop = Int.max
            for start in 0...(heights.count - span) {
                let top = heights[start..<(start + span)].max()!
                if top < bestTop {
                    best = start
                    bestTop = top
                }
            }
            return best
        }
    }

    /// CSS Grid Lanes (css-grid-3 "Grid Lanes Layout Algorithm", as Chromium's GridLanesRunningPositions does it):
    /// every window of `span` adjacent columns has the top of its tallest column; those at most the order tolerance
    /// below the lowest such top are possible, and the first possible one at or after the auto-placement cursor is
    /// taken, wrapping round to window 0 (where the search also starts when the cursor is past the last window).
    private func gridLanesColumn(span: Int) -> Int {
        let heights = state.columnHeights
        let windowCount = heights.count - span + 1
        func top(_ start: Int) -> Int { span == 1 ? heights[start] : heights[start..<(start + span)].max()! }
        var lowest = Int.max
        for start in 0..<windowCount { lowest = min(lowest, top(start)) }
        let limit = lowest + grid.orderTolerance
        var start = state.placementCursor < windowCount ? state.placementCursor : 0
        // The lowest window is possible, so this ends within one turn.
        while top(start) > limit { start = (start + 1) % windowCount }
        return start
    }

    /// Where an item of this span would go if it were placed now: its first column and its top (horizontally: its
    /// first row and its left edge).
    ///
    /// Lets a caller act on the next item's position (cut a page before it, say) without placing it.
    public func nextPosition(for span: ColumnSpan = .single) -> (column: Int, top: Int) {
        let count = grid.columnCount(for: span)
        let column = nextColumn(span: count)
        return (column, state.columnHeights[column..<(column + count)].max()!)
    }

    /// The container's size so far in device pixels: vertically the full width, and the lowest cell plus the
    /// bottom inset; horizontally the rightmost cell plus the right inset, and the full height.
    public var contentSize: (width: Int, height: Int) {
        switch grid.axis {
        case .vertical: (grid.containerWidth, state.contentBottom + grid.insets.bottom)
        case .horizontal: (state.contentBottom + grid.insets.right, grid.containerHeight!)
        }
    }

    /// The photo slot and photo frame for an image in a column, relative to the cell's content origin.
    ///
    /// The slot is the content width wide and as tall as the aspect fit of the image into
    /// `contentWidth × maximumPhotoHeight`, but no lower than the minimum photo height. The photo is that aspect
    /// fit, centred in the slot (AVMakeRectWithAspectRatioInsideRect); heights round to the nearest device pixel,
    /// centring offsets round down.
    public func photoGeometry(for photoSize: Size, contentWidth: Int) -> (slot: DeviceRect, photo: DeviceRect) {
        Self.fit(
            photoSize, width: contentWidth, maximumHeight: grid.maximumPhotoHeight,
            minimumHeight: grid.minimumPhotoHeight)
    }

    /// Horizontal axis: the photo slot and photo frame for an image in a slot `slotHeight` tall, relative to the
    /// cell's content origin. The exact transpose of ``photoGeometry(for:contentWidth:)``: the slot is as wide as
    /// the aspect fit of the image into `maximumPhotoWidth × slotHeight`, no narrower than the minimum photo
    /// width, and the photo is centred in it.
    public func photoGeometry(for photoSize: Size, slotHeight: Int) -> (slot: DeviceRect, photo: DeviceRect) {
        let (slot, photo) = Self.fit(
            Size(width: photoSize.height, height: photoSize.width), width: slotHeight,
            maximumHeight: grid.maximumPhotoWidth, minimumHeight: grid.minimumPhotoWidth)
        return (slot.transposed, photo.transposed)
    }

    private static func fit(_ photoSize: Size, width contentWidth: Int, maximumHeight: Int?, minimumHeight: Int)
        -> (slot: DeviceRect, photo: DeviceRect)
    {
        let bounds = Rect(
            x: 0, y: 0, width: Double(contentWidth), height: maximumHeight.map(Double.init) ?? .infinity)
        let fitted = aspectFit(photoSize, inside: bounds)
        let photoWidth = min(contentWidth, WaterfallLimits.cappedDeviceLength(fitted.width))
        var photoHeight = WaterfallLimits.cappedDeviceLength(fitted.height)
        if let maximum = maximumHeight { photoHeight = min(photoHeight, maximum) }
        let slotHeight = max(photoHeight, minimumHeight)
        let slot = DeviceRect(x: 0, y: 0, width: contentWidth, height: slotHeight)
        let photo = DeviceRect(
            x: (contentWidth - photoWidth) / 2, y: (slotHeight - photoHeight) / 2, width: photoWidth,
            height: photoHeight)
        return (slot, photo)
    }

    /// Horizontal axis: the height of the photo slot of a cell of this span whose annotation band is
    /// `annotationHeight` CSS pixels tall (the band is clamped to the cell's content height).
    private func slotHeight(span: Int, annotationHeight: Int) -> (slot: Int, annotation: Int, spacing: Int) {
        let content = grid.cellWidth(spanning: span) - 2 * grid.cellPadding
        let annotation = min(annotationHeight, content)
        let spacing = annotation > 0 ? min(grid.annotationSpacing, content - annotation) : 0
        return (content - annotation - spacing, annotation, spacing)
    }

    /// Horizontal axis: the width the content of a cell with this photo and annotation band gets, which is the
    /// width its annotation is laid out at. The pipeline measures the text at this width before placing the item
    /// (vertically the content width does not depend on the photo: ``WaterfallGrid/contentWidth(for:)``).
    public func contentWidth(forPhoto photoSize: Size, annotationHeight: Double, span: ColumnSpan = .single) -> Int {
        switch grid.axis {
        case .vertical:
            return grid.contentWidth(for: span)
        case .horizontal:
            let lengths = slotHeight(
                span: grid.columnCount(for: span), annotationHeight: grid.deviceLengthRoundingUp(annotationHeight))
            return photoGeometry(for: photoSize, slotHeight: lengths.slot).slot.width
        }
    }

    /// Places the next item.
    ///
    /// - Parameter item: The item's photo size, annotation height and span.
    /// - Returns: Its frames in device pixels.
    public mutating func place(_ item: WaterfallItem) -> PlacedItem {
        if grid.axis == .horizontal { return placeHorizontally(item) }
        let span = grid.columnCount(for: item.span)
        let (column, top) = nextPosition(for: item.span)
        let columns = column..<(column + span)
        // Right-to-left, the window's last column in reading order is its leftmost on screen.
        let x = grid.columnX[grid.direction == .leftToRight ? column : column + span - 1]
        let width = grid.cellWidth(spanning: span)
        let contentWidth = width - 2 * grid.cellPadding
        let padding = grid.cellPadding
        let (slot, photo) = photoGeometry(for: item.photoSize, contentWidth: contentWidth)
        let annotationHeight = grid.deviceLengthRoundingUp(item.annotationHeight)
        let annotationTop = top + padding + slot.height + (annotationHeight > 0 ? grid.annotationSpacing : 0)
        let cellHeight = annotationTop + annotationHeight + padding - top

        let placed = PlacedItem(
            index: state.nextIndex,
            column: column,
            columnSpan: span,
            frame: DeviceRect(x: x, y: top, width: width, height: cellHeight),
            photoSlot: DeviceRect(x: x + padding, y: top + padding, width: slot.width, height: slot.height),
            photoFrame: DeviceRect(
                x: x + padding + photo.x, y: top + padding + photo.y, width: photo.width, height: photo.height),
            annotationFrame: DeviceRect(x: x + padding, y: annotationTop, width: contentWidth, height: annotationHeight)
        )
        for index in columns { state.columnHeights[index] = top + cellHeight + grid.rowGap }
        state.contentBottom = max(state.contentBottom, top + cellHeight)
        state.section.include(placed.frame)
        state.nextIndex += 1
        state.placementCursor = placementCursor(after: columns)
        return placed
    }

    /// The horizontal axis: lanes are rows, the scroll position is x. The cell is its rows' height; the photo
    /// takes what the annotation band leaves and its width follows its aspect ratio.
    private mutating func placeHorizontally(_ item: WaterfallItem) -> PlacedItem {
        let span = grid.columnCount(for: item.span)
        let (row, left) = nextPosition(for: item.span)
        let rows = row..<(row + span)
        let y = grid.columnX[row]
        let height = grid.cellWidth(spanning: span)
        let padding = grid.cellPadding
        let lengths = slotHeight(span: span, annotationHeight: grid.deviceLengthRoundingUp(item.annotationHeight))
        let (slot, photo) = photoGeometry(for: item.photoSize, slotHeight: lengths.slot)
        let width = slot.width + 2 * padding

        let placed = PlacedItem(
            index: state.nextIndex,
            column: row,
            columnSpan: span,
            frame: DeviceRect(x: left, y: y, width: width, height: height),
            photoSlot: DeviceRect(x: left + padding, y: y + padding, width: slot.width, height: slot.height),
            photoFrame: DeviceRect(
                x: left + padding + photo.x, y: y + padding + photo.y, width: photo.width, height: photo.height),
            annotationFrame: DeviceRect(
                x: left + padding, y: y + padding + lengths.slot + lengths.spacing, width: slot.width,
                height: lengths.annotation))
        for index in rows { state.columnHeights[index] = left + width + grid.rowGap }
        state.contentBottom = max(state.contentBottom, left + width)
        state.section.include(placed.frame)
        state.nextIndex += 1
        state.placementCursor = placementCursor(after: rows)
        return placed
    }

    /// The round robin, and the grid-lanes search, continue after the window just filled (0 for `shortestFirst`).
    private func placementCursor(after columns: Range<Int>) -> Int {
        let count = grid.columnCount
        switch grid.placement {
        case .shortestFirst: return 0
        // Chromium keeps the window's end line, which may be the column count; past the last window it searches
        // from window 0, so wrapping here gives the same search.
        case .leftToRight, .gridLanes: return columns.upperBound % count
        case .rightToLeft: return (columns.lowerBound - 1 + count) % count
        }
    }

    // MARK: Sections

    /// Starts a section: a full-width break below everything placed so far (CHTCollectionViewWaterfallLayout), with
    /// an optional header band, then the section's start inset; every column starts again at the same height, and a
    /// round robin starts again at its first column.
    ///
    /// If the current section holds items or was itself opened by `beginSection`, it is ended first exactly as
    /// `endSection(footer: 0)` would end it (call ``endSection(footer:)`` yourself to get its frames or give it a
    /// footer). Items placed before any `beginSection` form an implicit first section with no header.
    ///
    /// - Parameter header: The header's height in CSS pixels (its width horizontally), rounded up to a device
    ///   pixel; 0 for none.
    /// - Returns: The header's frame, or `nil` without a header.
    @discardableResult
    public mutating func beginSection(header: Double = 0) -> DeviceRect? {
        if state.section.isOpen(nextIndex: state.nextIndex) { endSection(footer: 0) }
        let headerFrame = state.section.begin(header: header, in: grid, raising: &state.contentBottom)
        startLanes()
        return headerFrame
    }

    /// Ends the current section: its end inset goes below its lowest cell (below its header and start inset when
    /// it has no item), then the footer band; the next section starts right after, with no extra gap.
    ///
    /// - Parameter footer: The footer's height in CSS pixels (its width horizontally), rounded up; 0 for none.
    /// - Returns: The section's frames.
    @discardableResult
    public mutating func endSection(footer: Double = 0) -> SectionFrames {
        let frames = state.section.end(
            footer: footer, nextIndex: state.nextIndex, in: grid, raising: &state.contentBottom)
        startLanes()
        return frames
    }

    /// Every column starts again at the current section's items' top, and a round robin at its first column.
    private mutating func startLanes() {
        let itemsTop = state.section.itemsTop(in: grid)
        for column in state.columnHeights.indices { state.columnHeights[column] = itemsTop }
        state.placementCursor = grid.placement == .rightToLeft ? grid.columnCount - 1 : 0
    }
}
